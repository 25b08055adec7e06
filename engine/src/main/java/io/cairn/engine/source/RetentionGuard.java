package io.cairn.engine.source;

import java.time.Duration;
import java.util.Optional;

/**
 * An optional ability of a {@link SourceConnector}: tells whether the system a source reads keeps
 * what a recovery from the latest snapshot would need until the next snapshot is taken (a Kafka
 * topic's retention, a Postgres server's WAL kept for a slot). The node asks every source's
 * connector at start and after each snapshot and shows what it returns as a warning; it never
 * names a source type.
 */
@FunctionalInterface
public interface RetentionGuard {
  /**
   * Checks the source {@code definition} reads against {@code snapshotInterval} (the time between
   * two snapshots). Connects with its own short-lived client, never the running source's; may take
   * a moment (a Postgres guard samples the WAL rate).
   *
   * @return a warning naming the source, what it keeps and what to change; empty when it keeps
   *     enough
   * @throws RuntimeException when the check itself cannot be made (the caller logs it and goes on)
   */
  Optional<String> check(SourceDefinition definition, Secrets secrets, Duration snapshotInterval);
}
