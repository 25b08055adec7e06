package io.cairn.engine.sink;

/**
 * Where a view's changes leave the node: the counterpart of {@link io.cairn.engine.source.Source},
 * found the same way (a {@link SinkConnector} through {@link java.util.ServiceLoader}). Nothing
 * implements it yet; issue 33 adds the Kafka sink. It reads the view's {@link ChangeFeed}.
 *
 * <p>Contract (exactly once out):
 *
 * <ul>
 *   <li>{@link #emit} commits one tick's changes together with the sink's progress ("emitted
 *       through tick T") atomically in the destination (a Kafka transaction), under an identity
 *       stable across restarts and nodes, so that a newer owner fences an older one.
 *   <li>{@link #emittedThrough()} is read back from the destination when the sink opens (after
 *       fencing any older writer): ticks up to it that recovery recomputes are not emitted again.
 *   <li>A snapshot records each sink's frontier; a sink never slows the engine (it reads the feed
 *       with a bounded buffer and, when the destination is down, restarts with backoff while the
 *       engine keeps ticking).
 * </ul>
 */
public interface Sink extends AutoCloseable {
  /** The last tick whose changes the destination holds, committed; -1 when none. */
  long emittedThrough();

  /** Commits {@code changes} (of one tick, after {@link #emittedThrough()}) and the new progress, atomically. */
  void emit(ChangeFeed.Changes changes);

  @Override
  void close();
}
