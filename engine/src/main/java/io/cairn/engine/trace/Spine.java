package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The trace of one arrangement shard: the updates sealed so far, as a list of immutable {@link
 * Batch}es, oldest first.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Sealing a tick appends one batch ({@link #insert}); empty batches are not kept, the
 *       spine's {@link #upper()} advances regardless. Every update in the spine has time {@code <
 *       upper()}.
 *   <li>Physical compaction: when the two newest batches have comparable sizes (older ≤ 2 ×
 *       newer) they are replaced by a {@link Merger}, which the spine advances with a bounded
 *       amount of {@link #exert fuel} per tick. Batch sizes therefore shrink geometrically from
 *       oldest to newest and a spine of n updates holds O(log n) batches. Until a merge is done,
 *       its two inputs are what readers and {@link #batches()} see.
 *   <li>Logical compaction: {@link #advanceSince} lets merges advance times before {@code since}
 *       to {@code since}; the collection as of any time {@code >= since} is unchanged.
 *   <li>Not thread-safe: a spine belongs to one worker; the engine reads it for snapshots and
 *       queries only between ticks.
 * </ul>
 */
public final class Spine {
  private final Schema keySchema;
  private final Schema valSchema;
  private final List<Object> slots = new ArrayList<>(); // Batch or Merger, oldest first
  private long upper;
  private long since;
  /** log2 of the values per chunk of a merge's output of more than {@link #chunkedAbove} entries ({@link Merger}). */
  private final int chunkShift;
  private final int chunkedAbove;

  public Spine(Schema keySchema, Schema valSchema) {
    this(keySchema, valSchema, ColumnVector.Longs.CHUNK_SHIFT, ColumnVector.Longs.CHUNKED_ABOVE);
  }

  /**
   * A spine whose merges write an output of more than {@code chunkedAbove} entries in chunks of
   * {@code 1 << chunkShift} values (tests use small chunks).
   */
  Spine(Schema keySchema, Schema valSchema, int chunkShift, int chunkedAbove) {
    this.keySchema = keySchema;
    this.valSchema = valSchema;
    this.chunkShift = chunkShift;
    this.chunkedAbove = chunkedAbove;
  }

  public Schema keySchema() {
    return keySchema;
  }

  public Schema valSchema() {
    return valSchema;
  }

  /** All sealed times are {@code < upper}. */
  public long upper() {
    return upper;
  }

  public long since() {
    return since;
  }

  /** Appends a sealed batch; its description must start at or after {@link #upper()}. */
  public void insert(Batch batch) {
    Description d = batch.description();
    if (d.lower() < upper) {
      throw new IllegalArgumentException(
          "Cannot insert " + batch + ": its lower " + d.lower() + " is before the spine's upper " + upper);
    }
    upper = d.upper();
    if (!batch.isEmpty()) {
      slots.add(batch);
      tidy();
    }
  }

  /** Allows merges to advance times before {@code since} to {@code since}. Never moves backwards. */
  public void advanceSince(long newSince) {
    since = Math.max(since, Math.min(newSince, upper));
  }

  /** Performs up to {@code fuel} units of merge work, newest merges first. */
  public void exert(long fuel) {
    boolean finished = false;
    for (int s = slots.size() - 1; s >= 0 && fuel > 0; s--) {
      if (slots.get(s) instanceof Merger m) {
        fuel = m.work(fuel);
        if (m.isDone()) {
          slots.set(s, m.result());
          finished = true;
        }
      }
    }
    if (finished) {
      removeEmpty();
      tidy();
    }
  }

  /** Completes every merge and merges everything into at most one batch per level. */
  public void compact() {
    while (slots.stream().anyMatch(o -> o instanceof Merger)) {
      exert(Long.MAX_VALUE); // a completed merge may start another one
    }
    while (slots.size() > 1) {
      Batch newer = (Batch) slots.remove(slots.size() - 1);
      Batch older = (Batch) slots.remove(slots.size() - 1);
      Merger m = new Merger(older, newer, since, chunkShift, chunkedAbove);
      m.work(Long.MAX_VALUE);
      slots.add(m.result());
      removeEmpty();
    }
  }

  private void removeEmpty() {
    slots.removeIf(o -> o instanceof Batch b && b.isEmpty());
  }

  /**
   * Starts a merge of every adjacent pair of batches of comparable sizes, newest first. Every
   * pair is considered, not only the newest one: a merge that completes in the middle of the
   * spine can leave its result next to a batch of comparable size.
   */
  private void tidy() {
    for (int s = slots.size() - 1; s >= 1; s--) {
      if (slots.get(s) instanceof Batch newer
          && slots.get(s - 1) instanceof Batch older
          && older.size() <= 2L * newer.size()) {
        slots.remove(s);
        slots.set(s - 1, new Merger(older, newer, since, chunkShift, chunkedAbove));
      }
    }
  }

  /**
   * The immutable batches that make up the collection, oldest first (inputs of unfinished merges
   * included). Capturing them costs O(number of batches): this is what a snapshot takes.
   */
  public List<Batch> batches() {
    List<Batch> out = new ArrayList<>(slots.size() + 2);
    for (Object o : slots) {
      if (o instanceof Batch b) {
        out.add(b);
      } else {
        Merger m = (Merger) o;
        out.add(m.older());
        out.add(m.newer());
      }
    }
    return Collections.unmodifiableList(out);
  }

  /** Loads batches (e.g. from a snapshot) into this empty spine and sets its upper. */
  public void load(List<Batch> batches, long newUpper) {
    if (!slots.isEmpty() || upper != 0) {
      throw new IllegalStateException("Cannot load batches: the spine is not empty");
    }
    for (Batch b : batches) {
      if (!b.keySchema().equals(keySchema) || !b.valSchema().equals(valSchema)) {
        throw new IllegalArgumentException("Cannot load " + b + ": its schema does not match the arrangement");
      }
      if (!b.isEmpty()) {
        slots.add(b);
      }
    }
    upper = newUpper;
    since = newUpper == 0 ? 0 : newUpper - 1;
    tidy(); // loaded batches (a snapshot may hold many small ones) merge like sealed ones, with fuel
  }

  /** Number of updates held (before consolidation across batches). */
  public long updateCount() {
    long n = 0;
    for (Batch b : batches()) {
      n += b.size();
    }
    return n;
  }

  public int batchCount() {
    return batches().size();
  }

  /** Approximate heap bytes held, including unfinished merge output. */
  public long heapBytes() {
    long n = 0;
    for (Batch b : batches()) {
      n += b.heapBytes();
    }
    return n;
  }

  /** Receives the collection read by {@link #forEachLive}. */
  @FunctionalInterface
  public interface LiveSink {
    /** The (key, val) of entry {@code i} of {@code batch} is in the collection {@code count} times (never 0). */
    void live(Batch batch, int i, long count);
  }

  /**
   * Passes the collection as of {@code time} ({@code >= since}) to {@code sink}: each (key, val)
   * whose count is not zero, once, in (key, val) order, as one of its entries (no row is built).
   * The batches are each sorted already, so {@link Consolidation}'s sort only merges them (inside
   * a batch it makes one comparison per entry, finding each half already in order).
   */
  public void forEachLive(long time, LiveSink sink) {
    forEachLive(batches(), time, sink);
  }

  /**
   * {@link #forEachLive(long, LiveSink)} over a fixed list of batches, such as a list {@link
   * io.cairn.engine.dataflow.Arrangement#published} gave: batches are immutable, so this needs no
   * lock while the spine goes on changing.
   */
  public static void forEachLive(List<Batch> batches, long time, LiveSink sink) {
    forEachLive(batches, time, sink, () -> {});
  }

  /**
   * {@link #forEachLive(List, long, LiveSink)}, calling {@code check} about every 65,536 entries
   * and comparisons while it orders them: a check that throws stops the read (a cancelled scan of
   * a large view frees its thread within milliseconds, not after the whole sort).
   */
  public static void forEachLive(List<Batch> batches, long time, LiveSink sink, Runnable check) {
    Batch[] bs = batches.toArray(new Batch[0]);
    int total = 0;
    for (Batch b : bs) {
      total += b.size();
    }
    int[] which = new int[total];
    int[] index = new int[total];
    int n = 0;
    for (int w = 0; w < bs.length; w++) {
      Batch b = bs[w];
      for (int i = 0; i < b.size(); i++) {
        if (b.time(i) <= time) {
          which[n] = w;
          index[n] = i;
          n++;
        }
      }
    }
    check.run();
    int[] steps = {0};
    Consolidation.Order order = (x, y) -> {
      if ((++steps[0] & 0xFFFF) == 0) {
        check.run();
      }
      return bs[which[x]].compareKeyVal(index[x], bs[which[y]], index[y]);
    };
    // the batches are sorted runs: the sort only merges them (one comparison per run elsewhere)
    int[] perm = Consolidation.sortInto(new int[n], n, order);
    Consolidation.scan(perm, n, order, x -> bs[which[x]].diff(index[x]), (x, sum) -> sink.live(bs[which[x]], index[x], sum));
  }

  /**
   * The collection as of {@code time} ({@code >= since}): consolidated (key, val, count) with
   * non-zero counts, sorted by (key, val). Times in the result are {@code time}.
   */
  public List<Update> readAt(long time) {
    List<Update> out = new ArrayList<>();
    forEachLive(time, (b, i, count) -> out.add(new Update(b.key(i), b.val(i), time, count)));
    return out;
  }

  /** The whole collection sealed so far (as of {@code upper - 1}). */
  public List<Update> contents() {
    return readAt(Long.MAX_VALUE);
  }

  /** A reader for point lookups, fastest when keys are asked in ascending order. */
  public Reader reader() {
    return new Reader(batches());
  }

  /** A reader for point lookups over a fixed list of (immutable) batches; needs no lock. */
  public static Reader reader(List<Batch> batches) {
    return new Reader(batches);
  }

  /** Receives the entries found by {@link Reader#forEachLong}. */
  public interface EntrySink {
    /** Entry {@code i} of {@code batch} is stored under the key asked for. */
    void entry(Batch batch, int i);
  }

  /** Point lookups over a fixed list of batches. */
  public static final class Reader {
    private final List<Batch> batches;
    private final int[] pos;
    private Row lastKey;
    private long lastLong = Long.MIN_VALUE;
    /** {@link #longKeyColumns}, computed at the first {@link #forEachLong}. */
    private long[][] longKeys;

    Reader(List<Batch> batches) {
      this.batches = batches;
      this.pos = new int[batches.size()];
    }

    /** Adds every (val, diff) stored under {@code key} to {@code out} (not consolidated). */
    public void values(Row key, Values out) {
      forEach(key, (batch, i) -> out.add(batch.val(i), batch.diff(i)));
    }

    /**
     * Passes every entry stored under {@code key} to {@code sink} (not consolidated, no row
     * materialised). Fastest with keys asked in ascending order; do not mix with {@link
     * #forEachLong} on one reader.
     */
    public void forEach(Row key, EntrySink sink) {
      if (lastKey != null && lastKey.compareTo(key) > 0) {
        java.util.Arrays.fill(pos, 0);
      }
      lastKey = key;
      for (int b = 0; b < pos.length; b++) {
        Batch batch = batches.get(b);
        int i = batch.seekKey(key, pos[b]);
        pos[b] = i;
        while (i < batch.size() && batch.compareKey(i, key) == 0) {
          sink.entry(batch, i);
          i++;
        }
      }
    }

    /**
     * Passes every entry stored under the single BIGINT/TIMESTAMP key {@code key} to {@code sink}
     * (not consolidated, no row materialised). Fastest with keys asked in ascending order; do not
     * mix with {@link #values} on one reader.
     */
    public void forEachLong(long key, EntrySink sink) {
      if (key < lastLong) {
        java.util.Arrays.fill(pos, 0);
      }
      lastLong = key;
      long[][] cols = longKeys;
      if (cols == null) {
        cols = longKeys = longKeyColumns(batches);
      }
      for (int b = 0; b < pos.length; b++) {
        Batch batch = batches.get(b);
        long[] col = cols[b];
        if (col != null) { // the common case: the key column as a long[] without NULLs
          int n = batch.size();
          int i = Batch.seekLong(col, n, key, pos[b]);
          pos[b] = i;
          while (i < n && col[i] == key) {
            sink.entry(batch, i);
            i++;
          }
          continue;
        }
        int i = batch.seekLongKey(key, pos[b]);
        pos[b] = i;
        while (i < batch.size() && batch.keyIsLong(i, key)) {
          sink.entry(batch, i);
          i++;
        }
      }
    }

    /** Per batch: its single key column as a {@code long[]} when it is BIGINT/TIMESTAMP without NULLs in one array, else null. */
    private static long[][] longKeyColumns(List<Batch> batches) {
      long[][] out = new long[batches.size()][];
      for (int b = 0; b < out.length; b++) {
        Batch batch = batches.get(b);
        if (batch.keySchema().size() == 1 && batch.keyColumn(0) instanceof ColumnVector.Longs l && l.nulls == null) {
          out[b] = l.longs();
        }
      }
      return out;
    }
  }
}
