package io.cairn.node;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.sql.Result;
import io.cairn.engine.sql.StatementBudget;
import java.util.List;

/**
 * What a node serves to its {@link Frontend}s (the HTTP endpoint, the pgwire listener);
 * implemented by the node. Query results are the engine's typed {@link Result} (columns with their
 * types, rows, a message) and errors carry a SQLSTATE ({@link io.cairn.engine.sql.SqlState#of}):
 * one contract, which each frontend renders in its own format. Any method may throw {@link
 * NodeUnavailableException} when the node cannot serve it now (recovering, fenced): that is the
 * node's state, not the request's fault.
 */
public interface NodeApi {
  /**
   * Runs one request's SQL statements as a unit within {@code budget} (the statement timeout; a
   * frontend cancels it when its client cancels or disconnects) and returns one result per
   * statement. At most {@code sql.max-concurrent-statements} requests execute at once; the others
   * wait within their budget.
   *
   * @throws io.cairn.engine.sql.SqlException on bad SQL
   * @throws io.cairn.engine.sql.StatementCanceledException when the budget ran out or was cancelled
   */
  List<Result> execute(List<String> statements, StatementBudget budget);

  /**
   * Starts a {@code SUBSCRIBE}: the columns it sends ({@link io.cairn.engine.sql.Subscribe#columns})
   * and its reader, which the frontend closes when its client goes. At most {@code
   * sql.subscribe-max-rows} rows wait for a subscriber; one that falls further behind is ended.
   *
   * @throws io.cairn.engine.sql.SqlException when there is no such source or view (42P01)
   */
  io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement);

  /** The catalog position: what a frontend caches for a statement is valid while it is unchanged. */
  long catalogPosition();

  /** The sources and views, in catalog order (for catalog queries: psql's {@code \d}, JDBC metadata). Never waits. */
  List<Dataflow> dataflows();

  /** The statement timeout a request gets ({@code sql.statement-timeout}; null: none). */
  java.time.Duration statementTimeout();

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

  /**
   * Advice on the snapshot schedule for a recovery within {@code target} ({@code cairn advise}):
   * from the node's measured rates, the schedule that meets it, the retention that schedule needs
   * of every source, and the sources' settings that fall short. Asks each source's system for its
   * settings, each within a few seconds (a source that does not answer is a warning). Default:
   * not available from this frontend's node.
   */
  default io.cairn.node.advise.AdviceReport advise(java.time.Duration target) {
    throw new NodeUnavailableException(NodeUnavailableException.Reason.NOT_READY, "Cannot advise: not available on this node");
  }

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
