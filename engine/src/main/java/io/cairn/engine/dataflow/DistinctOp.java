package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.Values;
import java.util.List;

/** Each row once while its count is positive; arranged by row (val empty, count in the diff). */
final class DistinctOp extends Operator {
  private final int[] all;
  private final Arrangement counts;

  DistinctOp(String name, Operator input, int shards) {
    super(input.schema(), List.of(input), shards);
    this.all = new int[input.schema().size()];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    this.counts = new Arrangement(name + "-counts", input.schema(), io.cairn.engine.row.Schema.EMPTY, shards);
  }

  @Override
  public int[] exchangeKey(int input) {
    return all;
  }

  /** Emits only rows of its own shard, which it received routed by the whole row. */
  @Override
  public int[] partitioning() {
    return all;
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    List<Keyed> d = Keyed.sort(in[0], all, false);
    Spine.Reader reader = counts.spine(shard).reader();
    Values vals = new Values();
    int i = 0;
    while (i < d.size()) {
      Row row = d.get(i).key();
      long delta = 0;
      while (i < d.size() && d.get(i).key().equals(row)) {
        delta += d.get(i).diff();
        i++;
      }
      if (delta == 0) {
        continue;
      }
      vals.clear();
      reader.values(row, vals);
      long old = 0;
      for (int v = 0; v < vals.size(); v++) {
        old += vals.diff(v);
      }
      long now = old + delta;
      if (old > 0 && now <= 0) {
        out(shard).add(row, -1);
      } else if (old <= 0 && now > 0) {
        out(shard).add(row, 1);
      }
      counts.stage(shard, row, Row.EMPTY, tick, delta);
    }
  }

  @Override
  public List<Arrangement> arrangements() {
    return List.of(counts);
  }

  @Override
  public String describe() {
    return "Distinct";
  }
}
