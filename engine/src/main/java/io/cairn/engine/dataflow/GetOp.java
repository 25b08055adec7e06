package io.cairn.engine.dataflow;

import java.util.List;

/**
 * Reads another collection (a source or a view). In its dataflow's first tick it is
 * <em>hydrating</em>: it emits the collection's whole contents as of the last sealed tick plus the
 * tick's changes, so a view created late sees everything its inputs hold; afterwards only changes.
 */
final class GetOp extends Operator {
  private final String name;
  private final Collection upstream;
  private volatile boolean hydrating = true;

  GetOp(String name, Collection upstream, int shards) {
    super(upstream.schema(), List.of(), shards);
    this.name = name;
    this.upstream = upstream;
  }

  @Override
  public void setHydrating(boolean value) {
    hydrating = value;
  }

  boolean hydrating() {
    return hydrating;
  }

  /** The collection read. */
  Collection upstream() {
    return upstream;
  }

  /** The collection's rows and changes on shard s are those whose arrangement key hashes to s. */
  @Override
  public int[] partitioning() {
    return upstream.layout().keyCols();
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    if (hydrating) {
      out(shard).addAll(upstream.contents(shard));
    }
    out(shard).addAll(upstream.changes(shard));
  }

  @Override
  public String describe() {
    return "Get " + name;
  }
}
