package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A batch whose times (or diffs) are all equal keeps one value instead of a column; it reads,
 * merges and compares exactly like a batch that keeps the column.
 */
class ConstantColumnsTest {
  private static final Schema K = Schema.of(Column.of("k", Type.BIGINT));
  private static final Schema V = Schema.of(Column.of("v", Type.BIGINT));

  private static Batch sealed(List<Update> updates, long lower, long upper) {
    return Batch.fromUpdates(K, V, updates, new Description(lower, upper, 0));
  }

  @Test
  void aSealedTickOfInsertsKeepsNeitherColumnAndSavesSixteenBytesAnEntry() {
    List<Update> ups = new ArrayList<>();
    for (long k = 0; k < 10_000; k++) {
      ups.add(new Update(Row.of(k), Row.of(k * 7), 5, 1));
    }
    Batch b = sealed(ups, 5, 6);
    assertThat(b.timesOrNull()).isNull();
    assertThat(b.diffsOrNull()).isNull();
    assertThat(b.constantTime()).isEqualTo(5);
    assertThat(b.constantDiff()).isEqualTo(1);
    for (int i = 0; i < b.size(); i++) {
      assertThat(b.time(i)).isEqualTo(5);
      assertThat(b.diff(i)).isEqualTo(1);
      assertThat(b.update(i)).isEqualTo(new Update(Row.of((long) i), Row.of(i * 7L), 5, 1));
    }
    // key and value columns only, 8 bytes each, plus the batch's fixed overhead
    assertThat(b.heapBytes()).isLessThan(16L * b.size() + 1024);
  }

  @Test
  void mixedDiffsKeepTheirColumnAndConstantTimesStillDropTheirs() {
    Batch b = sealed(List.of(new Update(Row.of(1L), Row.of(1L), 3, 1), new Update(Row.of(2L), Row.of(2L), 3, -1)), 3, 4);
    assertThat(b.timesOrNull()).isNull();
    assertThat(List.of(b.diff(0), b.diff(1))).containsExactly(1L, -1L);
    assertThat(b.diffsOrNull()).isNotNull();
    Batch c = sealed(List.of(new Update(Row.of(1L), Row.of(1L), 3, 1), new Update(Row.of(1L), Row.of(1L), 4, 1)), 3, 5);
    assertThat(c.timesOrNull()).isNotNull();
    assertThat(c.diffsOrNull()).isNull();
  }

  /** Random merges of batches with and without constant columns, against the naive sum of their updates. */
  @Test
  void mergesOfConstantAndStoredColumnsEqualTheNaiveSum() {
    Random r = new Random(42);
    for (int round = 0; round < 300; round++) {
      List<Update> olderUps = new ArrayList<>();
      List<Update> newerUps = new ArrayList<>();
      boolean constOlder = r.nextBoolean();
      boolean constNewer = r.nextBoolean();
      int n = r.nextInt(200);
      for (int x = 0; x < n; x++) {
        long k = r.nextInt(50);
        olderUps.add(new Update(Row.of(k), Row.of(k % 3), constOlder ? 2 : r.nextInt(3), constOlder ? 1 : r.nextInt(5) - 2));
        newerUps.add(new Update(Row.of(k), Row.of(k % 3), constNewer ? 4 : 3 + r.nextInt(3), constNewer ? -1 : r.nextInt(5) - 2));
      }
      Batch older = sealed(olderUps, 0, 3);
      Batch newer = sealed(newerUps, 3, 6);
      long since = r.nextInt(7);
      Merger m = new Merger(older, newer, since);
      m.work(Long.MAX_VALUE);
      Batch merged = m.result();
      List<Update> all = new ArrayList<>();
      for (List<Update> ups : List.of(olderUps, newerUps)) {
        for (Update u : ups) {
          all.add(new Update(u.key(), u.val(), Math.max(u.time(), since), u.diff()));
        }
      }
      Batch expected = sealed(all, 0, 6);
      assertThat(merged.size()).as("round %d", round).isEqualTo(expected.size());
      for (int i = 0; i < merged.size(); i++) {
        assertThat(merged.update(i)).as("round %d entry %d", round, i).isEqualTo(expected.update(i));
      }
      if (constOlder && constNewer && since >= 4) {
        assertThat(merged.timesOrNull()).as("all times advanced to since: one time").isNull();
      }
    }
  }
}
