package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class RateLimiterTest {
  private long now;

  @Test
  void uncappedGivesEverythingAndCappedPacesRecordsOnTheInjectedClock() {
    RateLimiter l = new RateLimiter(() -> now, nanos -> now += nanos);
    assertThat(l.permits(500, Duration.ZERO)).isEqualTo(500);
    l.setRate(100); // burst 10
    long delivered = 0;
    long start = now;
    while (delivered < 1000) {
      int n = l.permits(500, Duration.ofMillis(100));
      assertThat(n).isBetween(0, 10);
      l.consumed(n);
      delivered += n;
    }
    double seconds = (now - start) / 1e9;
    assertThat(delivered / seconds).isBetween(95.0, 105.0);
  }

  @Test
  void waitsNoLongerThanTheTimeout() {
    RateLimiter l = new RateLimiter(() -> now, nanos -> now += nanos);
    l.setRate(1);
    assertThat(l.permits(5, Duration.ofMillis(10))).isZero();
    assertThat(now).isEqualTo(10_000_000L);
    assertThat(l.permits(5, Duration.ofSeconds(2))).isEqualTo(1);
  }
}
