package io.cairn.engine.runtime;

import java.time.Duration;
import java.util.Objects;

/**
 * When a tick closes: once {@code maxRecords} records have been read, once {@code maxDuration}
 * has passed since it opened, or once the tick has read some records and a round of polls found
 * none while every source reports itself caught up — whichever comes first. {@code maxDuration}
 * bounds the latency of a result under a trickle of records and, under load, how many small
 * batches a spine receives; the early close keeps the end of a catch-up (a restore's last few
 * thousand records) from waiting out {@code maxDuration} for records that are not there. A tick
 * that read nothing still lasts {@code maxDuration}, so an idle engine does not spin. A zero
 * duration makes every tick take just what is ready (tests).
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
