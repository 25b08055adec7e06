package io.cairn.engine.sql;

import java.time.Duration;

/**
 * A statement stopped before it finished: its {@link StatementBudget} ran out ({@link #TIMEOUT})
 * or its client cancelled it ({@link #USER_REQUEST}). PostgreSQL's SQLSTATE for both is 57014
 * ({@code query_canceled}); over HTTP a timeout is 504 and a cancel is never answered (the client
 * has gone). Nothing the statement would have changed was changed.
 */
public final class StatementCanceledException extends SqlException {
  /** The reason when the timeout passed. */
  public static final String TIMEOUT = "statement timeout";
  /** The reason when the client cancelled. */
  public static final String USER_REQUEST = "user request";

  private final String reason;

  StatementCanceledException(String reason, Duration timeout) {
    this(reason, timeout, null);
  }

  StatementCanceledException(String reason, Duration timeout, String waitingFor) {
    super(message(reason, timeout, waitingFor));
    this.reason = reason;
  }

  private static String message(String reason, Duration timeout, String waitingFor) {
    String m = "canceling statement due to " + reason;
    if (TIMEOUT.equals(reason) && timeout != null) {
      m += " (statement_timeout = " + timeout.toMillis() + "ms; SET statement_timeout, or sql.statement-timeout in the config)";
    }
    return waitingFor == null ? m : m + ": " + waitingFor;
  }

  /** {@link #TIMEOUT} or {@link #USER_REQUEST}. */
  public String reason() {
    return reason;
  }

  /** Whether the statement ran out of time (rather than being cancelled by its client). */
  public boolean timedOut() {
    return TIMEOUT.equals(reason);
  }
}
