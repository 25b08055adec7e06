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
 *
 * <p>An error {@linkplain #atRecord() at a record} is one that a record causes (a bad record under
 * {@code fail}, one that cannot be dead-lettered): it is thrown from {@code poll} with the records
 * delivered before that record standing and {@code position()} exactly after them, so the engine
 * keeps those records in the open tick and records that position; a restart from there meets the
 * same record first. Such an error, when retriable, is tried again once: the same error at the
 * same position a second time fails the source for good (never a restart loop on one record).
 */
public class SourceException extends RuntimeException {
  private final boolean retriable;
  private final boolean atRecord;

  public SourceException(String message, boolean retriable) {
    this(message, null, retriable, false);
  }

  public SourceException(String message, Throwable cause, boolean retriable) {
    this(message, cause, retriable, false);
  }

  /**
   * @param atRecord the error is caused by the record at the source's position: the records the
   *     failing {@code poll} delivered before it stand, and {@code position()} is exactly after them
   */
  public SourceException(String message, Throwable cause, boolean retriable, boolean atRecord) {
    super(message, cause);
    this.retriable = retriable;
    this.atRecord = atRecord;
  }

  /** A problem that trying again cannot fix. */
  public static SourceException fatal(String message) {
    return new SourceException(message, false);
  }

  /**
   * Whether the record at the source's position caused this error: what the failing {@code poll}
   * delivered before it stands and {@code position()} is exactly before that record.
   */
  public boolean atRecord() {
    return atRecord;
  }

  /** Whether {@code e}, thrown by a source's {@code poll}, is {@linkplain #atRecord() at a record}. */
  public static boolean isAtRecord(Throwable e) {
    return e instanceof SourceException s && s.atRecord();
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
