package io.cairn.engine.sql;

import java.util.List;
import java.util.Locale;

/**
 * The SQLSTATE of an error a statement ended with: the one error contract of every server
 * (pgwire's ErrorResponse, the HTTP endpoint's error body). An exception that knows its code says
 * it ({@link Carrier}: the node's "unavailable", pgwire's protocol errors); a budget that ended is
 * 57014 query_canceled. The engine's {@link SqlException} carries a message and a position but no
 * kind, so its code is chosen here, and only here, from the message's wording (the first matching
 * rule wins; the rules follow the engine's "Cannot X: reason" messages):
 *
 * <table>
 *   <tr><th>message contains</th><th>SQLSTATE</th></tr>
 *   <tr><td>"unsupported statement" (an unknown first word, e.g. {@code SELEC})</td><td>42601 syntax_error</td></tr>
 *   <tr><td>"unsupported", "is not available", "both change the catalog"</td><td>0A000 feature_not_supported</td></tr>
 *   <tr><td>"nested too deeply", "nested ... deep"</td><td>54001 statement_too_complex</td></tr>
 *   <tr><td>"syntax error", "Cannot parse statement"</td><td>42601 syntax_error</td></tr>
 *   <tr><td>"unknown table", "unknown view", "unknown source"</td><td>42P01 undefined_table</td></tr>
 *   <tr><td>"unknown column"</td><td>42703 undefined_column</td></tr>
 *   <tr><td>"is ambiguous"</td><td>42702 ambiguous_column</td></tr>
 *   <tr><td>"duplicate name", "already exists"</td><td>42P07 duplicate_table</td></tr>
 *   <tr><td>"dependents exist"</td><td>2BP01 dependent_objects_still_exist</td></tr>
 *   <tr><td>"(use DROP "</td><td>42809 wrong_object_type</td></tr>
 *   <tr><td>"must appear in the GROUP BY", "aggregate"… "not allowed"</td><td>42803 grouping_error</td></tr>
 *   <tr><td>"type mismatch"</td><td>42804 datatype_mismatch</td></tr>
 *   <tr><td>"unsupported function"</td><td>(0A000, by the first rule)</td></tr>
 *   <tr><td>"out of range"</td><td>22003 numeric_value_out_of_range</td></tr>
 *   <tr><td>"by zero"</td><td>22012 division_by_zero</td></tr>
 *   <tr><td>"Cannot evaluate"</td><td>22000 data_exception</td></tr>
 *   <tr><td>"Fenced"</td><td>57P01 admin_shutdown</td></tr>
 *   <tr><td>any other {@link SqlException}</td><td>42000 syntax_error_or_access_rule_violation</td></tr>
 *   <tr><td>any other exception</td><td>XX000 internal_error</td></tr>
 * </table>
 *
 */
public final class SqlState {
  /** 57014 query_canceled: a cancel or a statement timeout ended the statement. */
  public static final String QUERY_CANCELED = "57014";
  /** XX000 internal_error: anything not otherwise classified. */
  public static final String INTERNAL_ERROR = "XX000";

  /** An exception that knows its SQLSTATE. */
  public interface Carrier {
    /** The five-character SQLSTATE. */
    String sqlState();
  }

  private record Rule(String code, List<String> needles) {}

  private static final List<Rule> RULES =
      List.of(
          new Rule("42601", List.of("unsupported statement")),
          new Rule("0A000", List.of("unsupported", "is not available", "both change the catalog")),
          new Rule("54001", List.of("nested too deeply", "deep; at most", "levels deep")),
          new Rule("42601", List.of("syntax error", "cannot parse statement")),
          new Rule("42P01", List.of("unknown table", "unknown view", "unknown source")),
          new Rule("42703", List.of("unknown column")),
          new Rule("42702", List.of("is ambiguous")),
          new Rule("42P07", List.of("duplicate name", "already exists")),
          new Rule("2BP01", List.of("dependents exist")),
          new Rule("42809", List.of("(use drop ")),
          new Rule("42803", List.of("must appear in the group by", "is not allowed here", "cannot be nested")),
          new Rule("42804", List.of("type mismatch")),
          new Rule("22003", List.of("out of range")),
          new Rule("22012", List.of("by zero")),
          new Rule("22000", List.of("cannot evaluate")),
          new Rule("57P01", List.of("fenced")));

  private SqlState() {}

  /** The SQLSTATE of an error a statement raised. */
  public static String of(Throwable e) {
    if (e instanceof Carrier c) {
      return c.sqlState();
    }
    if (e instanceof StatementCanceledException) {
      return QUERY_CANCELED;
    }
    if (e instanceof StackOverflowError) {
      return "54001";
    }
    String m = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
    for (Rule r : RULES) {
      for (String n : r.needles()) {
        if (m.contains(n)) {
          return r.code();
        }
      }
    }
    return e instanceof SqlException ? "42000" : INTERNAL_ERROR;
  }

  /** Whether {@code sqlState} says the server, not the request, was the cause (57P01, 57P03): answered 503 over HTTP. */
  public static boolean unavailable(String sqlState) {
    return sqlState.equals("57P01") || sqlState.equals("57P03");
  }
}
