package io.cairn.engine.runtime;

import io.cairn.engine.source.SourceOffsets;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * What the engine shows of one source, as published by the thread that owns the source's client
 * after each tick. Immutable: status, metrics, HTTP and the CLI read these values and never call
 * into a source's client (a Kafka consumer must not be touched by a second thread).
 *
 * @param state RUNNING; RESTARTING after a retriable error (views keep serving the state as of
 *     {@code offsets}); FAILED after an error restarts cannot fix (see {@code error})
 * @param caughtUp whether the source had delivered everything at its head when last checked
 * @param offsets the offsets of the last closed tick: the position the source's state is at
 * @param load the source's load meter when last read
 * @param error the last error, or null
 * @param attempts restart attempts since the source last ran steadily
 * @param nextAttempt when RESTARTING, when the next attempt is due (else null)
 */
public record SourceStatus(
    String name,
    State state,
    boolean caughtUp,
    SourceOffsets offsets,
    Map<String, Long> load,
    String error,
    int attempts,
    Instant nextAttempt) {
  public enum State {
    RUNNING,
    RESTARTING,
    FAILED
  }

  public SourceStatus {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(offsets, "offsets");
    load = Map.copyOf(load);
  }
}
