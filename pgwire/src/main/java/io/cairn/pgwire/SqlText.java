package io.cairn.pgwire;

import io.cairn.engine.sql.SqlScanner;
import io.cairn.engine.sql.SqlScanner.Token;
import io.cairn.engine.sql.Statements;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Statement text handling on the engine's tokenizer ({@link SqlScanner}; splitting is the
 * engine's {@link Statements}): substituting extended protocol parameters ({@code $1}, {@code $2},
 * ...) as SQL literals, since the engine has no parameter binding. A parameter is a {@link
 * SqlScanner.Kind#PARAMETER} token, so {@code $1} inside quotes or comments is left alone. A
 * string parameter becomes a single-quoted literal with quotes doubled (standard_conforming_strings
 * is on: backslashes are literal); a number becomes a number literal after its text is checked to
 * be one; a parameter that is neither cannot inject SQL.
 *
 * <p>The engine has no {@code ::} casts, but drivers that inline parameters themselves (pgjdbc's
 * {@code preferQueryMode=simple}) write {@code '1'::int8}: {@link #rewriteCasts} turns a quoted
 * literal cast to a number, boolean or text type into the plain literal (when its text is one).
 * Both work token by token: linear in the text, whatever its literals and comments hold.
 */
final class SqlText {
  private static final Pattern INTEGER = Pattern.compile("-?\\d{1,19}");
  private static final Pattern DECIMAL = Pattern.compile("-?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");

  private SqlText() {}

  /**
   * {@code sql} with {@code 'literal'::type} (number, boolean and text types; whitespace allowed
   * before {@code ::}, none after it) replaced by plain literals; other text unchanged.
   */
  static String rewriteCasts(String sql) {
    if (!sql.contains("::")) {
      return sql;
    }
    StringBuilder out = new StringBuilder(sql.length());
    int last = 0;
    for (Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if (t.kind() != SqlScanner.Kind.STRING) {
        continue;
      }
      Token c = t.next();
      if (c != null && c.kind() == SqlScanner.Kind.WHITESPACE) {
        c = c.next();
      }
      if (c == null || !c.isSymbol(':') || c.next() == null || !c.next().isSymbol(':')) {
        continue;
      }
      Token typeToken = c.next().next();
      if (typeToken == null || typeToken.kind() != SqlScanner.Kind.WORD) {
        continue;
      }
      String type = typeToken.text().toLowerCase(Locale.ROOT);
      Token lastOfType = typeToken;
      if (type.equals("double") || type.equals("character")) {
        Token space = typeToken.next();
        Token second = space == null || !onlySpaces(space) ? null : space.next();
        if (second != null && second.isWord(type.equals("double") ? "precision" : "varying")) {
          type = type + " " + second.text().toLowerCase(Locale.ROOT);
          lastOfType = second;
        }
      }
      String replacement = castLiteral(type, t.value());
      if (replacement != null) {
        out.append(sql, last, t.start()).append(replacement);
        last = lastOfType.end();
        t = lastOfType;
      }
    }
    return out.append(sql, last, sql.length()).toString();
  }

  private static boolean onlySpaces(Token t) {
    if (t.kind() != SqlScanner.Kind.WHITESPACE) {
      return false;
    }
    for (int i = t.start(); i < t.end(); i++) {
      if (t.sql().charAt(i) != ' ') {
        return false;
      }
    }
    return true;
  }

  private static String castLiteral(String type, String text) {
    String t = text.strip();
    switch (type) {
      case "int2", "int4", "int8", "smallint", "integer", "int", "bigint", "oid" -> {
        return INTEGER.matcher(t).matches() ? number(t) : null;
      }
      case "float4", "float8", "real", "double precision", "numeric", "decimal" -> {
        return DECIMAL.matcher(t).matches() ? number(t) : null;
      }
      case "bool", "boolean" -> {
        return switch (t.toLowerCase(Locale.ROOT)) {
          case "t", "true", "1", "on", "yes" -> "TRUE";
          case "f", "false", "0", "off", "no" -> "FALSE";
          default -> null;
        };
      }
      case "text", "varchar", "character varying", "unknown", "name", "bpchar" -> {
        return "'" + text.replace("'", "''") + "'";
      }
      default -> {
        return null;
      }
    }
  }

  /** The highest parameter number ({@code $n}) in {@code sql}, 0 when none. */
  static int maxParameter(String sql) {
    int max = 0;
    for (Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if (t.kind() == SqlScanner.Kind.PARAMETER) {
        max = Math.max(max, parameterNumber(t));
      }
    }
    return max;
  }

  /** {@code sql} with every {@code $n} replaced by {@code literals.get(n - 1)}. */
  static String substitute(String sql, List<String> literals) {
    StringBuilder sb = new StringBuilder(sql.length() + 16 * literals.size());
    int last = 0;
    for (Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if (t.kind() != SqlScanner.Kind.PARAMETER) {
        continue;
      }
      int n = parameterNumber(t);
      if (n > literals.size()) {
        throw new SqlStates.PgError("08P01", "there is no parameter $" + n + " (" + literals.size() + " bound)");
      }
      sb.append(sql, last, t.start()).append(literals.get(n - 1));
      last = t.end();
    }
    sb.append(sql, last, sql.length());
    return sb.toString();
  }

  private static int parameterNumber(Token t) {
    String digits = t.text().substring(1);
    int num;
    try {
      num = Integer.parseInt(digits);
    } catch (NumberFormatException e) {
      throw new SqlStates.PgError("08P01", "parameter number " + digits + " is out of range");
    }
    if (num < 1) {
      throw new SqlStates.PgError("08P01", "there is no parameter $" + num);
    }
    return num;
  }

  /** The SQL literal for a parameter value sent with type {@code oid} in {@code format} (0 text, 1 binary); null → NULL. */
  static String literal(int oid, int format, byte[] value) {
    if (value == null) {
      return "NULL";
    }
    String text = format == 0 ? new String(value, StandardCharsets.UTF_8) : binaryToText(oid, value);
    if (text.indexOf('\0') >= 0) {
      throw new SqlStates.PgError("22021", "invalid byte sequence for encoding \"UTF8\": 0x00");
    }
    switch (oid) {
      case 20, 21, 23, 26 -> {
        String t = text.strip();
        if (!INTEGER.matcher(t).matches()) {
          throw new SqlStates.PgError(SqlStates.INVALID_TEXT_REPRESENTATION, "invalid input syntax for type integer: \"" + clip(text) + "\"");
        }
        return number(t);
      }
      case 700, 701, 1700 -> {
        String t = text.strip();
        if (!DECIMAL.matcher(t).matches()) {
          throw new SqlStates.PgError(SqlStates.INVALID_TEXT_REPRESENTATION,
              "invalid input syntax for type double precision: \"" + clip(text) + "\" (NaN and Infinity cannot be parameters)");
        }
        return number(t);
      }
      case 16 -> {
        String t = text.strip().toLowerCase(Locale.ROOT);
        return switch (t) {
          case "t", "true", "yes", "y", "on", "1" -> "TRUE";
          case "f", "false", "no", "n", "off", "0" -> "FALSE";
          default -> throw new SqlStates.PgError(SqlStates.INVALID_TEXT_REPRESENTATION,
              "invalid input syntax for type boolean: \"" + clip(text) + "\"");
        };
      }
      default -> {
        return "'" + text.replace("'", "''") + "'";
      }
    }
  }

  /** A negative number gets a leading space, so that "x-$1" cannot become the comment "x--1". */
  private static String number(String t) {
    return t.startsWith("-") ? " " + t : t;
  }

  private static String binaryToText(int oid, byte[] v) {
    ByteBuffer b = ByteBuffer.wrap(v);
    try {
      return switch (oid) {
        case 21 -> Short.toString(b.getShort());
        case 23, 26 -> Integer.toString(b.getInt());
        case 20 -> Long.toString(b.getLong());
        case 700 -> Float.toString(b.getFloat());
        case 701 -> Double.toString(b.getDouble());
        case 16 -> v.length == 1 && v[0] != 0 ? "t" : "f";
        case 25, 1043, 19, 1042, 0, 705 -> new String(v, StandardCharsets.UTF_8);
        default -> throw new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED,
            "binary format for parameters of type oid " + oid + " is not supported (send it as text)");
      };
    } catch (java.nio.BufferUnderflowException e) {
      throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "binary parameter of type oid " + oid + " is too short");
    }
  }

  private static String clip(String s) {
    return s.length() <= 100 ? s : s.substring(0, 100) + "...";
  }
}
