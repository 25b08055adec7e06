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
 * <p>Cost: a group of g rows touched in a tick is read and ordered once, O(g log g). A group
 * that is large against the window (at least {@link #cacheMinGroup} rows: 1,024, or 8 windows)
 * then keeps its <em>head</em> in memory: the group's first rows in order, every row of the
 * group up to a frontier row (see {@link Head}). A later tick's update after the frontier
 * cannot enter the window and only goes to the arrangement; one before it goes into the head
 * too. The windows before and after the tick are read from the head, so a tick costs O(u log
 * h) for u updates and a head of h rows (h ≤ 4 windows + 32), not a read of the group. Only when
 * retractions leave fewer rows before the frontier than the window holds is the group read
 * again, and its head rebuilt by a bounded selection, O(g log h). A tick that brings a group
 * that many rows at once (a view's first) selects the head from them the same way. A view's
 * top-k without groups is one group: a "top 10 customers" over a million of them no longer
 * re-sorts the million at every tick.
 *
 * <p>The heads are the operator's, per shard, in memory only, and always equal to the first
 * rows of the group in the arrangement: every update of the arrangement passes through {@link
 * #process}, which stages it and applies it to the head in the same step. A restore loads the
 * arrangement into a new engine's empty spines, whose operators have no heads yet; a failed
 * dataflow (whose staged updates are discarded) is never processed again. A window of more than
 * {@link #MAX_CACHED_WINDOW} positions (numbered rows without a bound, say) keeps no heads.
 * Memory: at most one head per group that had at least {@code cacheMinGroup} rows when last
 * read, each of at most {@code 2 × headRows} rows (under half of such a group); a head is dropped
 * when a read finds its group small.
 *
 * <p>Numbered rows without a bound on the number renumber every row after a change, as
 * ROW_NUMBER must: O(g) output per change.
 */
final class TopKOp extends Operator {
  private final int[] groupBy;
  private final Comparator<Row> order;
  private final long offset;
  private final long limit;
  private final Arrangement rows;
  private final boolean numbered;
  /** The window's extent: offset + limit positions (saturated). */
  private final long extent;
  /** Rows a rebuilt head holds: twice the window and some; 0 when heads are not kept. */
  private final int headRows;
  /** A group of at least this many rows keeps its head between ticks. */
  private final int cacheMinGroup;
  /** Per shard: the heads of the shard's large groups, by group key. */
  private final Map<Row, Head>[] heads;

  /** A window longer than this keeps no heads (the head would hold most of the group). */
  static final long MAX_CACHED_WINDOW = 10_000;
  /** Group-ticks served from a kept head, without reading the group (for tests: the path must be reached). */
  static final java.util.concurrent.atomic.LongAdder HEAD_HITS = new java.util.concurrent.atomic.LongAdder();
  /** Heads that ran short of the window (retractions before the frontier) and were read again. */
  static final java.util.concurrent.atomic.LongAdder HEAD_REFILLS = new java.util.concurrent.atomic.LongAdder();

  TopKOp(String name, Operator input, int[] groupBy, List<SortKey> order, long offset, long limit, io.cairn.engine.row.Schema schema,
      boolean numbered, int shards) {
    super(schema, List.of(input), shards);
    this.numbered = numbered;
    this.groupBy = groupBy.clone();
    this.order = SortKey.total(order);
    this.offset = offset;
    this.limit = limit;
    this.rows = new Arrangement(name + "-rows", input.schema().select(groupBy), input.schema(), shards);
    this.extent = offset + limit < 0 ? Long.MAX_VALUE : offset + limit;
    this.headRows = extent <= MAX_CACHED_WINDOW ? (int) (2 * extent + 16) : 0;
    this.cacheMinGroup = (int) Math.max(1024, 8 * Math.min(extent, MAX_CACHED_WINDOW));
    @SuppressWarnings("unchecked")
    Map<Row, Head>[] h = new Map[shards];
    for (int i = 0; i < shards; i++) {
      h[i] = new HashMap<>();
    }
    this.heads = h;
  }

  /**
   * The first rows of a group in the operator's order: every row of the group (with its count, as
   * the arrangement holds it) that is at most {@link #frontier}, or every row of the group when
   * the frontier is null. A row after the frontier is not here, whatever its count.
   */
  private static final class Head {
    final TreeMap<Row, Long> entries;
    Row frontier;
    /** The sum of the positive counts in {@link #entries}. */
    long positive;
    /** Whether the group had at least {@link #cacheMinGroup} rows when it was read: its head is kept. */
    final boolean large;

    Head(TreeMap<Row, Long> entries, Row frontier, boolean large) {
      this.entries = entries;
      this.frontier = frontier;
      this.large = large;
      for (long n : entries.values()) {
        positive += Math.max(n, 0);
      }
    }

    /** Whether the group's first {@code extent} positions are all in the head. */
    boolean covers(long extent) {
      return frontier == null || positive >= extent;
    }

    /** Applies an update of the group: kept only when it is not after the frontier. */
    void apply(Row row, long diff, Comparator<Row> order) {
      if (frontier != null && order.compare(row, frontier) > 0) {
        return;
      }
      Long before = entries.get(row);
      long b = before == null ? 0 : before;
      long a = b + diff;
      positive += Math.max(a, 0) - Math.max(b, 0);
      if (a == 0) {
        entries.remove(row);
      } else {
        entries.put(row, a);
      }
    }

    /** Drops the rows after the first {@code keep} and moves the frontier to the last row kept. */
    void trim(int keep) {
      while (entries.size() > keep) {
        Map.Entry<Row, Long> last = entries.pollLastEntry();
        positive -= Math.max(last.getValue(), 0);
        frontier = entries.lastKey();
      }
    }
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
    Map<Row, Head> kept = heads[shard];
    int i = 0;
    while (i < d.size()) {
      Row key = d.get(i).key();
      int start = i;
      while (i < d.size() && d.get(i).key().equals(key)) {
        i++;
      }
      Head head = kept.get(key);
      if (head == null || !head.covers(extent)) {
        if (head != null) {
          HEAD_REFILLS.increment();
        }
        head = read(reader, key, vals, null, 0, 0);
      } else {
        HEAD_HITS.increment();
      }
      Map<Row, Long> change = new HashMap<>();
      window(head.entries, change, -1);
      // a small group that gets a large group's worth of rows at once (a view's first tick): selected, not sorted whole
      boolean bulk = !head.large && headRows > 0 && i - start >= cacheMinGroup;
      for (int j = start; j < i; j++) {
        Keyed u = d.get(j);
        if (u.diff() != 0) {
          if (!bulk) {
            head.apply(u.row(), u.diff(), order);
          }
          rows.stage(shard, key, u.row(), tick, u.diff());
        }
      }
      if (bulk) {
        head = read(reader, key, vals, d, start, i);
      } else if (!head.covers(extent)) { // retractions emptied the head before the window's end: read the group again
        if (head.large) {
          HEAD_REFILLS.increment();
        }
        head = read(reader, key, vals, d, start, i);
      }
      window(head.entries, change, 1);
      for (Map.Entry<Row, Long> c : change.entrySet()) {
        if (c.getValue() != 0) {
          out.add(c.getKey(), c.getValue());
        }
      }
      keep(kept, key, head);
    }
  }

  /**
   * Reads the group of {@code key} as sealed, plus the updates {@code d[from, to)} when given
   * (this tick's, already staged), into a head: the whole group when it has fewer than {@link
   * #cacheMinGroup} rows or heads are not kept, else its first {@link #headRows} rows by a bounded
   * selection (a head that is kept).
   */
  private Head read(Spine.Reader reader, Row key, Values vals, List<Keyed> d, int from, int to) {
    vals.clear();
    reader.values(key, vals);
    if (d != null) {
      for (int j = from; j < to; j++) {
        vals.add(d.get(j).row(), d.get(j).diff());
      }
    }
    // not consolidated: the spine's batches may hold a row more than once; the selection works on
    // the entries, and every entry at or before the frontier is summed into the head
    int n = vals.size();
    if (headRows == 0 || n < cacheMinGroup) {
      return new Head(merged(vals, null), null, false);
    }
    // the first headRows entries: a max-heap of the best seen so far, its root the worst of them
    java.util.PriorityQueue<Integer> best = new java.util.PriorityQueue<>(headRows + 1,
        (a, b) -> order.compare(vals.val(b), vals.val(a)));
    for (int v = 0; v < n; v++) {
      if (best.size() < headRows) {
        best.add(v);
      } else if (order.compare(vals.val(v), vals.val(best.peek())) < 0) {
        best.poll();
        best.add(v);
      }
    }
    Row frontier = vals.val(best.peek());
    Head h = new Head(merged(vals, frontier), frontier, true);
    // counts that sum to nothing or less (a row retracted in one batch, a transient state) may leave it short of the window
    return h.covers(extent) ? h : new Head(merged(vals, null), null, false);
  }

  /** The entries of {@code vals} at or before {@code frontier} (all when null), equal rows summed, zero sums dropped. */
  private TreeMap<Row, Long> merged(Values vals, Row frontier) {
    TreeMap<Row, Long> out = new TreeMap<>(order);
    for (int v = 0; v < vals.size(); v++) {
      if (frontier == null || order.compare(vals.val(v), frontier) <= 0) {
        out.merge(vals.val(v), vals.diff(v), (x, y) -> x + y == 0 ? null : x + y);
      }
    }
    return out;
  }

  /** Keeps the head of a large group for the next tick (trimmed back when it has doubled), or forgets another. */
  private void keep(Map<Row, Head> kept, Row key, Head head) {
    if (!head.large) {
      kept.remove(key);
      return;
    }
    if (head.entries.size() > 2 * headRows) {
      head.trim(headRows);
    }
    kept.put(key, head);
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

  /**
   * The heads kept: per head its map entry, tree and rows ({@link Row#heapBytes}, an estimate; the
   * rows are also in the arrangement, as columns, so this is memory beyond the state's).
   */
  @Override
  public long memoryBytes() {
    long b = 0;
    for (Map<Row, Head> kept : heads) {
      for (Map.Entry<Row, Head> e : kept.entrySet()) {
        b += 32 + e.getKey().heapBytes() + 64; // the map's entry, the key, the head and its tree
        for (Row r : e.getValue().entries.keySet()) {
          b += 40 + 16 + r.heapBytes(); // the tree's entry, the count, the row
        }
      }
    }
    return b;
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
