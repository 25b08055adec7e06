package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spines under random batches, fuel-limited merging and logical compaction, compared with an
 * oracle over every inserted update; and the shape invariants of {@link Batch}.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 4 s
class SpinePropertyTest {
  static final Schema KEY = Schema.of(Column.of("k", Type.BIGINT), Column.of("t", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("d", Type.DOUBLE));
  /** All BIGINT/TIMESTAMP without NULLs: batches take the long-column paths (radix seal, long merge). */
  static final Schema LONG_KEY = Schema.of(Column.of("k", Type.BIGINT), Column.of("k2", Type.BIGINT));
  static final Schema LONG_VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("ts", Type.TIMESTAMP));
  /** One key and one value column (ids and counts). */
  static final Schema ID_KEY = Schema.of(Column.of("id", Type.BIGINT));
  static final Schema COUNT_VAL = Schema.of(Column.of("n", Type.BIGINT));

  /** One step: a batch of updates spanning {@code span} times, then {@code sinceLag} and {@code fuel}. */
  record Step(List<Update> updates, int span, int sinceLag, int fuel) {}

  static Gen<List<Step>> steps() {
    Gen<Long> ks = Gen.longs(0, 6).orNull(0.1);
    Gen<String> ts = Gen.of("x", "y").orNull(0.1);
    Gen<Long> vs = Gen.longs(0, 3).orNull(0.1);
    Gen<Double> ds = Gen.of(0.5, 1.25).orNull(0.2);
    return steps((r, size) -> Row.of(ks.next(r, size), ts.next(r, size)), (r, size) -> Row.of(vs.next(r, size), ds.next(r, size)));
  }

  static Gen<List<Step>> longSteps() {
    Gen<Long> ks = Gen.of(-3L, 0L, 1L, 2L, 70_000L, Long.MIN_VALUE, Long.MAX_VALUE);
    Gen<Long> vs = Gen.longs(-2, 3);
    return steps((r, size) -> Row.of(ks.next(r, size), vs.next(r, size)), (r, size) -> Row.of(vs.next(r, size), ks.next(r, size)));
  }

  static Gen<List<Step>> idCountSteps() {
    Gen<Long> ks = Gen.of(-3L, 0L, 1L, 2L, 70_000L, Long.MIN_VALUE, Long.MAX_VALUE);
    Gen<Long> vs = Gen.longs(-2, 3);
    return steps((r, size) -> Row.of(ks.next(r, size)), (r, size) -> Row.of(vs.next(r, size)));
  }

  /** One key and two value columns: the general long-column merge, not the two-column one. */
  static Gen<List<Step>> idPairSteps() {
    Gen<Long> ks = Gen.of(-3L, 0L, 1L, 2L, 70_000L, Long.MIN_VALUE, Long.MAX_VALUE);
    Gen<Long> vs = Gen.longs(-2, 3);
    return steps((r, size) -> Row.of(ks.next(r, size)), (r, size) -> Row.of(vs.next(r, size), vs.next(r, size)));
  }

  static Gen<List<Step>> steps(Gen<Row> keys, Gen<Row> vals) {
    Gen<Integer> dts = Gen.ints(0, 2);
    Gen<Long> diffs = Gen.of(-2L, -1L, 1L, 1L, 2L);
    // time = offset inside the batch, fixed up below
    Gen<Update> update = (r, size) -> new Update(keys.next(r, size), vals.next(r, size), dts.next(r, size), diffs.next(r, size));
    Gen<List<Update>> updates = update.list(0, 15);
    Gen<Integer> spans = Gen.ints(1, 3);
    Gen<Integer> sinceLags = Gen.ints(0, 4);
    Gen<Integer> fuels = Gen.ints(0, 12);
    Gen<Step> step = (r, size) -> new Step(updates.next(r, size), spans.next(r, size), sinceLags.next(r, size), fuels.next(r, size));
    return step.list(1, 40);
  }

