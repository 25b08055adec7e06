package io.cairn.recovery.http;

/** What the HTTP endpoint serves; implemented by the node. Each method returns the response body. */
public interface NodeApi {
  /** Runs SQL statements; returns the results as text tables. Throws IllegalArgumentException on bad SQL. */
  String sql(String statements);

  /** Status as JSON: state, tick, sources with offsets and lag, views with their state. */
  String statusJson();

  /** Takes a snapshot now; returns its figures as JSON. */
  String snapshotJson();

  /** Prometheus text exposition. */
  String prometheus();

  /** The last recovery report as JSON. */
  String recoveryReportJson();
}
