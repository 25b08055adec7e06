package io.cairn.engine.runtime;

import java.time.Duration;
import java.util.Objects;

/**
 * When a tick closes: once {@code maxRecords} records have been read, once {@code maxDuration}
 * has passed since it opened, or as soon as a polling round finds nothing more after at least one
 * record arrived (so a quiet source does not hold results back).
 */
public record TickPolicy(int maxRecords, Duration maxDuration) {
  public static final TickPolicy DEFAULT = new TickPolicy(100_000, Duration.ofMillis(200));

  public TickPolicy {
    Objects.requireNonNull(maxDuration, "maxDuration");
    if (maxRecords <= 0) {
      throw new IllegalArgumentException("Cannot use tick policy: maxRecords " + maxRecords + " must be > 0");
    }
    if (maxDuration.isNegative()) {
      throw new IllegalArgumentException("Cannot use tick policy: maxDuration is negative");
    }
  }
}
