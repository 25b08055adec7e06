package io.cairn.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.row.Type;
import io.cairn.engine.sql.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How the HTTP endpoint renders the node's typed results ({@link Result}: columns with types,
 * rows, a message) in the format a request asks for ({@code ?format=}):
 *
 * <ul>
 *   <li>{@code table} (default): the psql-like text table of {@link Result#render()};
 *   <li>{@code csv}: RFC 4180 ({@link Result#renderCsv()});
 *   <li>{@code json}: an array with one {@code {columns, types, rows, message}} object per
 *       statement; a double that JSON cannot hold (NaN, ±Infinity) is its text, a DATE its ISO
 *       text ({@code "2024-03-31"}), a TIMESTAMP its microseconds since the epoch (UTC), a NUMERIC an
 *       exact JSON number ({@code 12.34}), an INTERVAL PostgreSQL's text ({@code "1 day 02:00:00"}).
 * </ul>
 *
 * pgwire renders the same results as RowDescription and DataRow messages.
 */
final class SqlResults {
  private static final ObjectMapper JSON = new ObjectMapper().enable(com.fasterxml.jackson.core.JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN)
      .registerModule(new com.fasterxml.jackson.databind.module.SimpleModule() // an INTERVAL as PostgreSQL writes it
          .addSerializer(io.cairn.engine.row.Interval.class, com.fasterxml.jackson.databind.ser.std.ToStringSerializer.instance));
  static final List<String> FORMATS = List.of("table", "json", "csv");

  private SqlResults() {}

  /**
   * Refuses an unknown format before any statement runs.
   *
   * @throws IllegalArgumentException naming the formats there are
   */
  static void checkFormat(String format) {
    if (!FORMATS.contains(format)) {
      throw new IllegalArgumentException("Unknown SQL result format '" + format + "': use table, json or csv");
    }
  }

  /** The media type of results in {@code format}. */
  static String contentType(String format) {
    return switch (format) {
      case "json" -> "application/json";
      case "csv" -> "text/csv; charset=utf-8";
      default -> "text/plain; charset=utf-8";
    };
  }

  /**
   * A subscription's rows ({@code tick, progressed, diff, columns…}) as newline-delimited JSON: {@code
   * {"tick":T,"diff":d,"row":{"column":value,…}}} per change and {@code {"tick":T,"progressed":true}}
   * per progress row.
   */
  static String ndjson(List<List<Object>> rows, List<String> columns) {
    StringBuilder sb = new StringBuilder();
    for (List<Object> r : rows) {
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("tick", r.get(0));
      if (Boolean.TRUE.equals(r.get(1))) {
        one.put("progressed", true);
      } else {
        one.put("diff", r.get(2));
        Map<String, Object> row = new LinkedHashMap<>();
        for (int i = 3; i < r.size(); i++) {
          Object v = r.get(i);
          row.put(columns.get(i), v instanceof Double d && (d.isNaN() || d.isInfinite()) ? d.toString() : v);
        }
        one.put("row", row);
      }
      try {
        sb.append(JSON.writeValueAsString(one)).append('\n');
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException("Cannot render a subscription's row as JSON: " + e.getMessage(), e);
      }
    }
    return sb.toString();
  }

  /** {@code results} in {@code format} (checked by {@link #checkFormat}). */
  static String render(List<Result> results, String format) {
    if (format.equals("json")) {
      List<Map<String, Object>> out = new ArrayList<>();
      for (Result r : results) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("columns", r.columns());
        one.put("types", r.types().stream().map(Type::name).toList());
        List<List<Object>> rows = new ArrayList<>(r.rows().size());
        for (List<Object> row : r.rows()) {
          List<Object> vals = new ArrayList<>(row.size());
          for (int i = 0; i < row.size(); i++) {
            Object v = row.get(i) instanceof java.math.BigDecimal n ? n // a NUMERIC stays a JSON number, written plain
                : Result.display(row.get(i), r.types().get(i)); // a DATE as its ISO text
            vals.add(v instanceof Double d && (d.isNaN() || d.isInfinite()) ? d.toString() : v); // JSON has no NaN
          }
          rows.add(vals);
        }
        one.put("rows", rows);
        one.put("message", r.message());
        out.add(one);
      }
      try {
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException("Cannot render results as JSON: " + e.getMessage(), e);
      }
    }
    StringBuilder sb = new StringBuilder();
    for (Result r : results) {
      sb.append(format.equals("csv") ? r.renderCsv() : r.render());
    }
    return sb.toString();
  }
}
