package io.cairn.engine.dataflow;

import java.util.List;

/**
 * The output of a view: arranges the view's rows by the view's key (so they can be looked up,
 * read by other views and snapshotted) and passes the tick's changes on to readers.
 */
public final class CollectionOp extends Operator {
  private final Layout layout;
  private final Arrangement arrangement;

  CollectionOp(String name, Operator input, Layout layout, int shards) {
    super(input.schema(), List.of(input), shards);
    this.layout = layout;
    this.arrangement = new Arrangement(name, layout.keySchema(), layout.valSchema(), shards);
  }

  public Layout layout() {
    return layout;
  }

  public Arrangement arrangement() {
    return arrangement;
  }

  @Override
  public int[] exchangeKey(int input) {
    return layout.keyCols();
  }

  /** Its input was routed by the arrangement key (or already sharded by it), and it passes the input on. */
  @Override
  public int[] partitioning() {
    return layout.keyCols();
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    Rows src = in[0];
    arrangement.reserve(shard, src.size());
    for (int i = 0; i < src.size(); i++) {
      arrangement.stageRow(shard, src.row(i), layout, tick, src.diff(i));
    }
    out(shard).addAll(src);
  }

  /** The rows of shard {@code shard} as of the last sealed tick, with multiplicities. */
  public Rows contents(int shard) {
    return Rows.of(arrangement.spine(shard), layout);
  }

  @Override
  public List<Arrangement> arrangements() {
    return List.of(arrangement);
  }

  @Override
  public String describe() {
    return "Arrange " + arrangement.name();
  }
}
