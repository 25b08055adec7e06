package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A tick closes early once its sources are drained and caught up; an empty tick still waits out
 * maxDuration, except in a catch-up, which needs no more than its sources being caught up.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 5 s
class TickCloseTest {

  @Test
  void aTickThatDrainedItsSourcesClosesWithoutWaitingOutMaxDuration() {
    TickPolicy policy = new TickPolicy(100_000, Duration.ofSeconds(5));
    try (Engine e = Engine.builder().workers(1).tickPolicy(policy).build()) {
      e.createSource(1, new SourceDefinition("gen", "load-generator",
          Map.of("keys", "100", "limit", "3000", "seed", "1"), null, null, Envelope.UPSERT));
      long t0 = System.nanoTime();
      e.tick();
      long drained = System.nanoTime() - t0;
      assertThat(e.offsets().getOrDefault("gen", SourceOffsets.EMPTY).getLong("offset", 0)).isEqualTo(3000);
      assertThat(Duration.ofNanos(drained)).as("tick that read everything there was").isLessThan(Duration.ofSeconds(2));

      t0 = System.nanoTime();
      e.tick();
      long empty = System.nanoTime() - t0;
      assertThat(Duration.ofNanos(empty)).as("a tick that read nothing waits (no spinning)").isGreaterThanOrEqualTo(Duration.ofMillis(4900));
    }
  }

  @Test
  void aCatchUpTickWithNothingToReadClosesOnceTheSourcesAreCaughtUp() {
    TickPolicy policy = new TickPolicy(100_000, Duration.ofSeconds(5));
    try (Engine e = Engine.builder().workers(1).tickPolicy(policy).build()) {
      e.createSource(1, new SourceDefinition("gen", "load-generator",
          Map.of("keys", "100", "limit", "3000", "seed", "1"), null, null, Envelope.UPSERT));
      e.tick(); // reads all 3000
      assertThat(e.caughtUp()).isTrue();

      long t0 = System.nanoTime();
      long ticks = e.tickUntilCaughtUp(10);
      long took = System.nanoTime() - t0;
      assertThat(ticks).isEqualTo(1);
      assertThat(Duration.ofNanos(took)).as("a catch-up tick that read nothing, its sources caught up").isLessThan(Duration.ofSeconds(2));
      assertThat(e.offsets().getOrDefault("gen", SourceOffsets.EMPTY).getLong("offset", 0)).isEqualTo(3000);
    }
  }
}