  /** Oracle: the consolidated collection as of {@code time} over every update inserted so far. */
  static Map<List<Row>, Long> asOf(List<Update> all, long time) {
    Map<List<Row>, Long> m = new TreeMap<>((x, y) -> {
      int c = x.get(0).compareTo(y.get(0));
      return c != 0 ? c : x.get(1).compareTo(y.get(1));
    });
    for (Update u : all) {
      if (u.time() <= time) {
        m.merge(List.of(u.key(), u.val()), u.diff(), (a, b) -> a + b == 0 ? null : a + b);
      }
    }
    return m;
  }

  static Map<List<Row>, Long> asMap(List<Update> read) {
    Map<List<Row>, Long> m = new TreeMap<>((x, y) -> {
      int c = x.get(0).compareTo(y.get(0));
      return c != 0 ? c : x.get(1).compareTo(y.get(1));
    });
    for (Update u : read) {
      if (m.put(List.of(u.key(), u.val()), u.diff()) != null) {
        throw new AssertionError("readAt returned " + u + " twice");
      }
    }
    return m;
  }

  static void assertWellFormed(Batch b) {
    for (int i = 0; i < b.size(); i++) {
      if (b.diff(i) == 0) {
        throw new AssertionError("entry " + i + " of " + b + " has diff 0: " + b.update(i));
      }
      if (i > 0 && b.compareEntry(i - 1, b, i) >= 0) {
        throw new AssertionError("entries " + (i - 1) + " and " + i + " of " + b + " are not strictly sorted: " + b.update(i - 1) + ", " + b.update(i));
      }
    }
  }

