package io.cairn.recovery.http;

import io.cairn.engine.sql.StatementBudget;

/**
 * What the HTTP endpoint serves; implemented by the node. Each method returns the response body.
 * Any method may throw {@link NodeUnavailableException} when the node cannot serve it now
 * (recovering, fenced): that is the node's state, not the request's fault.
 */
public interface NodeApi {
  /**
   * Runs SQL statements within {@code budget} (the statement timeout; the endpoint cancels it when
   * the client disconnects); returns the results as text tables ({@code format} "table"), CSV
   * ("csv") or a JSON array of {@code {columns, rows, message}} ("json"). Throws
   * IllegalArgumentException or {@link io.cairn.engine.sql.SqlException} on bad SQL or an unknown
   * format, {@link io.cairn.engine.sql.StatementCanceledException} when the budget ran out.
   */
  String sql(String statements, String format, StatementBudget budget);

  /** The statement timeout a request gets ({@code sql.statement-timeout}; null: none). */
  java.time.Duration statementTimeout();

  /** The media type of {@link #sql} results in {@code format}. */
  static String sqlContentType(String format) {
    return switch (format) {
      case "json" -> "application/json";
      case "csv" -> "text/csv; charset=utf-8";
      default -> "text/plain; charset=utf-8";
    };
  }

  /**
   * Status as JSON: state and phase (from the first second of a start, through recovery and
   * catch-up), tick, sources with offsets and lag, views with their state, liveness and readiness.
   * Never waits for a tick, a snapshot or a statement.
   */
  String statusJson();

  /** Takes a snapshot now; returns its figures as JSON. */
  String snapshotJson();

  /** Prometheus text exposition; never waits for a tick. */
  String prometheus();

  /** The last recovery report as JSON (a {@link NodeUnavailableException} while the first recovery runs). */
  String recoveryReportJson();

  /** Whether the process works (liveness) and whether it serves caught-up views (readiness), and why not. */
  Health health();

  /**
   * Liveness and readiness, as Kubernetes probes ask them: {@code live} — the process answers and
   * no thread is deadlocked (restart it if not); {@code ready} — recovery is over, the node is
   * not fenced, and every source has caught up (send it traffic). {@code why} says what is
   * missing, or is empty.
   */
  record Health(boolean live, boolean ready, String state, String why) {
    public Health {
      java.util.Objects.requireNonNull(state, "state");
      why = why == null ? "" : why;
    }
  }
}
