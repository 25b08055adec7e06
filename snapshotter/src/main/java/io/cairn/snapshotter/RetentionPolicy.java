package io.cairn.snapshotter;

import java.time.Duration;
import java.util.Objects;

/**
 * Which snapshots garbage collection keeps: the newest {@code keepLast} valid ones, and the newest
 * valid one of each of the last {@code dailyDays} calendar days (in the schedule's zone, today
 * included). Files are deleted only when no kept manifest references them and they are older than
 * {@code grace}; manifests younger than {@code grace} are never deleted.
 */
public record RetentionPolicy(int keepLast, int dailyDays, Duration grace) {
  public RetentionPolicy {
    Objects.requireNonNull(grace, "grace");
    if (keepLast < 1) {
      throw new IllegalArgumentException("snapshots.retention.keep-last must be >= 1, got " + keepLast);
    }
    if (dailyDays < 0) {
      throw new IllegalArgumentException("snapshots.retention.keep-daily-days must be >= 0, got " + dailyDays);
    }
    if (grace.isNegative()) {
      throw new IllegalArgumentException("snapshots.retention.gc-grace must not be negative, got " + grace);
    }
  }
}
