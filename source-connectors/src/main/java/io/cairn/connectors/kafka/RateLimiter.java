package io.cairn.connectors.kafka;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * A token bucket of records per second with a burst of about a tenth of a second's worth (at
 * least one record). {@link #permits} waits (through the injected sleeper) for at least one
 * permit, bounded by the caller's timeout. Single-threaded, like the source that owns it.
 */
final class RateLimiter {
  /** Sleeps for the given nanoseconds (injected so tests can run on a fake clock). */
  @FunctionalInterface
  interface Sleeper {
    void sleepNanos(long nanos) throws InterruptedException;
  }

  private final LongSupplier nanoTime;
  private final Sleeper sleeper;
  private double ratePerSecond;
  private double tokens;
  private long lastRefill;

  RateLimiter(LongSupplier nanoTime, Sleeper sleeper) {
    this.nanoTime = nanoTime;
    this.sleeper = sleeper;
  }

  /** Sets the rate (records per second); 0 or less removes the cap. */
  void setRate(double recordsPerSecond) {
    if (Double.isNaN(recordsPerSecond) || Double.isInfinite(recordsPerSecond)) {
      throw new IllegalArgumentException("Cannot set read rate limit: " + recordsPerSecond + " is not a finite number");
    }
    ratePerSecond = Math.max(0, recordsPerSecond);
    tokens = 0;
    lastRefill = nanoTime.getAsLong();
  }

  double rate() {
    return ratePerSecond;
  }

  /**
   * How many of {@code wanted} records may be read now: {@code wanted} when uncapped; otherwise the
   * whole permits available, waiting up to {@code maxWait} for the first one (0 when none came).
   */
  int permits(int wanted, Duration maxWait) {
    if (ratePerSecond <= 0 || wanted <= 0) {
      return wanted;
    }
    refill();
    if (tokens < 1) {
      long needNanos = (long) Math.ceil((1 - tokens) / ratePerSecond * 1e9);
      long wait = Math.min(needNanos, maxWait.toNanos());
      if (wait > 0) {
        try {
          sleeper.sleepNanos(wait);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return 0;
        }
      }
      refill();
      if (tokens < 1) {
        return 0;
      }
    }
    return (int) Math.min(wanted, Math.floor(tokens));
  }

  /** Takes {@code n} permits (after reading {@code n} records). */
  void consumed(int n) {
    if (ratePerSecond > 0) {
      tokens -= n;
    }
  }

  private void refill() {
    long now = nanoTime.getAsLong();
    double burst = Math.max(1, ratePerSecond / 10);
    tokens = Math.min(burst, tokens + (now - lastRefill) / 1e9 * ratePerSecond);
    lastRefill = now;
  }
}
