package io.cairn.engine.sql;

/**
 * A statement that cannot be parsed, planned or applied. The message names the problem and, when
 * known, its position ("at line 1, column 23"); it never contains a secret's value. A statement
 * that throws this changed nothing: no catalog entry was appended and the engine is as before.
 */
public class SqlException extends RuntimeException {
  private final int line;
  private final int column;

  public SqlException(String message) {
    this(message, 0, 0, null);
  }

  public SqlException(String message, int line, int column) {
    this(message, line, column, null);
  }

  public SqlException(String message, int line, int column, Throwable cause) {
    super(line > 0 ? message + " at line " + line + ", column " + column : message, cause);
    this.line = line;
    this.column = column;
  }

  /** The 1-based line of the problem, or 0 when unknown. */
  public int line() {
    return line;
  }

  /** The 1-based column of the problem, or 0 when unknown. */
  public int column() {
    return column;
  }
}
