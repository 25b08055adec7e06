package io.cairn.engine.sql;

/**
 * Refuses a statement nested deeper than {@link #MAX_DEPTH} before any parser sees it, in one
 * pass over its characters (time linear in the text, no allocation): a parser's work and stack
 * grow with nesting, and an exponential or recursive parser on a statement 100,000 deep would hold
 * a thread and a core. What counts as one level: an open parenthesis, and a {@code CASE} until
 * its {@code END}. String literals ({@code '...'} with {@code ''} inside), quoted identifiers
 * ({@code "..."}), {@code --} line comments and {@code /* *}{@code /} block comments are skipped,
 * so a parenthesis or a quote inside them neither counts nor hides what follows.
 */
final class Nesting {
  /** The deepest nesting a statement may have (parentheses plus open CASE expressions). */
  static final int MAX_DEPTH = 64;

  private Nesting() {}

  /**
   * Returns normally when {@code sql} nests at most {@link #MAX_DEPTH} deep.
   *
   * @throws SqlException naming the depth reached, the limit and where the limit was passed
   */
  static void check(String sql) {
    int depth = 0;
    int cases = 0;
    int n = sql.length();
    int line = 1;
    int lineStart = 0;
    int i = 0;
    while (i < n) {
      char c = sql.charAt(i);
      if (c == '\n') {
        line++;
        lineStart = i + 1;
        i++;
      } else if (c == '\'' || c == '"') {
        i++;
        while (i < n) {
          char d = sql.charAt(i);
          if (d == '\n') {
            line++;
            lineStart = i + 1;
          }
          i++;
          if (d == c) {
            if (i < n && sql.charAt(i) == c) {
              i++; // a doubled quote stays inside
            } else {
              break;
            }
          }
        }
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        i += 2;
        while (i < n && !(sql.charAt(i) == '*' && i + 1 < n && sql.charAt(i + 1) == '/')) {
          if (sql.charAt(i) == '\n') {
            line++;
            lineStart = i + 1;
          }
          i++;
        }
        i += 2;
      } else if (c == '(') {
        depth++;
        if (depth + cases > MAX_DEPTH) {
          throw tooDeep(line, i - lineStart + 1);
        }
        i++;
      } else if (c == ')') {
        depth = Math.max(0, depth - 1);
        i++;
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$')) {
          i++;
        }
        int len = i - start;
        if (len == 4 && sql.regionMatches(true, start, "case", 0, 4)) {
          cases++;
          if (depth + cases > MAX_DEPTH) {
            throw tooDeep(line, start - lineStart + 1);
          }
        } else if (len == 3 && cases > 0 && sql.regionMatches(true, start, "end", 0, 3)) {
          cases--;
        }
      } else {
        i++;
      }
    }
  }

  private static SqlException tooDeep(int line, int column) {
    return new SqlException("Cannot parse statement: it is nested more than " + MAX_DEPTH
        + " levels deep (parentheses and CASE expressions); at most " + MAX_DEPTH + " are allowed", line, column);
  }
}
