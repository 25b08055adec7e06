package io.cairn.recovery.http;

/** What the HTTP endpoint serves; implemented by the node. Each method returns the response body. */
public interface NodeApi {
  /**
   * Runs SQL statements; returns the results as text tables ({@code format} "table"), CSV ("csv")
   * or a JSON array of {@code {columns, rows, message}} ("json"). Throws IllegalArgumentException
   * on bad SQL or an unknown format.
   */
  String sql(String statements, String format);

  /** The media type of {@link #sql} results in {@code format}. */
  static String sqlContentType(String format) {
    return switch (format) {
      case "json" -> "application/json";
      case "csv" -> "text/csv; charset=utf-8";
      default -> "text/plain; charset=utf-8";
    };
  }

  /** Status as JSON: state, tick, sources with offsets and lag, views with their state. */
  String statusJson();

  /** Takes a snapshot now; returns its figures as JSON. */
  String snapshotJson();

  /** Prometheus text exposition. */
  String prometheus();

  /** The last recovery report as JSON. */
  String recoveryReportJson();
}
