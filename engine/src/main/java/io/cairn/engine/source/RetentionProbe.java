package io.cairn.engine.source;

import java.time.Duration;

/**
 * An optional ability of a {@link SourceConnector}: reads, from the system a source reads, the
 * settings that decide how long it keeps what a recovery replays ({@link RetentionLimits}). The
 * node's {@code advise} command compares them with what a snapshot schedule needs; it never names
 * a source type.
 */
@FunctionalInterface
public interface RetentionProbe {
  /**
   * Reads the limits of what {@code definition} reads, with a short-lived client of its own (never
   * the running source's), every network call bounded by {@code timeout}.
   *
   * @throws RuntimeException naming the source and what could not be read (the system unreachable,
   *     the topic missing, no answer within {@code timeout}); the caller reports it and goes on
   */
  RetentionLimits probe(SourceDefinition definition, Secrets secrets, Duration timeout);
}
