package io.cairn.engine.source;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the system a source reads keeps for a replay, as read from its settings by a {@link
 * RetentionProbe}: how old and how large the retained data may grow before the system deletes it
 * (a Kafka topic's {@code retention.ms} and {@code retention.bytes}) or stops keeping it (a Postgres
 * server's {@code max_slot_wal_keep_size}), and which snapshots a recovery can resume from.
 *
 * @param reach which snapshots' offsets the system can still serve
 * @param maxAge data older than this may be deleted; null: nothing is deleted by age
 * @param maxBytes bytes kept in each of {@code shares} equal parts before the oldest are deleted or
 *     the slot is invalidated; -1: unbounded
 * @param shares how many parts {@code maxBytes} bounds separately (a topic's partitions; 1 for a
 *     slot); at least 1
 * @param bytesPerSecond how fast what {@code maxBytes} bounds grows, measured by the probe (the
 *     server's WAL rate for a slot, which retains the WAL of every table); -1 when not measured
 *     (the caller then uses the source's own ingest rate in bytes)
 * @param settings what was read, by the name the system gives it ({@code retention.ms=604800000})
 * @param notes anything else a person should know (a slot already lost, a policy that deletes
 *     nothing by age)
 */
public record RetentionLimits(
    Reach reach, Duration maxAge, long maxBytes, int shares, double bytesPerSecond, Map<String, String> settings,
    List<String> notes) {
  /** Which snapshots' offsets a source can resume from. */
  public enum Reach {
    /** Any snapshot still retained in the store, as long as the data since its offsets is kept (Kafka). */
    ANY_SNAPSHOT,
    /**
     * Only the newest committed snapshot: the system is told, after each commit, that what precedes
     * its offsets may go (a Postgres replication slot's confirmed LSN).
     */
    NEWEST_SNAPSHOT
  }

  public RetentionLimits {
    Objects.requireNonNull(reach, "reach");
    if (maxAge != null && maxAge.isNegative()) {
      throw new IllegalArgumentException("Cannot describe retention: maxAge " + maxAge + " is negative (null: unlimited)");
    }
    if (maxBytes < -1) {
      throw new IllegalArgumentException("Cannot describe retention: maxBytes " + maxBytes + " is below -1 (-1: unlimited)");
    }
    if (shares < 1) {
      throw new IllegalArgumentException("Cannot describe retention: shares " + shares + " must be at least 1");
    }
    if (Double.isNaN(bytesPerSecond) || (bytesPerSecond < 0 && bytesPerSecond != -1)) {
      throw new IllegalArgumentException("Cannot describe retention: bytesPerSecond " + bytesPerSecond
          + " must be >= 0, or -1 when not measured");
    }
    settings = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(settings));
    notes = List.copyOf(notes);
  }
}
