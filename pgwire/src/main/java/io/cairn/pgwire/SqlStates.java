package io.cairn.pgwire;

import io.cairn.engine.sql.SqlException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * pgwire's SQLSTATE codes: those of the protocol and its bounds ({@link PgError}, raised here with
 * their code), and the error position. The code of an error a statement raised is the engine's
 * {@link io.cairn.engine.sql.SqlState}, the contract HTTP uses too.
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

  private static final Pattern LINE_COLUMN = Pattern.compile("line (\\d+), column (\\d+)");

  private SqlStates() {}

  /** The SQLSTATE of an error a statement raised ({@link io.cairn.engine.sql.SqlState#of}). */
  static String of(Throwable e) {
    return io.cairn.engine.sql.SqlState.of(e);
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
  static final class PgError extends RuntimeException implements io.cairn.engine.sql.SqlState.Carrier {
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

    @Override
    public String sqlState() {
      return code;
    }

    /** Whether the connection is closed after it is sent. */
    boolean fatal() {
      return fatal;
    }
  }
}
