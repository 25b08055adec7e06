package io.cairn.engine.dataflow;

import io.cairn.engine.plan.SortKey;
import io.cairn.engine.row.Row;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.Values;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Top-k per group ({@link io.cairn.engine.plan.Plan.TopK}): ORDER BY … LIMIT inside a view,
 * DISTINCT ON, and {@code ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)} (each output row then
 * carries its number in the group: a row whose number changes is retracted with the old number and
 * inserted with the new one; a bound on the number, {@code rn <= k}, is the limit).
 *
 * <p>State: one arrangement, group key → every input row of the group with its count, so a
 * retraction of a row in the window finds the row that moves up. For each group touched in a
 * tick the operator orders the group's old rows, applies the tick's updates, orders again, and
 * emits the difference between the old window and the new one (rows that stay emit nothing). The
 * order is the ORDER BY keys, then the whole row: a total order, so the window is a function of
 * the group's contents, whatever the order in which rows arrived or the number of workers.
 *
 * <p>Cost: a touched group is re-sorted, O(g log g) for a group of g rows; a view's top-k without
 * groups is one group, so each tick that changes its input sorts the whole input. Fine for the
 * thousands of rows of a TPC-H result; a top-k over millions of changing rows wants a hierarchy of
 * partial top-ks (as Materialize builds), which this is not. Numbered rows without a bound on
 * the number renumber every row after a change, as ROW_NUMBER must: O(g) output per change.
 */
final class TopKOp extends Operator {
  private final int[] groupBy;
  private final Comparator<Row> order;
  private final long offset;
  private final long limit;
  private final Arrangement rows;
  private final boolean numbered;

  TopKOp(String name, Operator input, int[] groupBy, List<SortKey> order, long offset, long limit, io.cairn.engine.row.Schema schema,
      boolean numbered, int shards) {
    super(schema, List.of(input), shards);
    this.numbered = numbered;
    this.groupBy = groupBy.clone();
    this.order = SortKey.total(order);
    this.offset = offset;
    this.limit = limit;
    this.rows = new Arrangement(name + "-rows", input.schema().select(groupBy), input.schema(), shards);
  }

  @Override
  public int[] exchangeKey(int input) {
    return groupBy;
  }

  /** Output rows are input rows of the shard's groups, routed by the group columns. */
  @Override
  public int[] partitioning() {
    return groupBy.clone();
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    List<Keyed> d = Keyed.sort(in[0], groupBy, false);
    if (d.isEmpty()) {
      return;
    }
    Spine.Reader reader = rows.spine(shard).reader();
    Values vals = new Values();
    Rows out = out(shard);
    int i = 0;
    while (i < d.size()) {
      Row key = d.get(i).key();
      int start = i;
      while (i < d.size() && d.get(i).key().equals(key)) {
        i++;
      }
      vals.clear();
      reader.values(key, vals);
      vals.consolidate();
      TreeMap<Row, Long> group = new TreeMap<>(order);
      for (int v = 0; v < vals.size(); v++) {
        group.put(vals.val(v), vals.diff(v));
      }
      Map<Row, Long> change = new HashMap<>();
      window(group, change, -1);
      for (int j = start; j < i; j++) {
        Keyed u = d.get(j);
        if (u.diff() == 0) {
          continue;
        }
        group.merge(u.row(), u.diff(), (a, b) -> a + b == 0 ? null : a + b);
        rows.stage(shard, key, u.row(), tick, u.diff());
      }
      window(group, change, 1);
      for (Map.Entry<Row, Long> c : change.entrySet()) {
        if (c.getValue() != 0) {
          out.add(c.getKey(), c.getValue());
        }
      }
    }
  }

  /**
   * Adds {@code sign} × each row's count within the window of {@code group} (in order) to {@code
   * change}; numbered, each copy of a row as the row with its position appended.
   */
  private void window(TreeMap<Row, Long> group, Map<Row, Long> change, int sign) {
    long skip = offset;
    long left = limit;
    long position = 0;
    for (Map.Entry<Row, Long> e : group.entrySet()) {
      if (left == 0) {
        break;
      }
      long n = e.getValue();
      if (n <= 0) {
        continue;
      }
      if (numbered) { // no offset with numbers (the plan refuses one)
        for (long c = 0; c < n && left > 0; c++, left--) {
          change.merge(numbered(e.getKey(), ++position), (long) sign, Long::sum);
        }
        continue;
      }
      long skipped = Math.min(skip, n);
      skip -= skipped;
      long taken = Math.min(left, n - skipped);
      if (taken > 0) {
        left -= taken;
        change.merge(e.getKey(), sign * taken, Long::sum);
      }
    }
  }

  private static Row numbered(Row r, long position) {
    Object[] v = java.util.Arrays.copyOf(r.toArray(), r.size() + 1);
    v[r.size()] = position;
    return Row.wrap(v);
  }

  @Override
  public List<Arrangement> arrangements() {
    return List.of(rows);
  }

  @Override
  public String describe() {
    return "TopK";
  }
}
