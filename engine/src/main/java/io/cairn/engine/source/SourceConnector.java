package io.cairn.engine.source;

/**
 * A kind of source ({@code LOAD GENERATOR}, {@code KAFKA}, {@code POSTGRES}), discovered with
 * {@link java.util.ServiceLoader} (register in {@code META-INF/services/io.cairn.engine.source.SourceConnector}).
 */
public interface SourceConnector {
  /** The connector's name as written in SQL after FROM, lower-case: "load-generator", "kafka", "postgres". */
  String name();

  /**
   * Checks a definition eagerly (required options present and well-formed, envelope supported,
   * schema and primary key consistent) and returns it completed (e.g. with the schema the
   * connector supplies). Throws {@link IllegalArgumentException} naming the option at fault.
   * Must not connect to anything.
   */
  SourceDefinition validate(SourceDefinition definition);

  /**
   * Opens a source for a validated definition. Secret references in the options are resolved
   * here through {@code secrets}.
   */
  Source open(SourceDefinition definition, Secrets secrets);

  /**
   * The connector's retention guard, if the system it reads can lose what a recovery needs before
   * the next snapshot (default: none).
   */
  default java.util.Optional<RetentionGuard> retentionGuard() {
    return java.util.Optional.empty();
  }

  /**
   * The connector's retention probe, if the system it reads deletes or stops keeping what a
   * recovery replays (default: none; the load generator replays any offset).
   */
  default java.util.Optional<RetentionProbe> retentionProbe() {
    return java.util.Optional.empty();
  }

  /**
   * Records per second a recovery's catch-up typically reads from such a source on a small
   * machine, for advice before a recovery has measured it (default: empty, the caller then
   * assumes a conservative figure of its own). A measured rate always wins.
   */
  default java.util.OptionalDouble typicalReplayRate() {
    return java.util.OptionalDouble.empty();
  }

  /**
   * Whether a second process may read this connector's sources at the same time as the node that
   * owns them, without disturbing it or the system read (default false). Kafka: yes — a reader
   * with no consumer group and no commits is invisible to others. A Postgres replication slot: no —
   * it has one reader, and confirming it moves what the owner can resume from. A standby reads
   * ahead ({@code standby.mode: hot}) only from sources that say yes.
   */
  default boolean sharedReads() {
    return false;
  }

  /**
   * Runs, without connecting to anything, the start-up code that a first connection runs and a
   * training with no server cannot reach (static initialisation of a client's protocol tables),
   * so that the class-data archive written by {@code cairn class-cache} holds its classes
   * (default: nothing). Must be quick and must not fail when nothing listens anywhere.
   */
  default void trainClassCache() {}
}
