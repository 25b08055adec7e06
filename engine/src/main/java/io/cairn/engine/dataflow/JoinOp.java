package io.cairn.engine.dataflow;

import io.cairn.engine.row.KeySort;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Spine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Inner equi-join of two inputs on key columns; rows with a NULL key never match.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Change. With A, B the inputs as of the previous tick (their <em>traces</em>, by join key)
 *       and dA, dB the tick's changes, the output change is {@code dA⋈B + (A+dA)⋈dB}, computed
 *       key by key: a key only one side changed gives {@code dA⋈B} or {@code A⋈dB}; a key both
 *       sides changed gives {@code (A+dA)⋈(B+dB) − A⋈B} (the same change), with A+dA and B+dB
 *       built by adding the change's rows to the trace's live values of the key, so a pair
 *       present in both the old and the new join (and the new-left ⋈ old-right pairs the first
 *       form emits twice with opposite signs) cancels before any row is built.
 *   <li>Cursors. Each side's change is sorted by key once, as a permutation (an LSD radix sort of
 *       a {@code long[]} when the key is one BIGINT/TIMESTAMP column, else {@link KeySort}), and
 *       one pass walks the union of both sides' changed keys in order; the traces are read through
 *       one {@link Spine.Reader} per side whose per-batch positions only move forward as the keys
 *       ascend. The entries under a key are gathered as (batch, index) and consolidated on the
 *       batch columns ({@link KeyEntries}); no row is built for them: a change row is compared
 *       with a live entry on the batch columns ({@link Batch#entryEquals}), and an output row is
 *       written straight from the change row or the entry's columns. Each output pair costs its
 *       output row and nothing else.
 *   <li>Own or shared trace. A side is <em>shared</em> when its input is a Get of a collection (a
 *       source or a view) whose arrangement is keyed by exactly the side's join key columns, in
 *       order: an upsert source joined on its primary key, a GROUP BY view joined on its group
 *       keys. The join then reads that collection's arrangement (differential dataflow's
 *       arrange/import) and keeps no copy of it. Otherwise the side owns an arrangement named
 *       {@code <name>-left} / {@code <name>-right} (key = join key, val = the whole input row) that
 *       the join stages its input into every tick.
 *   <li>What a shared trace holds when the join reads it. The collection stages its changes when
 *       it runs in the tick, and the runner seals every arrangement only after every dataflow has
 *       run; the join runs after its inputs (catalog order). So the spine the join reads is
 *       exactly the collection as of the previous tick, and the Get's output is the tick's change:
 *       A and dA above. The join never writes it. While the Get hydrates it emits the whole
 *       collection as the change, so in that tick the join takes the shared trace as empty.
 *   <li>Sharding. The collection's arrangement is sharded by the hash of its key ({@link
 *       Row#shard}) and the exchange routes the join's inputs by the hash of the same columns
 *       ({@link Row#shardOf}, the same function), so shard s of a shared trace holds exactly the
 *       keys worker s joins, for any number of workers and after a restore that re-shards; a
 *       shared side's input is therefore already where it belongs and is not exchanged.
 *   <li>Snapshots. A shared side adds nothing to the view's state: the trace is captured and
 *       restored with the collection it belongs to, and a view is restored only together with
 *       every collection it reads, so the restored trace is the one its output was computed
 *       against. A snapshot holding {@code -left}/{@code -right} arrangements for a side that is
 *       now shared (written while sharing was off: {@code Engine.Builder#shareJoinTraces}) restores: arrangements no
 *       dataflow claims are ignored. A snapshot without them, restored where the side owns its
 *       trace, lacks them, and the view is recomputed from its inputs.
 *   <li>Drop. The join owns only its own arrangements. A collection cannot be dropped while a
 *       view reads it, so a shared trace outlives its readers, and dropping the view releases
 *       what the view owns and nothing of its inputs.
 * </ul>
 */
final class JoinOp extends Operator {
  private final Side left;
  private final Side right;
  /** Both keys are one BIGINT/TIMESTAMP column: compared as {@code long}s. */
  private final boolean longKeys;

  /**
   * @param share whether a side may read its input's arrangement (decided here, when the operator is
   *     built); false gives every side its own trace: the oracle of the shared path, and the writer
   *     of snapshots that hold {@code -left}/{@code -right}
   */
  JoinOp(String name, Operator l, Operator r, int[] leftKeys, int[] rightKeys, Schema schema, int shards, boolean share) {
    super(schema, List.of(l, r), shards);
    this.left = Side.of(name + "-left", l, leftKeys, shards, share);
    this.right = Side.of(name + "-right", r, rightKeys, shards, share);
    this.longKeys = leftKeys.length == 1 && isLong(l.schema().type(leftKeys[0])) && isLong(r.schema().type(rightKeys[0]));
  }

  private static boolean isLong(Type t) {
    return t.isLong();
  }

  /** Whether input {@code input} (0 left, 1 right) reads its collection's arrangement instead of owning one. */
  boolean shares(int input) {
    return (input == 0 ? left : right).own == null;
  }

  /**
   * The join key of an own side. A shared side is not exchanged: the Get's output on shard s is
   * the collection's change (or, hydrating, contents) of shard s, already sharded by the hash of
   * these very columns.
   */
  @Override
  public int[] exchangeKey(int input) {
    Side side = input == 0 ? left : right;
    return side.own == null ? null : side.keys;
  }

  /**
   * An output row is a left row followed by a right one, and the left row was on this shard by the
   * hash of its join key (routed by it, or a shared trace arranged by it).
   */
  @Override
  public int[] partitioning() {
    return left.keys.clone();
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    Delta dl = delta(in[0], left.keys);
    Delta dr = delta(in[1], right.keys);
    Rows out = out(shard);
    KeyEntries entries = new KeyEntries();
    Matches ma = new Matches(); // A's (and A + dA's) values under the key
    Matches mb = new Matches(); // B's (and B + dB's) values under the key
    Spine.Reader rr = dl.n == 0 ? null : right.reader(shard); // B: read for dA's keys
    Spine.Reader lr = dr.n == 0 ? null : left.reader(shard); // A: read for dB's keys
    // one pass over the union of the changed keys of both sides, in key order
    int a = 0;
    int c = 0;
    while (a < dl.n || c < dr.n) {
      int cmp = a == dl.n ? 1 : c == dr.n ? -1 : compareKeys(dl, dl.order[a], dr, dr.order[c]);
      int b = a;
      int d = c;
      if (cmp <= 0) {
        b = a + 1;
        while (b < dl.n && sameKey(dl, dl.order[a], dl.order[b])) {
          b++;
        }
      }
      if (cmp >= 0) {
        d = c + 1;
        while (d < dr.n && sameKey(dr, dr.order[c], dr.order[d])) {
          d++;
        }
      }
      if (b > a && d > c) {
        // both sides changed the key: (A + dA) ⋈ (B + dB) − A ⋈ B
        ma.clear(left);
        if (lr != null) {
          lookup(lr, dr, dr.order[c], entries, ma);
        }
        int na = ma.snapshot();
        for (int x = a; x < b; x++) {
          ma.merge(dl.rows.row(dl.order[x]), dl.rows.diff(dl.order[x]));
        }
        mb.clear(right);
        if (rr != null) {
          lookup(rr, dl, dl.order[a], entries, mb);
        }
        int nb = mb.snapshot();
        for (int y = c; y < d; y++) {
          mb.merge(dr.rows.row(dr.order[y]), dr.rows.diff(dr.order[y]));
        }
        for (int k = 0; k < ma.size(); k++) {
          for (int m = 0; m < mb.size(); m++) {
            // a pair of entries in both the old and the new join cancels here, before any row is built
            long diff = ma.diff(k) * mb.diff(m) - (k < na && m < nb ? ma.oldDiff(k) * mb.oldDiff(m) : 0);
            if (diff != 0) {
              emit(out, ma.row(k), ma.batch(k), ma.index(k), mb.row(m), mb.batch(m), mb.index(m), diff);
            }
          }
        }
      } else if (b > a) {
        // dA ⋈ B
        if (rr != null) {
          mb.clear(right);
          lookup(rr, dl, dl.order[a], entries, mb);
          for (int m = 0; m < mb.size(); m++) {
            for (int x = a; x < b; x++) {
              int i = dl.order[x];
              emit(out, dl.rows.row(i), null, 0, mb.row(m), mb.batch(m), mb.index(m), dl.rows.diff(i) * mb.diff(m));
            }
          }
        }
      } else if (lr != null) {
        // A ⋈ dB
        ma.clear(left);
        lookup(lr, dr, dr.order[c], entries, ma);
        for (int k = 0; k < ma.size(); k++) {
          for (int y = c; y < d; y++) {
            int i = dr.order[y];
            emit(out, ma.row(k), ma.batch(k), ma.index(k), dr.rows.row(i), null, 0, ma.diff(k) * dr.rows.diff(i));
          }
        }
      }
      a = b;
      c = d;
    }
    left.stage(shard, tick, dl);
    right.stage(shard, tick, dr);
  }

  /**
   * Adds the output row of a pair to {@code out}: each half is a row of the tick's change ({@code
   * lRow}/{@code rRow} non-null) or a trace entry {@code (batch, index)}, copied straight into the
   * output row (no row per trace entry).
   */
  private void emit(Rows out, Row lRow, Batch lBatch, int lI, Row rRow, Batch rBatch, int rI, long diff) {
    if (diff == 0) {
      return;
    }
    Object[] v = new Object[left.width + right.width];
    if (lRow != null) {
      lRow.copyInto(v, 0);
    } else {
      left.copyInto(v, 0, lBatch, lI);
    }
    if (rRow != null) {
      rRow.copyInto(v, left.width);
    } else {
      right.copyInto(v, left.width, rBatch, rI);
    }
    out.add(Row.wrap(v), diff);
  }

  // ------------------------------------------------------------------ the tick's change, sorted

  /** One side's change in the tick: the indices of its rows with a non-NULL key, in key order. */
  private record Delta(Rows rows, int[] order, int n, long[] longKeys, Row[] keys) {}

  /** Below this many rows an insertion sort beats the radix sort's counting arrays. */
  private static final int RADIX_MIN = 128;

  private Delta delta(Rows rows, int[] keyCols) {
    int size = rows.size();
    int[] idx = new int[size];
    int n = 0;
    if (longKeys) {
      long[] keys = new long[size];
      int col = keyCols[0];
      for (int i = 0; i < size; i++) {
        Object v = rows.row(i).get(col);
        if (v != null) {
          keys[i] = (Long) v;
          idx[n++] = i;
        }
      }
      int[] order;
      if (n < RADIX_MIN) {
        for (int x = 1; x < n; x++) { // stable insertion sort
          int v = idx[x];
          int y = x - 1;
          while (y >= 0 && keys[idx[y]] > keys[v]) {
            idx[y + 1] = idx[y];
            y--;
          }
          idx[y + 1] = v;
        }
        order = idx;
      } else {
        order = KeySort.radixPasses(keys, false, idx, new int[n], n);
      }
      return new Delta(rows, order, n, keys, null);
    }
    Row[] keys = new Row[size];
    Row[] dense = new Row[size];
    for (int i = 0; i < size; i++) {
      Row k = rows.row(i).select(keyCols);
      if (!Keyed.hasNull(k)) {
        keys[i] = k;
        dense[n] = k;
        idx[n++] = i;
      }
    }
    int[] perm = KeySort.byKey(dense, n);
    int[] order = new int[n];
    for (int x = 0; x < n; x++) {
      order[x] = idx[perm[x]];
    }
    return new Delta(rows, order, n, null, keys);
  }

  private boolean sameKey(Delta d, int i, int j) {
    return longKeys ? d.longKeys[i] == d.longKeys[j] : d.keys[i].equals(d.keys[j]);
  }

  private int compareKeys(Delta a, int i, Delta b, int j) {
    return longKeys ? Long.compare(a.longKeys[i], b.longKeys[j]) : a.keys[i].compareTo(b.keys[j]);
  }

  /** Appends the live entries of a trace under the key of row {@code i} of {@code d} to {@code out} (no row built). */
  private void lookup(Spine.Reader reader, Delta d, int i, KeyEntries entries, Matches out) {
    entries.clear();
    if (longKeys) {
      reader.forEachLong(d.longKeys[i], entries);
    } else {
      reader.forEach(d.keys[i], entries);
    }
    entries.consolidate();
    for (int k = 0; k < entries.size(); k++) {
      out.add(null, entries.batch(k), entries.index(k), entries.diff(k));
    }
  }

  /**
   * The values of one side that a key matches, with their counts: rows of the tick's change, or
   * live trace entries (batch, index) not built as rows. Consolidating them is only an
   * optimisation (fewer output rows that cancel): the output is a correct change either way.
   */
  private static final class Matches {
    private static final int MERGE_MAX = 32;
    private static final int[] NO_COLUMNS = new int[0];
    private Side side;
    private Row[] rows = new Row[8];
    private Batch[] batches = new Batch[8];
    private int[] index = new int[8];
    private long[] diffs = new long[8];
    private long[] oldDiffs = new long[8];
    private int size;

    /** Empties the matches, which are values of {@code of} from now on. */
    void clear(Side of) {
      for (int k = 0; k < size; k++) {
        rows[k] = null;
        batches[k] = null;
      }
      size = 0;
      side = of;
    }

    int size() {
      return size;
    }

    /** Match {@code k} as a row, or null when it is trace entry ({@link #batch}, {@link #index}). */
    Row row(int k) {
      return rows[k];
    }

    Batch batch(int k) {
      return batches[k];
    }

    int index(int k) {
      return index[k];
    }

    long diff(int k) {
      return diffs[k];
    }

    void add(Row row, Batch batch, int i, long diff) {
      if (size == diffs.length) {
        rows = Arrays.copyOf(rows, size * 2);
        batches = Arrays.copyOf(batches, size * 2);
        index = Arrays.copyOf(index, size * 2);
        diffs = Arrays.copyOf(diffs, size * 2);
      }
      rows[size] = row;
      batches[size] = batch;
      index[size] = i;
      diffs[size] = diff;
      size++;
    }

    /** Remembers the current diffs (see {@link #oldDiff}); returns the current size. */
    int snapshot() {
      if (oldDiffs.length < size) {
        oldDiffs = new long[diffs.length];
      }
      System.arraycopy(diffs, 0, oldDiffs, 0, size);
      return size;
    }

    /** The diff of match {@code k} at the last {@link #snapshot} ({@code k} below the size then). */
    long oldDiff(int k) {
      return oldDiffs[k];
    }

    /**
     * Adds {@code diff} to an equal value when there is one among the first few, else appends. A
     * match merged into keeps its index: it is the same value with a new count. A trace entry is
     * compared on its value columns only: its key is the key looked up, which is {@code row}'s.
     */
    void merge(Row row, long diff) {
      for (int k = 0; k < size && k < MERGE_MAX; k++) {
        if (rows[k] != null ? rows[k].equals(row) : batches[k].entryEquals(index[k], row, NO_COLUMNS, side.valPos)) {
          diffs[k] += diff;
          return;
        }
      }
      add(row, null, 0, diff);
    }
  }

  // ------------------------------------------------------------------ traces

  /** One input: its key columns and its trace, own or shared. */
  private static final class Side {
    final int[] keys;
    /** The arrangement this operator owns for the side, or null when the side is shared. */
    final Arrangement own;
    /** The Get of the collection whose arrangement is shared, or null when the side owns its trace. */
    final GetOp get;
    final Arrangement trace;
    final int width;
    /** Where key column c of the trace goes in the side's row (none when the val is the whole row). */
    final int[] keyPos;
    /** Where value column c of the trace goes in the side's row. */
    final int[] valPos;
    /** Own trace: how an input row is staged (key = join key, val = the whole row). */
    final Layout staging;

    private Side(int[] keys, Arrangement own, GetOp get, Arrangement trace, int width, int[] keyPos, int[] valPos, Layout staging) {
      this.keys = keys;
      this.own = own;
      this.get = get;
      this.trace = trace;
      this.width = width;
      this.keyPos = keyPos;
      this.valPos = valPos;
      this.staging = staging;
    }

    static Side of(String name, Operator in, int[] keys, int shards, boolean share) {
      Schema schema = in.schema();
      if (share && in instanceof GetOp g && Arrays.equals(g.upstream().layout().keyCols(), keys)) {
        Layout l = g.upstream().layout();
        return new Side(keys.clone(), null, g, g.upstream().arrangement(), schema.size(), l.keyCols(), l.valCols(), null);
      }
      int[] all = new int[schema.size()];
      for (int c = 0; c < all.length; c++) {
        all[c] = c;
      }
      Arrangement a = new Arrangement(name, schema.select(keys), schema, shards);
      return new Side(keys.clone(), a, null, a, schema.size(), new int[0], all, new Layout(keys.clone(), all, schema, false));
    }

    /** A reader of the trace as of the previous tick, or null when it is to be taken as empty. */
    Spine.Reader reader(int shard) {
      if (get != null && get.hydrating()) {
        return null;
      }
      Spine s = trace.spine(shard);
      return s.batchCount() == 0 ? null : s.reader();
    }

    /** Writes the side's input row stored as entry {@code i} of {@code b} into {@code v[off, off + width)}. */
    void copyInto(Object[] v, int off, Batch b, int i) {
      for (int c = 0; c < keyPos.length; c++) {
        v[off + keyPos[c]] = b.keyColumn(c).get(i);
      }
      for (int c = 0; c < valPos.length; c++) {
        v[off + valPos[c]] = b.valColumn(c).get(i);
      }
    }

    void stage(int shard, long tick, Delta d) {
      if (own == null) {
        return;
      }
      for (int x = 0; x < d.n; x++) {
        int i = d.order[x];
        own.stageRow(shard, d.rows.row(i), staging, tick, d.rows.diff(i));
      }
    }
  }

  @Override
  public List<Arrangement> arrangements() {
    List<Arrangement> owned = new ArrayList<>(2);
    if (left.own != null) {
      owned.add(left.own);
    }
    if (right.own != null) {
      owned.add(right.own);
    }
    return owned;
  }

  @Override
  public String describe() {
    return "Join" + (left.own == null ? " (left shares " + left.trace.name() + ")" : "")
        + (right.own == null ? " (right shares " + right.trace.name() + ")" : "");
  }
}