  @Test
  void fueledMergesAndLogicalCompactionPreserveTheCollectionAtEveryTimeSinceOn() {
    Property.tries(100).forAll(steps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, KEY, VAL));
  }

  @Test
  void theSameWithLongColumnsOnly() {
    Property.tries(100).forAll(longSteps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, LONG_KEY, LONG_VAL));
  }

  @Test
  void theSameWithOneKeyAndOneValueColumn() {
    Property.tries(100).forAll(idCountSteps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, ID_KEY, COUNT_VAL));
  }

  /**
   * Merges whose output is chunked (chunks of 2 and of 8 entries, so most merges here chunk theirs
   * and later merges read chunked inputs): the same collection at every time, read through the
   * chunked columns.
   */
  @Test
  void theSameWithMergeOutputInSmallChunks() {
    chunkedBatchesSeen = 0;
    for (int shift : new int[] {1, 3}) {
      Property.tries(60).forAll(longSteps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, LONG_KEY, LONG_VAL, shift));
      Property.tries(60).forAll(idCountSteps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, ID_KEY, COUNT_VAL, shift));
      Property.tries(60).forAll(idPairSteps(), s -> fueledMergesAndLogicalCompactionPreserveTheCollection(s, ID_KEY, LONG_VAL, shift));
    }
    assertThat(chunkedBatchesSeen).as("batches read with chunked columns").isGreaterThan(100);
  }

  /** Batches with a chunked first column that {@link #checkEveryTime} read (single-threaded tests). */
  private static int chunkedBatchesSeen;

  @Test
  void mergeAllHoldsEveryUpdateOfConsecutiveBatchesSortedAndConsolidated() {
    Property.tries(100).forAll(steps(), s -> mergeAllHoldsEveryUpdate(s, KEY, VAL));
    Property.tries(100).forAll(longSteps(), s -> mergeAllHoldsEveryUpdate(s, LONG_KEY, LONG_VAL));
  }

  /** Oracle: every update of the batches, consolidated per (key, val, time), in (key, val, time) order. */
  private static void mergeAllHoldsEveryUpdate(List<Step> steps, Schema keySchema, Schema valSchema) {
    List<Batch> batches = new ArrayList<>();
    List<Update> all = new ArrayList<>();
    long lower = 3;
    long maxSince = 0;
    for (Step s : steps) {
      long upper = lower + s.span();
      // sometimes compacted past its upper (times advanced to since): its updates may then meet
      // the next batch's at equal times, and the merge must consolidate them
      long since = s.fuel() % 3 == 0 ? upper + 1 : lower - s.sinceLag() % 3;
      List<Update> batch = new ArrayList<>();
      for (Update u : timed(s, lower)) {
        batch.add(new Update(u.key(), u.val(), Math.max(u.time(), since), u.diff()));
      }
      Batch b = Batch.fromUpdates(keySchema, valSchema, batch, new Description(lower, upper, since));
      lower = upper + s.sinceLag() % 2; // sometimes a gap: ticks that sealed nothing
      if (b.isEmpty()) {
        continue;
      }
      all.addAll(batch);
      maxSince = Math.max(maxSince, b.description().since());
      batches.add(b);
    }
    if (batches.isEmpty()) {
      return;
    }
    Batch merged = Batch.mergeAll(batches);
    assertWellFormed(merged);
    assertThat(merged.description()).isEqualTo(new Description(batches.get(0).description().lower(),
        batches.get(batches.size() - 1).description().upper(), maxSince));
    assertThat(merged.id()).isNotIn(batches.stream().map(Batch::id).toList());
    Map<Update, Long> expected = new TreeMap<>(Update.ORDER);
    for (Update u : all) {
      expected.merge(new Update(u.key(), u.val(), u.time(), 0), u.diff(), (a, b) -> a + b == 0 ? null : a + b);
    }
    List<Update> actual = new ArrayList<>();
    for (int i = 0; i < merged.size(); i++) {
      actual.add(merged.update(i));
    }
    List<Update> want = new ArrayList<>();
    expected.forEach((u, d) -> want.add(new Update(u.key(), u.val(), u.time(), d)));
    assertThat(actual).isEqualTo(want);
  }

  @Test
  void mergeAllRefusesBatchesThatAreNotConsecutive() {
    Batch a = Batch.fromUpdates(ID_KEY, COUNT_VAL, List.of(new Update(Row.of(1L), Row.of(1L), 0, 1)), new Description(0, 2, 0));
    Batch b = Batch.fromUpdates(ID_KEY, COUNT_VAL, List.of(new Update(Row.of(2L), Row.of(1L), 1, 1)), new Description(1, 3, 0));
    assertThatThrownBy(() -> Batch.mergeAll(List.of(a, b))).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not consecutive");
  }

  /** The step's updates at times inside its batch's bounds, [lower, lower + span). */
  private static List<Update> timed(Step s, long lower) {
    List<Update> out = new ArrayList<>();
    for (Update u : s.updates()) {
      out.add(new Update(u.key(), u.val(), lower + Math.min(u.time(), s.span() - 1), u.diff()));
    }
    return out;
  }

  private static void fueledMergesAndLogicalCompactionPreserveTheCollection(List<Step> steps, Schema keySchema, Schema valSchema) {
    fueledMergesAndLogicalCompactionPreserveTheCollection(steps, keySchema, valSchema, 0);
  }

  private static void fueledMergesAndLogicalCompactionPreserveTheCollection(List<Step> steps, Schema keySchema, Schema valSchema,
      int chunkShift) {
    Spine spine = chunkShift == 0 ? new Spine(keySchema, valSchema) : new Spine(keySchema, valSchema, chunkShift, 1 << chunkShift);
    List<Update> all = new ArrayList<>();
    long lower = 0;
    for (Step s : steps) {
      long upper = lower + s.span();
      List<Update> batch = timed(s, lower);
      all.addAll(batch);
      Description d = new Description(lower, upper, spine.since());
      Batch b;
      if (keySchema == KEY) {
        b = Batch.fromUpdates(keySchema, valSchema, batch, d);
      } else {
        UpdateBuffer buf = new UpdateBuffer(keySchema, valSchema);
        batch.forEach(u -> buf.add(u.key(), u.val(), u.time(), u.diff()));
        b = buf.seal(d);
      }
      assertWellFormed(b);
      spine.insert(b);
      assertThat(spine.upper()).isEqualTo(upper);
      spine.advanceSince(Math.max(0, upper - 1 - s.sinceLag()));
      spine.exert(s.fuel());
      lower = upper;
      checkEveryTime(spine, all);
    }
    spine.advanceSince(spine.upper() - 1);
    spine.compact();
    assertThat(spine.batchCount()).isLessThanOrEqualTo(1);
    checkEveryTime(spine, all);
  }

  private static void checkEveryTime(Spine spine, List<Update> all) {
    for (Batch b : spine.batches()) {
      assertWellFormed(b);
      if (b.keyColumn(0) instanceof ColumnVector.Longs l && l.longs() == null) {
        chunkedBatchesSeen++;
      }
      assertThat(b.description().upper()).isLessThanOrEqualTo(spine.upper());
    }
    for (long t = spine.since(); t < spine.upper(); t++) {
      assertThat(asMap(spine.readAt(t))).as("collection as of %d (since %d)", t, spine.since()).isEqualTo(asOf(all, t));
    }
    assertThat(asMap(spine.contents())).isEqualTo(asOf(all, Long.MAX_VALUE));
  }

  @Test
  void batchFromUpdatesIsSortedAndConsolidated() {
    Schema k = Schema.of(Column.of("k", Type.BIGINT));
    Schema v = Schema.of(Column.of("v", Type.TEXT));
    Batch b =
        Batch.fromUpdates(
            k,
            v,
            List.of(
                new Update(Row.of(2L), Row.of("a"), 5, 1),
                new Update(Row.of((Object) null), Row.of("a"), 5, 1),
                new Update(Row.of(1L), Row.of("b"), 5, 1),
                new Update(Row.of(1L), Row.of("b"), 5, -1),
                new Update(Row.of(2L), Row.of("a"), 5, 2),
                new Update(Row.of(2L), Row.of("a"), 4, 1)),
            new Description(4, 6, 0));
    assertWellFormed(b);
    assertThat(List.of(b.update(0), b.update(1), b.update(2)))
        .containsExactly(
            new Update(Row.of((Object) null), Row.of("a"), 5, 1),
            new Update(Row.of(2L), Row.of("a"), 4, 1),
            new Update(Row.of(2L), Row.of("a"), 5, 3));
    assertThat(b.size()).isEqualTo(3);
  }

  @Test
  void fromColumnsRejectsUnsortedDuplicateAndZeroDiffInput() {
    Schema k = Schema.of(Column.of("k", Type.BIGINT));
    Description d = new Description(0, 2, 0);
    assertThat(load(k, d, new long[] {1, 2, 3}, new long[] {0, 0, 0}, new long[] {1, 1, -1}).size()).isEqualTo(3);
    assertThat(load(k, d, new long[] {1, 1}, new long[] {0, 1}, new long[] {1, 1}).size()).isEqualTo(2);
    assertThatThrownBy(() -> load(k, d, new long[] {2, 1}, new long[] {0, 0}, new long[] {1, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not strictly sorted");
    assertThatThrownBy(() -> load(k, d, new long[] {1, 1}, new long[] {1, 0}, new long[] {1, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not strictly sorted");
    assertThatThrownBy(() -> load(k, d, new long[] {1, 1}, new long[] {0, 0}, new long[] {1, 1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not strictly sorted");
    assertThatThrownBy(() -> load(k, d, new long[] {1, 2}, new long[] {0, 0}, new long[] {1, 0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("diff 0");
    ColumnVector.Builder text = ColumnVector.builder(Type.TEXT, 1);
    text.add("x");
    assertThatThrownBy(
            () -> Batch.fromColumns("b1", k, Schema.EMPTY, d, List.of(text.build()), List.of(), new long[] {0}, new long[] {1}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("column 'k' is TEXT");
  }

  private static Batch load(Schema k, Description d, long[] keys, long[] times, long[] diffs) {
    ColumnVector.Builder kb = ColumnVector.builder(Type.BIGINT, keys.length);
    for (long x : keys) {
      kb.add(x);
    }
    return Batch.fromColumns("b1", k, Schema.EMPTY, d, List.of(kb.build()), List.of(), times, diffs);
  }
}
