package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Spines under random batches, fuel-limited merging and logical compaction, compared with an
 * oracle over every inserted update; and the shape invariants of {@link Batch}.
 */
class SpinePropertyTest {
  static final Schema KEY = Schema.of(Column.of("k", Type.BIGINT), Column.of("t", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("d", Type.DOUBLE));

  /** One step: a batch of updates spanning {@code span} times, then {@code sinceLag} and {@code fuel}. */
  record Step(List<Update> updates, int span, int sinceLag, int fuel) {}

  @Provide
  Arbitrary<List<Step>> steps() {
    Arbitrary<Row> keys =
        Combinators.combine(Arbitraries.longs().between(0, 6).injectNull(0.1), Arbitraries.of("x", "y").injectNull(0.1))
            .as((k, t) -> Row.of(k, t));
    Arbitrary<Row> vals =
        Combinators.combine(Arbitraries.longs().between(0, 3).injectNull(0.1), Arbitraries.of(0.5, 1.25).injectNull(0.2))
            .as((v, d) -> Row.of(v, d));
    Arbitrary<Update> update =
        Combinators.combine(keys, vals, Arbitraries.integers().between(0, 2), Arbitraries.of(-2L, -1L, 1L, 1L, 2L))
            .as((k, v, dt, diff) -> new Update(k, v, dt, diff)); // time = offset inside the batch, fixed up below
    return Combinators.combine(
            update.list().ofMaxSize(15),
            Arbitraries.integers().between(1, 3),
            Arbitraries.integers().between(0, 4),
            Arbitraries.integers().between(0, 12))
        .as(Step::new)
        .list()
        .ofMinSize(1)
        .ofMaxSize(40);
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

  @Property(tries = 100)
  void fueledMergesAndLogicalCompactionPreserveTheCollectionAtEveryTimeSinceOn(@ForAll("steps") List<Step> steps) {
    Spine spine = new Spine(KEY, VAL);
    List<Update> all = new ArrayList<>();
    long lower = 0;
    for (Step s : steps) {
      long upper = lower + s.span();
      List<Update> batch = new ArrayList<>();
      for (Update u : s.updates()) {
        batch.add(new Update(u.key(), u.val(), lower + Math.min(u.time(), s.span() - 1), u.diff()));
      }
      all.addAll(batch);
      Batch b = Batch.fromUpdates(KEY, VAL, batch, new Description(lower, upper, spine.since()));
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
