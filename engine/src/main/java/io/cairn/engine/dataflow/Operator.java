package io.cairn.engine.dataflow;

import io.cairn.engine.row.Schema;
import java.util.List;

/**
 * One operator of a dataflow, instantiated once and run shard by shard: during a tick, worker
 * {@code i} calls {@link #process(int, Rows[])} with the updates for shard {@code i} from each
 * input, and the operator writes its output updates to {@link #out(int)}. Keyed operators declare
 * {@link #exchangeKey(int)} so the engine routes each input update to the worker owning its key.
 * State lives only in arrangements: the operator's own ({@link #arrangements()}), and, read-only,
 * those of the collections it reads (a join side that shares its input's arrangement, see {@code
 * JoinOp}).
 */
public abstract class Operator {
  private final Schema schema;
  private final List<Operator> inputs;
  private final Rows[] out;

  protected Operator(Schema schema, List<Operator> inputs, int shards) {
    this.schema = schema;
    this.inputs = List.copyOf(inputs);
    this.out = new Rows[shards];
    for (int i = 0; i < shards; i++) {
      out[i] = new Rows();
    }
  }

  public Schema schema() {
    return schema;
  }

  public List<Operator> inputs() {
    return inputs;
  }

  /** The output of shard {@code shard} in the current tick. */
  public Rows out(int shard) {
    return out[shard];
  }

  /** Key columns by which input {@code input} must be exchanged, or null when any shard will do. */
  public int[] exchangeKey(int input) {
    return null;
  }

  /**
   * The columns by whose hash this operator's output is sharded, or null when nothing is known:
   * when non-null, every output update on shard {@code s} has {@code row.shardOf(partitioning(),
   * shards) == s}. The exchange skips an input whose producer is partitioned by exactly the
   * input's exchange key (same columns, same order), since routing would leave every update where
   * it is. An operator must not claim a partitioning it does not guarantee: a wrong claim puts a
   * key's updates on two workers.
   */
  public int[] partitioning() {
    return null;
  }

  /** The number of shards it runs on. */
  protected int shards() {
    return out.length;
  }

  /**
   * Told when its dataflow starts (true) or stops (false) hydrating: computed from its inputs'
   * contents in its first tick (a new or recomputed view), or not (its state restored, or after
   * that first tick). A new operator is hydrating.
   */
  public void setHydrating(boolean value) {}

  /** Whether {@link #process} must run in this tick even when no input brings it an update (default: no). */
  public boolean runsWithoutInput() {
    return false;
  }

  /** Processes one shard's inputs for the open tick {@code tick}. */
  public abstract void process(int shard, long tick, Rows[] inputs);

  /**
   * An estimate of the heap the operator holds outside its arrangements (state it can rebuild from
   * them, such as {@link TopKOp}'s heads): 0 by default. Read under the engine lock, between ticks.
   */
  public long memoryBytes() {
    return 0;
  }

  /** The arrangements this operator owns (its state). */
  public List<Arrangement> arrangements() {
    return List.of();
  }

  /** A one-line description for EXPLAIN and errors. */
  public abstract String describe();
}
