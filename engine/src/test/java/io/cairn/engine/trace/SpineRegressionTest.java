package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Regression tests for spine bugs, each named after what it guards. */
class SpineRegressionTest {
  static final Schema K = Schema.of(Column.of("k", Type.BIGINT));
  static final Schema V = Schema.of(Column.of("v", Type.BIGINT));

  static Batch batch(long tick, int size, long firstKey) {
    List<Update> us = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      us.add(new Update(Row.of(firstKey + i), Row.of(0L), tick, 1));
    }
    return Batch.fromUpdates(K, V, us, new Description(tick, tick + 1, 0));
  }

  static double log2(long n) {
    return Math.log(n) / Math.log(2);
  }

  /**
   * A merge that completes in the middle of the spine (after a newer batch arrived) must still be
   * merged with its neighbour of comparable size. When only the two newest batches were
   * considered, one-update ticks with ample fuel left n/8 batches of 8 updates each.
   */
  @Test
  void mergeCompletedInTheMiddleIsMergedWithItsComparableNeighbour() {
    Spine spine = new Spine(K, V);
    int worst = 0;
    for (long tick = 0; tick < 4096; tick++) {
      spine.insert(batch(tick, 1, tick));
      spine.advanceSince(tick);
      spine.exert(4096);
      worst = Math.max(worst, spine.batchCount());
    }
    assertThat(spine.contents()).hasSize(4096);
    assertThat((double) worst).isLessThanOrEqualTo(2 * log2(4096) + 4);
  }

  /**
   * {@link Spine#compact()} must finish merges that completed merges start: it used to cast a
   * freshly started {@code Merger} to {@code Batch} (ClassCastException) or return with a merge still pending.
   */
  @Test
  void compactCompletesMergesStartedByCompletedMerges() {
    Spine spine = new Spine(K, V);
    spine.insert(batch(0, 5, 0));
    spine.insert(batch(1, 2, 100));
    spine.insert(batch(2, 2, 200)); // merges with the previous one; the result (4) is comparable to 5: a merge a completed merge starts
    spine.advanceSince(2);
    spine.compact();
    assertThat(spine.batchCount()).isEqualTo(1);
    assertThat(spine.contents()).hasSize(9);
    assertThat(spine.batches().get(0).description()).isEqualTo(new Description(0, 3, 2));
  }
}
