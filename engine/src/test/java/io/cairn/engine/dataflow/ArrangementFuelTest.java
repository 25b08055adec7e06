package io.cairn.engine.dataflow;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The fuel {@link Arrangement#seal} gives its spine must let merges keep pace with insertion, so
 * a spine of n updates holds O(log n) batches whatever the tick sizes.
 */
class ArrangementFuelTest {
  static final Schema K = Schema.of(Column.of("k", Type.BIGINT));
  static final Schema V = Schema.of(Column.of("v", Type.BIGINT));

  static double bound(long n) {
    return 2 * Math.log(n) / Math.log(2) + 4;
  }

  /**
   * Guards the fuel policy: with fuel of only 4 × the batch size, merges fell behind once the
   * spine held more than ~16 ticks' worth of updates and the batch count grew linearly (about
   * one batch per 10 ticks of 100 updates).
   */
  @Test
  void sealKeepsTheBatchCountLogarithmicWhenTicksAreLarge() {
    Arrangement a = new Arrangement("t", K, V, 1);
    long n = 0;
    for (long tick = 1; tick <= 2000; tick++) {
      for (int i = 0; i < 100; i++) {
        a.stage(0, Row.of(n++), Row.of(tick), tick, 1);
      }
      a.seal(0, tick, 4);
      assertThat((double) a.spine(0).batchCount()).as("batches after %d ticks", tick).isLessThanOrEqualTo(bound(n));
    }
    assertThat(a.updateCount()).isEqualTo(n);
  }

  record TickSizes(int maxTick, long seed) {}

  @Test
  void sealKeepsTheBatchCountLogarithmicForRandomTickSizes() {
    Gen<Integer> maxTicks = Gen.ints(1, 300);
    Gen<Long> seeds = Gen.anyLong();
    Property.tries(15).forAll((r, size) -> new TickSizes(maxTicks.next(r, size), seeds.next(r, size)),
        c -> sealKeepsTheBatchCountLogarithmic(c.maxTick(), c.seed()));
  }

  private static void sealKeepsTheBatchCountLogarithmic(int maxTick, long seed) {
    Random rnd = new Random(seed);
    Arrangement a = new Arrangement("t", K, V, 1);
    long n = 0;
    for (long tick = 1; tick <= 600; tick++) {
      int size = rnd.nextInt(maxTick + 1);
      for (int i = 0; i < size; i++) {
        a.stage(0, Row.of(rnd.nextLong()), Row.of(0L), tick, 1);
      }
      n += size;
      a.seal(0, tick, 4);
      if (n > 0) {
        assertThat((double) a.spine(0).batchCount()).as("batches after %d ticks, %d updates", tick, n).isLessThanOrEqualTo(bound(n));
      }
    }
  }
}
