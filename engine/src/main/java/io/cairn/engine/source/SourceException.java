package io.cairn.engine.source;

/**
 * A problem of a running source, saying whether trying again can help.
 *
 * <p>The engine restarts a source whose error is {@link #retriable()} (a broker or database that
 * went away, a timeout) from its last recorded position, with backoff (see {@code
 * RestartStrategy}); a source whose error is not (a bad record under {@code bad-records = 'fail'},
 * offsets no longer in the topic, a replication slot that was dropped) stays FAILED until an
 * operator acts, and the message says what to do. Any other unchecked exception a source throws
 * counts as retriable, except {@link IllegalArgumentException} (a definition or offsets that can
 * never work). Messages name the source and never contain a secret.
 */
public class SourceException extends RuntimeException {
  private final boolean retriable;

  public SourceException(String message, boolean retriable) {
    super(message);
    this.retriable = retriable;
  }

  public SourceException(String message, Throwable cause, boolean retriable) {
    super(message, cause);
    this.retriable = retriable;
  }

  /** A problem that trying again cannot fix. */
  public static SourceException fatal(String message) {
    return new SourceException(message, false);
  }

  /** Whether restarting the source from its last position can succeed. */
  public boolean retriable() {
    return retriable;
  }

  /** Whether {@code e}, thrown by a source, is worth a restart. */
  public static boolean isRetriable(Throwable e) {
    if (e instanceof SourceException s) {
      return s.retriable();
    }
    return !(e instanceof IllegalArgumentException);
  }
}
