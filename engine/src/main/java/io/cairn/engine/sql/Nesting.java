package io.cairn.engine.sql;

/**
 * Refuses a statement nested deeper than {@link #MAX_DEPTH} before any parser sees it, in one
 * pass over its tokens ({@link SqlScanner}, the one tokenizer; time linear in the text): a parser's work and stack
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
    int line = 1;
    int lineStart = 0;
    for (SqlScanner.Token t = SqlScanner.at(sql, 0); t != null; t = t.next()) {
      switch (t.kind()) {
        case SYMBOL -> {
          if (t.isSymbol('(')) {
            depth++;
            if (depth + cases > MAX_DEPTH) {
              throw tooDeep(line, t.start() - lineStart + 1);
            }
          } else if (t.isSymbol(')')) {
            depth = Math.max(0, depth - 1);
          }
        }
        case WORD -> {
          if (t.isWord("case")) {
            cases++;
            if (depth + cases > MAX_DEPTH) {
              throw tooDeep(line, t.start() - lineStart + 1);
            }
          } else if (cases > 0 && t.isWord("end")) {
            cases--;
          }
        }
        default -> {
          // quotes and comments hide what is inside them; only newlines count, for positions
        }
      }
      if (t.kind() != SqlScanner.Kind.WORD && t.kind() != SqlScanner.Kind.SYMBOL) {
        for (int i = t.start(); i < t.end(); i++) { // within the token only: linear over the text
          if (sql.charAt(i) == '\n') {
            line++;
            lineStart = i + 1;
          }
        }
      }
    }
  }

  private static SqlException tooDeep(int line, int column) {
    return new SqlException("Cannot parse statement: it is nested more than " + MAX_DEPTH
        + " levels deep (parentheses and CASE expressions); at most " + MAX_DEPTH + " are allowed", line, column);
  }
}
