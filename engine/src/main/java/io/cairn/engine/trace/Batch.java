package io.cairn.engine.trace;

import io.cairn.engine.row.KeySort;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * An immutable, consolidated set of updates sorted by (key, val, time), stored column-wise: one
 * {@link ColumnVector} per key and value column, plus {@code long[]} times and diffs. No two
 * entries share (key, val, time) and no diff is zero.
 *
 * <p>Every batch has an {@link #id()}: a new batch gets a random one; a batch loaded from a
 * snapshot keeps the id it was written under, which is what lets a later snapshot reference the
 * already uploaded file instead of uploading it again.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Sorted and consolidated, always: entries are in strictly increasing (key, val, time)
 *       order with non-zero diffs, whichever way the batch was made: the seal of a tick ({@link
 *       #sortAndConsolidate}, {@link #fromUpdates}), a {@link SortedBuilder} fed in order (equal
 *       neighbours are consolidated into one), a {@link Merger} (the spine's merges, and {@link
 *       #mergeAll}), or columns read back from storage ({@link #fromColumns}, which verifies the
 *       order and refuses what breaks it). Merges and the galloping seeks ({@link #seekKey},
 *       {@link #seekLongKey}) rely on it.
 *   <li>Immutable and shared without copies: the arrays a batch is built from become its own
 *       (copied only to trim them when more than an eighth is unused), and the accessors that return arrays ({@link #times()}, {@link #diffs()},
 *       {@link #longColumns()}) hand out those arrays, which nobody may modify. So a batch is
 *       safe to read from any thread, and a snapshot uploads the very batches the engine keeps
 *       reading.
 *   <li>Columnar: one {@link ColumnVector} per key and value column plus {@code long[]} times and
 *       diffs. When every key and value column is BIGINT/TIMESTAMP without NULLs, the columns are
 *       also exposed as {@code long[]}s ({@link #longColumns()}), which a merge compares as
 *       primitive keys instead of rows; the seal likewise sorts such columns by radix passes.
 *   <li>Identity: a batch made here (seal, builder, merge) gets a fresh random id; {@link
 *       #withId} gives the same contents another id (a persisted batch's when it is loaded, the
 *       id of a snapshot's group of batches). An id never names two different contents.
 *   <li>Constant columns: a times or diffs column whose entries are all equal is not stored: the
 *       batch keeps the one value ({@link #constantTime()}, {@link #constantDiff()}) and the
 *       array is null ({@link #timesOrNull()}, {@link #diffsOrNull()}). That is the common case
 *       and saves 16 of the 32 bytes of a (BIGINT, BIGINT) entry: a sealed tick has one time, a
 *       compacted batch has its times advanced to one {@code since}, and an upsert state or a
 *       set of distinct rows has every diff 1. Every batch is built through the one constructor
 *       that detects it, so a reader asks {@link #time(int)} and {@link #diff(int)} and never
 *       sees the difference.
 *   <li>Bounds: {@link #description()} ({@code lower}, {@code upper}, {@code since}) is carried
 *       along, not checked against the times here; whoever builds the batch (the seal, a merge)
 *       chooses it.
 * </ul>
 */
public final class Batch {
  private final String id;
  private final Schema keySchema;
  private final Schema valSchema;
  private final Description description;
  private final ColumnVector[] keys;
  private final ColumnVector[] vals;
  /** The times (in one array or chunked, like a merge's columns), or null when every entry's time is {@link #time0}. */
  private final ColumnVector.Longs times;
  private final long time0;
  /** The diffs (in one array or chunked), or null when every entry's diff is {@link #diff0}. */
  private final ColumnVector.Longs diffs;
  private final long diff0;
  private final int size;
  /**
   * The key columns then the value columns as {@code long[]}s when every one is BIGINT/TIMESTAMP
   * without NULLs held in one array; else null (a chunked column, see {@link ColumnVector.Longs},
   * is compared through the column).
   */
  private final long[][] longCols;
  /**
   * The first key column as a {@code long[]} when it is BIGINT/TIMESTAMP without NULLs (whatever the
   * other columns are), else null: a comparison of keys that are not all numbers (an id, then text)
   * is decided by it almost every time.
   */
  private final long[] key0;
  /**
   * The key columns then the value columns when every one is BIGINT/TIMESTAMP without NULLs, in one
   * array or chunked (what {@link #longVectors()} gives); else null. The comparisons of a chunked
   * batch (a large merge's output, a large loaded one) read it rather than the columns one by one.
   */
  private final ColumnVector.Longs[] longVecs;

  private Batch(
      String id,
      Schema keySchema,
      Schema valSchema,
      Description description,
      ColumnVector[] keys,
      ColumnVector[] vals,
      long[] times,
      long[] diffs,
      int size) {
    this(id, keySchema, valSchema, description, keys, vals, allEqual(times, size) ? null : column(times, size),
        size == 0 ? 0 : times[0], allEqual(diffs, size) ? null : column(diffs, size), size == 0 ? 0 : diffs[0], size);
  }

  /** A times or diffs array as a column of {@code n} values (null stays null). */
  private static ColumnVector.Longs column(long[] a, int n) {
    return a == null ? null : new ColumnVector.Longs(io.cairn.engine.row.Type.BIGINT, a, null, n);
  }

  /** The one constructor that stores the columns as given ({@code times} null: all {@code time0}; likewise diffs). */
  private Batch(String id, Schema keySchema, Schema valSchema, Description description, ColumnVector[] keys, ColumnVector[] vals,
      ColumnVector.Longs times, long time0, ColumnVector.Longs diffs, long diff0, int size) {
    this.id = id;
    this.keySchema = keySchema;
    this.valSchema = valSchema;
    this.description = description;
    this.keys = keys;
    this.vals = vals;
    this.times = times;
    this.time0 = time0;
    this.diffs = diffs;
    this.diff0 = diff0;
    this.size = size;
    this.longVecs = longVectors(keys, vals);
    this.longCols = longColumns(longVecs);
    this.key0 = keys.length > 0 && keys[0] instanceof ColumnVector.Longs l && l.nulls == null ? l.longs() : null;
  }

  /** Whether the first {@code n} entries of {@code a} are all equal (true for none or one). */
  private static boolean allEqual(ColumnVector.Longs a, int n) {
    if (n == 0) {
      return true;
    }
    long x = a.getLong(0);
    for (int i = 1; i < n; i++) {
      if (a.getLong(i) != x) {
        return false;
      }
    }
    return true;
  }

  /** Whether the first {@code n} entries of {@code a} are all equal (true for none or one). */
  private static boolean allEqual(long[] a, int n) {
    if (n == 0) {
      return true;
    }
    long x = a[0];
    for (int i = 1; i < n; i++) {
      if (a[i] != x) {
        return false;
      }
    }
    return true;
  }

  /** The key-then-value columns as {@code long[]}s, or null (see {@link #longCols}); do not modify. */
  long[][] longColumns() {
    return longCols;
  }

  /**
   * A batch of a new id from key-then-value columns that are all BIGINT/TIMESTAMP without NULLs,
   * already sorted and consolidated (entries {@code 0..n)}; arrays are trimmed to {@code n}).
   * {@code times} null means every time is {@code time0}, {@code diffs} null every diff {@code diff0}.
   */
  static Batch ofLongColumns(Schema keySchema, Schema valSchema, Description description, long[][] cols, long[] times,
      long time0, long[] diffs, long diff0, int n) {
    ColumnVector.Longs[] vectors = new ColumnVector.Longs[cols.length];
    for (int c = 0; c < cols.length; c++) {
      vectors[c] = new ColumnVector.Longs(c < keySchema.size() ? keySchema.type(c) : valSchema.type(c - keySchema.size()),
          trim(cols[c], n), null, n);
    }
    return ofLongVectors(keySchema, valSchema, description, vectors, times == null ? null : column(trim(times, n), n), time0,
        diffs == null ? null : column(trim(diffs, n), n), diff0, n);
  }

  /**
   * {@link #ofLongColumns} from key-then-value columns already made (of {@code n} values each, in
   * one array or chunked), times and diffs likewise ({@code times} null: every time is {@code
   * time0}; likewise diffs).
   */
  static Batch ofLongVectors(Schema keySchema, Schema valSchema, Description description, ColumnVector.Longs[] cols,
      ColumnVector.Longs times, long time0, ColumnVector.Longs diffs, long diff0, int n) {
    ColumnVector[] k = new ColumnVector[keySchema.size()];
    ColumnVector[] v = new ColumnVector[valSchema.size()];
    for (int c = 0; c < cols.length; c++) {
      if (c < k.length) {
        k[c] = cols[c];
      } else {
        v[c - k.length] = cols[c];
      }
    }
    boolean constTimes = times == null || allEqual(times, n);
    boolean constDiffs = diffs == null || allEqual(diffs, n);
    return new Batch(newId(), keySchema, valSchema, description, k, v,
        constTimes ? null : times, n == 0 ? 0 : times == null ? time0 : times.getLong(0),
        constDiffs ? null : diffs, n == 0 ? 0 : diffs == null ? diff0 : diffs.getLong(0), n);
  }

  /**
   * {@code a} when its first {@code n} entries fill all but less than an eighth of it, else a copy
   * of them. Copying costs more than the memory it gives back when little is unused: a merge of two
   * large batches that consolidates a few entries would copy arrays of tens of millions of longs,
   * and the JVM allocates (zeroes) such an array without reaching a safepoint, stopping every thread
   * for as long (measured at 50M rows: 277–811 ms). Readers use the batch's size, never an array's
   * length; {@link #heapBytes} counts the arrays whole.
   */
  private static long[] trim(long[] a, int n) {
    return a.length - n < a.length / 8 ? a : java.util.Arrays.copyOf(a, n);
  }

  /** The arrays of {@code vectors} (the long columns without NULLs, or null) when every one is one array; else null. */
  private static long[][] longColumns(ColumnVector.Longs[] vectors) {
    if (vectors == null) {
      return null;
    }
    long[][] out = new long[vectors.length][];
    for (int c = 0; c < out.length; c++) {
      out[c] = vectors[c].longs();
      if (out[c] == null) {
        return null;
      }
    }
    return out;
  }

  /**
   * The key-then-value columns when every one is BIGINT/TIMESTAMP without NULLs, in one array or
   * chunked; else null (do not modify). What a merge reads on its long-column path.
   */
  ColumnVector.Longs[] longVectors() {
    return longVecs;
  }

  private static ColumnVector.Longs[] longVectors(ColumnVector[] keys, ColumnVector[] vals) {
    ColumnVector.Longs[] out = new ColumnVector.Longs[keys.length + vals.length];
    for (int c = 0; c < out.length; c++) {
      ColumnVector v = c < keys.length ? keys[c] : vals[c - keys.length];
      if (!(v instanceof ColumnVector.Longs l) || v.nulls != null) {
        return null;
      }
      out[c] = l;
    }
    return out;
  }

  /**
   * One batch holding the updates of {@code batches} (consecutive batches of one arrangement
   * shard, oldest first, none empty), under a new id: sorted and consolidated, times unchanged
   * (no logical compaction), described from the first one's lower to the last one's upper with
   * the greatest of their {@code since}s. Used to store several small batches as one file; a
   * spine loads the result like any batch.
   */
  public static Batch mergeAll(List<Batch> batches) {
    if (batches.isEmpty()) {
      throw new IllegalArgumentException("Cannot merge batches: none given");
    }
    Batch acc = batches.get(0);
    for (int i = 1; i < batches.size(); i++) {
      Batch next = batches.get(i);
      if (next.description().lower() < acc.description().upper()) {
        throw new IllegalArgumentException("Cannot merge " + acc + " with " + next + ": they are not consecutive");
      }
      Merger m = new Merger(acc, next, 0);
      m.work(Long.MAX_VALUE);
      acc = m.result();
    }
    return batches.size() == 1 ? acc.withId(newId()) : acc;
  }

  /** A new random batch id. */
  public static String newId() {
    return UUID.randomUUID().toString();
  }

  /** An empty batch. */
  public static Batch empty(Schema keySchema, Schema valSchema, Description description) {
    return new SortedBuilder(keySchema, valSchema, 0).build(description);
  }

  /**
   * Builds a batch from columns read back from storage. Verifies that the columns match the
   * schemas and that entries are sorted, consolidated and free of zero diffs; throws {@link
   * IllegalArgumentException} naming the first violation otherwise.
   */
  public static Batch fromColumns(
      String id,
      Schema keySchema,
      Schema valSchema,
      Description description,
      List<ColumnVector> keys,
      List<ColumnVector> vals,
      long[] times,
      long[] diffs) {
    if (diffs.length != times.length) {
      throw new IllegalArgumentException("Cannot load batch " + id + ": column count or length mismatch");
    }
    return fromColumns(id, keySchema, valSchema, description, keys, vals, column(times, times.length), 0, column(diffs, diffs.length),
        0, times.length);
  }

  /**
   * {@link #fromColumns(String, Schema, Schema, Description, List, List, long[], long[])} of {@code
   * n} entries whose times ({@code times} null: every one {@code time0}) and diffs ({@code diffs}
   * null: every one {@code diff0}) may be constant, as a reader that found them so gives them. Any
   * long column, times and diffs included, may be one array or chunked ({@link
   * ColumnVector.LongsWriter}); a merge requires the key, value, time and diff columns of a batch
   * to be chunked alike, so a reader chunks them all by the one rule that writer applies.
   */
  public static Batch fromColumns(String id, Schema keySchema, Schema valSchema, Description description, List<ColumnVector> keys,
      List<ColumnVector> vals, ColumnVector.Longs times, long time0, ColumnVector.Longs diffs, long diff0, int n) {
    Objects.requireNonNull(id, "id");
    if ((times != null && times.size() < n) || (diffs != null && diffs.size() < n) || keys.size() != keySchema.size()
        || vals.size() != valSchema.size()) {
      throw new IllegalArgumentException("Cannot load batch " + id + ": column count or length mismatch");
    }
    for (int c = 0; c < keys.size(); c++) {
      checkColumn(id, keySchema, c, keys.get(c), n);
    }
    for (int c = 0; c < vals.size(); c++) {
      checkColumn(id, valSchema, c, vals.get(c), n);
    }
    boolean constTimes = times == null || allEqual(times, n);
    boolean constDiffs = diffs == null || allEqual(diffs, n);
    Batch b = new Batch(id, keySchema, valSchema, description, keys.toArray(new ColumnVector[0]), vals.toArray(new ColumnVector[0]),
        constTimes ? null : times, n == 0 ? 0 : times == null ? time0 : times.getLong(0),
        constDiffs ? null : diffs, n == 0 ? 0 : diffs == null ? diff0 : diffs.getLong(0), n);
    for (int i = 0; i < n; i++) {
      if (b.diff(i) == 0) {
        throw new IllegalArgumentException("Cannot load batch " + id + ": entry " + i + " has diff 0");
      }
      if (i > 0 && b.compareEntry(i - 1, b, i) >= 0) {
        throw new IllegalArgumentException("Cannot load batch " + id + ": entries " + (i - 1) + " and " + i + " are not strictly sorted");
      }
    }
    return b;
  }

  private static void checkColumn(String id, Schema schema, int c, ColumnVector v, int n) {
    if (v.size() != n || v.type() != schema.type(c)) {
      throw new IllegalArgumentException(
          "Cannot load batch " + id + ": column '" + schema.column(c).name() + "' is " + v.type() + "[" + v.size()
              + "], expected " + schema.type(c) + "[" + n + "]");
    }
  }

  /** Sorts and consolidates {@code updates} into a batch: the seal's routine ({@link UpdateBuffer}), for a list. */
  public static Batch fromUpdates(Schema keySchema, Schema valSchema, List<Update> updates, Description description) {
    UpdateBuffer buffer = new UpdateBuffer(keySchema, valSchema);
    for (Update u : updates) {
      buffer.add(u.key(), u.val(), u.time(), u.diff());
    }
    return buffer.seal(description);
  }

  /**
   * Sorts and consolidates the updates held column by column in {@code keys}, {@code vals},
   * {@code times} and {@code diffs} (entries {@code 0..n), any order) into a batch: the seal of a
   * tick. The order is found as an {@code int[]} permutation without boxing: when every key and
   * value column is BIGINT/TIMESTAMP without NULLs, by LSD radix passes (time, then the value
   * columns, then the key columns, last column first); otherwise by a comparison sort over the
   * columns. {@link Consolidation#scan} in that order then consolidates equal (key, val, time)
   * entries, and the live ones are gathered into the batch's columns.
   */
  static Batch sortAndConsolidate(Schema keySchema, Schema valSchema, ColumnVector[] keys, ColumnVector[] vals,
      long[] times, long[] diffs, int n, Description description) {
    // the staged entries keep their arrays as they are (the sort reads them; nothing else sees this batch)
    Batch raw = new Batch("staged", keySchema, valSchema, description, keys, vals, column(times, n), 0, column(diffs, n), 0, n);
    int[] perm = raw.sortedPermutation();
    SortedBuilder b = new SortedBuilder(keySchema, valSchema, n);
    Consolidation.scan(perm, n, raw.entryOrder(), x -> diffs[x], (x, sum) -> b.append(raw, x, times[x], sum));
    return b.build(description);
  }

  /** A permutation putting this (unsorted) batch's entries in (key, val, time) order, stable. */
  private int[] sortedPermutation() {
    int n = size;
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) {
      perm[i] = i;
    }
    if (n < 2) {
      return perm;
    }
    if (keys.length > 0 && allLongsWithoutNulls(keys)) {
      // by the first key column alone (radix), then each run of equal first columns by (key, val,
      // time): runs are short in the common case (a key changes once or twice a tick; a
      // whole-row key such as a join's output starts with the join key), so this saves the
      // passes over the other key and the val columns
      int[] other = new int[n];
      int[] cur = KeySort.radixPasses(((ColumnVector.Longs) keys[0]).longs(), false, perm, other, n);
      if (cur != perm) {
        other = perm;
      }
      if (sortRuns(cur, n, ((ColumnVector.Longs) keys[0]).longs())) {
        return cur;
      }
      if (keys.length > 1) {
        // long runs of the first column: by the whole key (radix), then runs of equal keys
        for (int i = 0; i < n; i++) {
          cur[i] = i;
        }
        for (int c = keys.length - 1; c >= 0; c--) {
          int[] next = KeySort.radixPasses(((ColumnVector.Longs) keys[c]).longs(), false, cur, other, n);
          other = next == cur ? other : cur;
          cur = next;
        }
        if (sortRuns(cur, n, null)) {
          return cur;
        }
      }
      perm = cur;
      for (int i = 0; i < n; i++) {
        perm[i] = i; // long runs: sort whole entries below instead
      }
    } else if (n >= MIN_TEXT_RANK && keys.length > 0 && keys[0] instanceof ColumnVector.Texts texts) {
      // a TEXT first key column (a group's name, a customer): its distinct values are sorted
      // once, the entries radix-sorted by their value's rank, and each run of one value by
      // (key, val, time) as above; a string is compared d log d times for d distinct values,
      // not n log n times
      long[] rank = texts.ranks(n);
      int[] cur = KeySort.radixPasses(rank, false, perm, new int[n], n);
      if (sortRuns(cur, n, rank)) {
        return cur;
      }
      perm = cur;
      for (int i = 0; i < n; i++) {
        perm[i] = i;
      }
    }
    if (allLongsWithoutNulls(keys) && allLongsWithoutNulls(vals)) {
      int[] a = perm;
      int[] b = new int[n];
      int[] cur = KeySort.radixPasses(times.longs(), false, a, b, n); // a staged batch: its times in one array
      for (int c = vals.length + keys.length - 1; c >= 0; c--) {
        long[] col = c >= keys.length ? ((ColumnVector.Longs) vals[c - keys.length]).longs() : ((ColumnVector.Longs) keys[c]).longs();
        cur = KeySort.radixPasses(col, false, cur, cur == a ? b : a, n);
      }
      return cur;
    }
    Consolidation.sortRange(perm, 0, n, entryOrder(), null);
    return perm;
  }

  /** This batch's entries in (key, val, time) order, by index. */
  private Consolidation.Order entryOrder() {
    return (a, b) -> compareEntry(a, this, b);
  }

  /** Runs of equal keys longer than this are not insertion-sorted. */
  private static final int MAX_INSERTION_RUN = 32;
  /** Fewer staged entries than this with a TEXT first key are sorted by comparisons alone. */
  private static final int MIN_TEXT_RANK = 64;

  /**
   * Sorts each run of equal keys (or, given {@code k0}, of equal first key columns: {@code k0[i]}
   * the first key column of entry i as a long in the same order, a value or its rank) in {@code
   * perm[0..n)}, already ordered by that stably, by (key, val, time) (short runs: {@link
   * Consolidation}'s insertion sort); false, leaving {@code perm} partly sorted, as soon as a run is
   * longer than {@value #MAX_INSERTION_RUN}. Without {@code k0}, requires all-long key columns
   * without NULLs.
   */
  private boolean sortRuns(int[] perm, int n, long[] k0) {
    Consolidation.Order order = entryOrder();
    int i = 0;
    while (i < n) {
      int j = i + 1;
      if (k0 != null) {
        long k = k0[perm[i]];
        while (j < n && k0[perm[j]] == k) {
          j++;
        }
      } else {
        while (j < n && compareKey(perm[i], this, perm[j]) == 0) {
          j++;
        }
      }
      if (j - i > MAX_INSERTION_RUN) {
        return false;
      }
      if (j - i > 1) {
        Consolidation.sortRange(perm, i, j, order, null); // a short run: an insertion sort
      }
      i = j;
    }
    return true;
  }

  private static boolean allLongsWithoutNulls(ColumnVector[] cols) {
    for (ColumnVector c : cols) {
      if (!(c instanceof ColumnVector.Longs) || c.nulls != null) {
        return false;
      }
    }
    return true;
  }

  public String id() {
    return id;
  }

  /** The same contents under another id (used when loading a persisted batch). */
  public Batch withId(String newId) {
    return new Batch(newId, keySchema, valSchema, description, keys, vals, times, time0, diffs, diff0, size);
  }

  public Schema keySchema() {
    return keySchema;
  }

  public Schema valSchema() {
    return valSchema;
  }

  public Description description() {
    return description;
  }

  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  public ColumnVector keyColumn(int c) {
    return keys[c];
  }

  public ColumnVector valColumn(int c) {
    return vals[c];
  }

  public long time(int i) {
    ColumnVector.Longs t = times;
    return t == null ? time0 : t.getLong(i);
  }

  public long diff(int i) {
    ColumnVector.Longs d = diffs;
    return d == null ? diff0 : d.getLong(i);
  }

  /** The times column, or null when every entry's time is {@link #constantTime()} (do not modify). */
  public ColumnVector.Longs timesOrNull() {
    return times;
  }

  /** Every entry's time when {@link #timesOrNull()} is null (else the first entry's). */
  public long constantTime() {
    return time0;
  }

  /** The diffs column, or null when every entry's diff is {@link #constantDiff()} (do not modify). */
  public ColumnVector.Longs diffsOrNull() {
    return diffs;
  }

  /** Every entry's diff when {@link #diffsOrNull()} is null (else the first entry's). */
  public long constantDiff() {
    return diff0;
  }

  public Row key(int i) {
    Object[] v = new Object[keys.length];
    for (int c = 0; c < keys.length; c++) {
      v[c] = keys[c].get(i);
    }
    return Row.wrap(v);
  }

  public Row val(int i) {
    Object[] v = new Object[vals.length];
    for (int c = 0; c < vals.length; c++) {
      v[c] = vals[c].get(i);
    }
    return Row.wrap(v);
  }

  /**
   * Entry {@code i} as one row of {@code width} columns: key column {@code c} at {@code
   * keyCols[c]}, value column {@code c} at {@code valCols[c]} (a collection's row from its
   * arrangement, without building the key and value rows first).
   */
  public Row row(int i, int[] keyCols, int[] valCols, int width) {
    Object[] v = new Object[width];
    for (int c = 0; c < keys.length; c++) {
      v[keyCols[c]] = keys[c].get(i);
    }
    for (int c = 0; c < vals.length; c++) {
      v[valCols[c]] = vals[c].get(i);
    }
    return Row.wrap(v);
  }

  public Update update(int i) {
    return new Update(key(i), val(i), time(i), diff(i));
  }

  /** Compares the key of entry {@code i} with {@code key}. */
  public int compareKey(int i, Row key) {
    if (keys.length == 1 && longCols != null && key.get(0) instanceof Long k) {
      return Long.compare(longCols[0][i], k);
    }
    for (int c = 0; c < keys.length; c++) {
      int r = keys[c].compareTo(i, key.get(c));
      if (r != 0) {
        return r;
      }
    }
    return 0;
  }

  /** Compares the key of entry {@code i} with the key of entry {@code j} of {@code other}. */
  public int compareKey(int i, Batch other, int j) {
    if (longCols != null && other.longCols != null) {
      for (int c = 0; c < keys.length; c++) {
        int r = Long.compare(longCols[c][i], other.longCols[c][j]);
        if (r != 0) {
          return r;
        }
      }
      return 0;
    }
    if (longVecs != null && other.longVecs != null) {
      return compareLongs(longVecs, i, other.longVecs, j, keys.length);
    }
    int c = 0;
    if (key0 != null && other.key0 != null) {
      int r = Long.compare(key0[i], other.key0[j]);
      if (r != 0) {
        return r;
      }
      c = 1;
    }
    for (; c < keys.length; c++) {
      int r = keys[c].compare(i, other.keys[c], j);
      if (r != 0) {
        return r;
      }
    }
    return 0;
  }

  /**
   * Whether entry {@code i} holds the values of {@code row}: key column c equal to {@code
   * row.get(keyPos[c])} and value column c to {@code row.get(valPos[c])}, in {@link Row#equals}'s
   * sense (both are {@link Row#compareTo} equality).
   */
  public boolean entryEquals(int i, Row row, int[] keyPos, int[] valPos) {
    for (int c = 0; c < keyPos.length; c++) {
      if (keys[c].compareTo(i, row.get(keyPos[c])) != 0) {
        return false;
      }
    }
    for (int c = 0; c < valPos.length; c++) {
      if (vals[c].compareTo(i, row.get(valPos[c])) != 0) {
        return false;
      }
    }
    return true;
  }

  /** Compares (key, val) of entry {@code i} with (key, val) of entry {@code j} of {@code other}. */
  public int compareKeyVal(int i, Batch other, int j) {
    if (longCols != null && other.longCols != null) {
      long[][] a = longCols;
      long[][] b = other.longCols;
      for (int c = 0; c < a.length; c++) {
        int r = Long.compare(a[c][i], b[c][j]);
        if (r != 0) {
          return r;
        }
      }
      return 0;
    }
    if (longVecs != null && other.longVecs != null) {
      return compareLongs(longVecs, i, other.longVecs, j, longVecs.length);
    }
    int r = compareKey(i, other, j);
    if (r != 0) {
      return r;
    }
    for (int c = 0; c < vals.length; c++) {
      r = vals[c].compare(i, other.vals[c], j);
      if (r != 0) {
        return r;
      }
    }
    return 0;
  }

  /** Compares the first {@code width} columns of entry {@code i} of {@code a} with those of entry {@code j} of {@code b}. */
  private static int compareLongs(ColumnVector.Longs[] a, int i, ColumnVector.Longs[] b, int j, int width) {
    for (int c = 0; c < width; c++) {
      int r = Long.compare(a[c].getLong(i), b[c].getLong(j));
      if (r != 0) {
        return r;
      }
    }
    return 0;
  }

  /** Compares (key, val, time) of entry {@code i} with entry {@code j} of {@code other}. */
  public int compareEntry(int i, Batch other, int j) {
    int r = compareKeyVal(i, other, j);
    return r != 0 ? r : Long.compare(time(i), other.time(j));
  }

  /**
   * The first index {@code >= from} whose key is {@code >= key} (or {@link #size()}), found by
   * galloping forward from {@code from}: cheap when successive seeks move forward a little.
   */
  public int seekKey(Row key, int from) {
    if (keys.length == 1 && longCols != null && key.get(0) instanceof Long k) {
      return seekLong(longCols[0], size, k, from);
    }
    int lo = from;
    if (lo >= size || compareKey(lo, key) >= 0) {
      return lo;
    }
    int step = 1;
    int hi = lo + step;
    while (hi < size && compareKey(hi, key) < 0) {
      lo = hi;
      step <<= 1;
      hi = lo + step;
    }
    hi = Math.min(hi, size);
    // invariant: key(lo) < key, key(hi) >= key or hi == size
    while (hi - lo > 1) {
      int mid = (lo + hi) >>> 1;
      if (compareKey(mid, key) < 0) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }

  /**
   * The first entry at or after {@code from} whose single BIGINT/TIMESTAMP key is {@code >= key}
   * (galloping search), for batches keyed by one such column; a key column holding NULLs is
   * searched through {@link #seekKey}.
   */
  public int seekLongKey(long key, int from) {
    if (keys.length != 1) {
      throw new IllegalStateException("Cannot seek a long key in " + this + ": it has " + keys.length + " key columns");
    }
    if (keys[0] instanceof ColumnVector.Longs l && l.nulls == null) {
      long[] col = l.longs();
      return col != null ? seekLong(col, size, key, from) : seekLong(l, size, key, from);
    }
    return seekKey(Row.of(key), from);
  }

  /**
   * {@link #seekLong(long[], int, long, int)} over a column in chunks: the chunk that holds the
   * answer is found first (the one {@code from} is in when its last value is {@code >= key}, else by
   * galloping over the next chunks' last values), then the same galloping search runs inside that
   * one array, touching the memory a search of one array would.
   */
  private static int seekLong(ColumnVector.Longs col, int size, long key, int from) {
    if (from >= size) {
      return from;
    }
    long[][] chunks = col.chunks();
    int shift = col.chunkShift();
    int full = (1 << shift) - 1;
    int last = (size - 1) >>> shift;
    int c = from >>> shift;
    if (c < last && chunks[c][full] < key) {
      // galloping over the chunks from the next one (ascending lookups mostly move one chunk on),
      // then a binary search: the first chunk whose last value is >= key, or the last chunk
      int lo = c + 1;
      int step = 1;
      int hi = Math.min(last, lo);
      while (hi < last && chunks[hi][full] < key) {
        lo = hi + 1;
        step <<= 1;
        hi = Math.min(last, hi + step);
      }
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (chunks[mid][full] < key) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      c = lo;
    }
    int base = c << shift;
    return base + seekLong(chunks[c], Math.min(size - base, 1 << shift), key, Math.max(from, base) - base);
  }

  /** Whether the single key of entry {@code i} is the non-null {@code key}. */
  public boolean keyIsLong(int i, long key) {
    return keys[0] instanceof ColumnVector.Longs l && !l.isNull(i) && l.getLong(i) == key;
  }

  /** The first index in {@code [from, size)} with {@code col[i] >= key} (or {@code size}), galloping from {@code from}. */
  static int seekLong(long[] col, int size, long key, int from) {
    int lo = from;
    if (lo >= size || col[lo] >= key) {
      return lo;
    }
    int step = 1;
    int hi = lo + step;
    while (hi < size && col[hi] < key) {
      lo = hi;
      step <<= 1;
      hi = lo + step;
    }
    hi = Math.min(hi, size);
    while (hi - lo > 1) {
      int mid = (lo + hi) >>> 1;
      if (col[mid] < key) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }

  /** Approximate heap bytes held by this batch. */
  public long heapBytes() {
    long b = 80 + (times == null ? 0 : times.heapBytes()) + (diffs == null ? 0 : diffs.heapBytes());
    for (ColumnVector v : keys) {
      b += v.heapBytes();
    }
    for (ColumnVector v : vals) {
      b += v.heapBytes();
    }
    return b;
  }

  @Override
  public String toString() {
    return "Batch[" + id + ", " + description + ", " + size + " updates]";
  }

  /**
   * Builds a batch from entries appended in (key, val, time) order; an entry equal to the
   * previous one is consolidated into it and a zero sum removed. Appending out of order is a
   * programming error (checked).
   */
  public static final class SortedBuilder {
    private final Schema keySchema;
    private final Schema valSchema;
    private final ColumnVector.Builder[] keys;
    private final ColumnVector.Builder[] vals;
    private long[] times;
    private long[] diffs;
    private int size;

    public SortedBuilder(Schema keySchema, Schema valSchema, int capacity) {
      this.keySchema = keySchema;
      this.valSchema = valSchema;
      this.keys = new ColumnVector.Builder[keySchema.size()];
      this.vals = new ColumnVector.Builder[valSchema.size()];
      for (int c = 0; c < keys.length; c++) {
        keys[c] = ColumnVector.builder(keySchema.type(c), capacity);
      }
      for (int c = 0; c < vals.length; c++) {
        vals[c] = ColumnVector.builder(valSchema.type(c), capacity);
      }
      times = new long[Math.max(4, capacity)];
      diffs = new long[Math.max(4, capacity)];
    }

    public int size() {
      return size;
    }

    private void grow() {
      int cap = Math.max(8, size * 2);
      times = java.util.Arrays.copyOf(times, cap);
      diffs = java.util.Arrays.copyOf(diffs, cap);
    }

    private Row lastKey;
    private Row lastVal;
    private long lastTime;

    /** Appends (key, val, time, diff) given as rows. */
    public void add(Row key, Row val, long time, long diff) {
      if (size > 0 && lastTime == time && lastKey.equals(key) && lastVal.equals(val)) {
        addToLast(diff);
        return;
      }
      if (diff == 0) {
        return;
      }
      if (size == times.length) {
        grow();
      }
      for (int c = 0; c < keys.length; c++) {
        keys[c].add(key.get(c));
      }
      for (int c = 0; c < vals.length; c++) {
        vals[c].add(val.get(c));
      }
      times[size] = time;
      diffs[size] = diff;
      size++;
      lastKey = key;
      lastVal = val;
      lastTime = time;
    }

    /**
     * Appends entry {@code i} of {@code from} with its time replaced by {@code time} and diff by
     * {@code diff}, consolidating with the previous entry when equal.
     */
    public void addFrom(Batch from, int i, long time, long diff) {
      if (size > 0 && lastFrom != null && lastTime == time && lastFrom.compareKeyVal(lastFromIndex, from, i) == 0) {
        addToLast(diff);
        return;
      }
      if (diff != 0) {
        append(from, i, time, diff);
      }
    }

    private Batch lastFrom;
    private int lastFromIndex;

    /**
     * Appends entry {@code i} of {@code from} with time {@code time} and diff {@code diff} as a
     * new entry: the caller has consolidated already ({@link Consolidation#scan}), so it is
     * strictly after the previous entry and {@code diff} is not 0 (not checked).
     */
    void append(Batch from, int i, long time, long diff) {
      if (size == times.length) {
        grow();
      }
      for (int c = 0; c < keys.length; c++) {
        keys[c].addFrom(from.keys[c], i);
      }
      for (int c = 0; c < vals.length; c++) {
        vals[c].addFrom(from.vals[c], i);
      }
      times[size] = time;
      diffs[size] = diff;
      size++;
      lastFrom = from;
      lastFromIndex = i;
      lastTime = time;
      lastKey = null;
      lastVal = null;
    }

    private void addToLast(long diff) {
      diffs[size - 1] += diff;
      if (diffs[size - 1] == 0) {
        size--;
        for (ColumnVector.Builder k : keys) {
          k.pop();
        }
        for (ColumnVector.Builder v : vals) {
          v.pop();
        }
        // the new last entry is strictly smaller than anything appended next: forget it
        lastFrom = null;
        lastKey = null;
        lastVal = null;
        lastTime = Long.MIN_VALUE;
      }
    }

    /** The batch of the entries appended (arrays exactly full are used, not copied). The builder must not be used afterwards. */
    public Batch build(Description description) {
      return build(newId(), description);
    }

    public Batch build(String id, Description description) {
      ColumnVector[] k = new ColumnVector[keys.length];
      for (int c = 0; c < k.length; c++) {
        k[c] = keys[c].build();
      }
      ColumnVector[] v = new ColumnVector[vals.length];
      for (int c = 0; c < v.length; c++) {
        v[c] = vals[c].build();
      }
      return new Batch(
          id,
          keySchema,
          valSchema,
          description,
          k,
          v,
          trim(times, size),
          trim(diffs, size),
          size);
    }
  }
}
