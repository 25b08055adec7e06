package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The one tokenizer of SQL text: every piece of cairn that needs to know where a string literal,
 * a quoted identifier or a comment starts and ends asks this class (the engine's {@link Lexer}
 * and {@link Statements}, the PostgreSQL wire protocol's parameter substitution, cast rewriting,
 * query shapes and catalog-query recognition). No other code scans quotes or comments.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>The tokens of a text cover it exactly: the first starts at 0, each starts where the one
 *       before it ends, the last ends at {@code sql.length()}, and none is empty. Concatenating
 *       their {@link Token#text texts} gives the input back, so a caller that rewrites some tokens
 *       and copies the rest produces the same text around them.
 *   <li>Scanning never fails: text that is not valid SQL still splits into tokens. A string
 *       literal, quoted identifier or block comment that is not closed runs to the end of the text
 *       and has {@link Token#closed} false; callers that need it closed (the engine's parser)
 *       report it.
 *   <li>Time is linear in the text and the stack does not grow with it: one forward pass, no
 *       regular expressions, no recursion; a megabyte literal or comment is one token.
 *   <li>Stateless: {@link #at} reads only the text, so a caller may look ahead any number of
 *       tokens ({@link Token#next}) and go back by remembering a token. Thread-safe.
 * </ul>
 *
 * <p>The lexical rules (PostgreSQL's, as far as cairn's grammars go; {@code standard_conforming_strings}
 * is on, so a backslash in a literal is an ordinary character):
 * <ul>
 *   <li>{@link Kind#WHITESPACE}: a run of {@link Character#isWhitespace} characters.
 *   <li>{@link Kind#COMMENT}: {@code --} to the end of the line (the newline not included), or
 *       {@code /*} to the first {@code *}{@code /} (block comments do not nest).
 *   <li>{@link Kind#STRING}: {@code '...'}, a doubled {@code ''} inside; {@link
 *       Kind#QUOTED_IDENTIFIER}: {@code "..."}, a doubled {@code ""} inside. {@code E'...'},
 *       {@code U&'...'} and dollar quoting are not recognized (the prefix is a word, the rest a
 *       plain literal).
 *   <li>{@link Kind#WORD}: a letter or {@code _}, then letters, digits and {@code _}.
 *   <li>{@link Kind#NUMBER}: a digit, then digits and dots.
 *   <li>{@link Kind#PARAMETER}: {@code $} and digits, unless the {@code $} directly follows a
 *       letter, digit or {@code _} ({@code a$1} is no parameter).
 *   <li>{@link Kind#SYMBOL}: any other single character ({@code ::} is two symbols).
 * </ul>
 */
public final class SqlScanner {
  /** What a token is. */
  public enum Kind {
    WORD,
    NUMBER,
    STRING,
    QUOTED_IDENTIFIER,
    PARAMETER,
    SYMBOL,
    COMMENT,
    WHITESPACE
  }

  /**
   * One token: {@code sql.substring(start, end)} of kind {@code kind}; {@code closed} is false
   * only for a string literal, quoted identifier or block comment that runs to the end of the text
   * without its closing quote or {@code *}{@code /}.
   */
  public record Token(String sql, Kind kind, int start, int end, boolean closed) {
    public Token {
      Objects.requireNonNull(sql, "sql");
      Objects.requireNonNull(kind, "kind");
      if (start < 0 || start >= end || end > sql.length()) {
        throw new IllegalArgumentException("Cannot make token: span [" + start + ", " + end + ") is not inside text of length "
            + sql.length());
      }
    }

    /** The token's text as written. */
    public String text() {
      return sql.substring(start, end);
    }

    /**
     * What the token stands for: the content of a string literal or quoted identifier (without
     * its quotes, doubled quotes made single; an unclosed one to the end of the text), else the
     * text as written.
     */
    public String value() {
      if (kind != Kind.STRING && kind != Kind.QUOTED_IDENTIFIER) {
        return text();
      }
      char q = sql.charAt(start);
      int to = closed ? end - 1 : end;
      StringBuilder sb = new StringBuilder(to - start);
      int i = start + 1;
      while (i < to) {
        int next = sql.indexOf(q, i);
        if (next < 0 || next >= to) {
          sb.append(sql, i, to);
          break;
        }
        sb.append(sql, i, next + 1); // the first quote of a doubled pair
        i = next + 2;
      }
      return sb.toString();
    }

    /** Whether this is the symbol {@code c}. */
    public boolean isSymbol(char c) {
      return kind == Kind.SYMBOL && sql.charAt(start) == c;
    }

    /** Whether this is the word {@code word} (ignoring ASCII case). */
    public boolean isWord(String word) {
      return kind == Kind.WORD && end - start == word.length() && sql.regionMatches(true, start, word, 0, word.length());
    }

    /** Whether this token separates others and means nothing itself: whitespace or a comment. */
    public boolean isBlank() {
      return kind == Kind.WHITESPACE || kind == Kind.COMMENT;
    }

    /** The token after this one, null at the end of the text. */
    public Token next() {
      return at(sql, end);
    }

    /** The next token after this one that is not {@linkplain #isBlank blank}, null when none. */
    public Token nextSignificant() {
      return significant(sql, end);
    }

    @Override
    public String toString() {
      int show = Math.min(end, start + 40);
      return kind + "[" + start + ", " + end + ")" + (closed ? "" : " unclosed") + " " + sql.substring(start, show)
          + (show < end ? "..." : "");
    }
  }

  private SqlScanner() {}

  /**
   * The token that starts at {@code from} in {@code sql}, or null when {@code from == sql.length()}.
   * {@code from} must be 0 or the end of a token of the same text (otherwise the token is the one
   * that would start there).
   */
  public static Token at(String sql, int from) {
    int n = sql.length();
    if (from < 0 || from > n) {
      throw new IndexOutOfBoundsException("Cannot scan: offset " + from + " is outside text of length " + n);
    }
    if (from == n) {
      return null;
    }
    char c = sql.charAt(from);
    int i = from;
    if (Character.isWhitespace(c)) {
      do {
        i++;
      } while (i < n && Character.isWhitespace(sql.charAt(i)));
      return new Token(sql, Kind.WHITESPACE, from, i, true);
    }
    if (c == '-' && from + 1 < n && sql.charAt(from + 1) == '-') {
      int nl = sql.indexOf('\n', from + 2);
      return new Token(sql, Kind.COMMENT, from, nl < 0 ? n : nl, true);
    }
    if (c == '/' && from + 1 < n && sql.charAt(from + 1) == '*') {
      int close = sql.indexOf("*/", from + 2);
      return close < 0 ? new Token(sql, Kind.COMMENT, from, n, false) : new Token(sql, Kind.COMMENT, from, close + 2, true);
    }
    if (c == '\'' || c == '"') {
      Kind kind = c == '\'' ? Kind.STRING : Kind.QUOTED_IDENTIFIER;
      i = from + 1;
      while (true) {
        int q = sql.indexOf(c, i);
        if (q < 0) {
          return new Token(sql, kind, from, n, false);
        }
        if (q + 1 < n && sql.charAt(q + 1) == c) {
          i = q + 2; // a doubled quote stays inside
        } else {
          return new Token(sql, kind, from, q + 1, true);
        }
      }
    }
    if (Character.isLetter(c) || c == '_') {
      do {
        i++;
      } while (i < n && isWordPart(sql.charAt(i)));
      return new Token(sql, Kind.WORD, from, i, true);
    }
    if (Character.isDigit(c)) {
      do {
        i++;
      } while (i < n && (Character.isDigit(sql.charAt(i)) || sql.charAt(i) == '.'));
      return new Token(sql, Kind.NUMBER, from, i, true);
    }
    if (c == '$' && from + 1 < n && Character.isDigit(sql.charAt(from + 1)) && (from == 0 || !isWordPart(sql.charAt(from - 1)))) {
      i = from + 1;
      do {
        i++;
      } while (i < n && Character.isDigit(sql.charAt(i)));
      return new Token(sql, Kind.PARAMETER, from, i, true);
    }
    return new Token(sql, Kind.SYMBOL, from, from + 1, true);
  }

  /** The first token of {@code sql}, null when it is empty. */
  public static Token first(String sql) {
    return at(sql, 0);
  }

  /** The first token at or after {@code from} that is not whitespace or a comment, null when none. */
  public static Token significant(String sql, int from) {
    Token t = at(sql, from);
    while (t != null && t.isBlank()) {
      t = t.next();
    }
    return t;
  }

  /** All tokens of {@code sql}, in order. */
  public static List<Token> tokens(String sql) {
    List<Token> out = new ArrayList<>();
    for (Token t = first(sql); t != null; t = t.next()) {
      out.add(t);
    }
    return out;
  }

  /**
   * The statement's first word, lower-cased ({@code "select"} for {@code "-- note\n SELECT 1"}),
   * or "" when the first token that is not whitespace or a comment is not a word.
   */
  public static String firstWord(String sql) {
    Token t = significant(sql, 0);
    return t != null && t.kind() == Kind.WORD ? t.text().toLowerCase(Locale.ROOT) : "";
  }

  private static boolean isWordPart(char c) {
    return Character.isLetterOrDigit(c) || c == '_';
  }
}
