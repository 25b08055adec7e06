package io.cairn.recovery.pgwire;

import io.cairn.engine.sql.SqlException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * SQLSTATE codes for errors. The engine's {@link SqlException} carries a message and a position
 * but no kind, so the code is chosen here, and only here, from the message's wording (the first
 * matching rule wins; the rules follow the engine's "Cannot X: reason" messages):
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
 * <p>The position ('P' field) is the SqlException's line and column, or a message's "line L,
 * column C", turned into a 1-based character offset into the statement.
 */
final class SqlStates {
  static final String SYNTAX_ERROR = "42601";
  static final String FEATURE_NOT_SUPPORTED = "0A000";
  static final String PROTOCOL_VIOLATION = "08P01";
  static final String TOO_MANY_CONNECTIONS = "53300";
  static final String QUERY_CANCELED = "57014";
  static final String PROGRAM_LIMIT_EXCEEDED = "54000";
  static final String IDLE_SESSION_TIMEOUT = "57P05";
  static final String INVALID_PASSWORD = "28P01";
  static final String IN_FAILED_TRANSACTION = "25P02";
  static final String UNDEFINED_OBJECT = "42704";
  static final String INVALID_TEXT_REPRESENTATION = "22P02";
  static final String INVALID_STATEMENT_NAME = "26000";
  static final String INVALID_CURSOR_NAME = "34000";
  static final String DUPLICATE_PREPARED_STATEMENT = "42P05";
  static final String INTERNAL_ERROR = "XX000";
  static final String INVALID_PARAMETER_VALUE = "22023";
  static final String ADMIN_SHUTDOWN = "57P01";
  static final String CANNOT_CONNECT_NOW = "57P03";
  static final String STATEMENT_TOO_COMPLEX = "54001";

  private record Rule(String code, List<String> needles) {}

  private static final List<Rule> RULES =
      List.of(
          new Rule(SYNTAX_ERROR, List.of("unsupported statement")),
          new Rule(FEATURE_NOT_SUPPORTED, List.of("unsupported", "is not available", "both change the catalog")),
          new Rule(STATEMENT_TOO_COMPLEX, List.of("nested too deeply", "deep; at most", "levels deep")),
          new Rule(SYNTAX_ERROR, List.of("syntax error", "cannot parse statement")),
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

  private static final Pattern LINE_COLUMN = Pattern.compile("line (\\d+), column (\\d+)");

  private SqlStates() {}

  /** The SQLSTATE of an error a statement raised. */
  static String of(Throwable e) {
    if (e instanceof PgError pe) {
      return pe.code();
    }
    if (e instanceof io.cairn.engine.sql.StatementCanceledException) {
      return QUERY_CANCELED;
    }
    if (e instanceof io.cairn.recovery.http.NodeUnavailableException u) {
      return u.reason() == io.cairn.recovery.http.NodeUnavailableException.Reason.FENCED ? ADMIN_SHUTDOWN : CANNOT_CONNECT_NOW;
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

  /** The 1-based character position of the error in {@code statement}, or 0 when unknown. */
  static int position(Throwable e, String statement) {
    int line = 0;
    int column = 0;
    if (e instanceof SqlException se && se.line() > 0) {
      line = se.line();
      column = se.column();
    } else if (e.getMessage() != null) {
      Matcher m = LINE_COLUMN.matcher(e.getMessage());
      if (m.find()) {
        line = Integer.parseInt(m.group(1));
        column = Integer.parseInt(m.group(2));
      }
    }
    if (line <= 0 || column <= 0) {
      return 0;
    }
    int offset = 0;
    for (int l = 1; l < line; l++) {
      int nl = statement.indexOf('\n', offset);
      if (nl < 0) {
        return 0;
      }
      offset = nl + 1;
    }
    int pos = offset + column;
    return pos <= statement.length() + 1 ? pos : 0;
  }

  /** An error with a SQLSTATE chosen where it is raised (protocol, compatibility layer, bounds). */
  static final class PgError extends RuntimeException {
    private final String code;
    private final boolean fatal;

    PgError(String code, String message) {
      this(code, message, false);
    }

    PgError(String code, String message, boolean fatal) {
      super(message);
      this.code = code;
      this.fatal = fatal;
    }

    String code() {
      return code;
    }

    /** Whether the connection is closed after it is sent. */
    boolean fatal() {
      return fatal;
    }
  }
}
