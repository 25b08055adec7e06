package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The engine parser's view of a statement: the {@link SqlScanner} tokens that mean something
 * (whitespace and comments dropped), with line and column, words lower-cased and quotes removed.
 * Used by the hand-written parts of the grammar (CREATE SOURCE, DROP, SHOW, the prefixes of
 * CREATE MATERIALIZED VIEW and EXPLAIN); SELECT bodies are parsed by JSqlParser. Unlike the
 * scanner, it refuses an unterminated string literal or quoted identifier.
 */
final class Lexer {
  enum Kind {
    WORD, // identifier or keyword (lower-cased in text)
    QUOTED, // "quoted identifier"
    STRING, // 'string literal'
    NUMBER,
    PARAMETER, // $1
    SYMBOL,
    END
  }

  record Token(Kind kind, String text, int offset, int line, int column) {
    boolean is(String word) {
      return kind == Kind.WORD && text.equals(word);
    }

    boolean isSymbol(String s) {
      return kind == Kind.SYMBOL && text.equals(s);
    }

    String describe() {
      return switch (kind) {
        case END -> "end of statement";
        case STRING -> "'" + text + "'";
        case QUOTED -> "\"" + text + "\"";
        default -> "'" + text + "'";
      };
    }
  }

  private Lexer() {}

  static List<Token> tokenize(String sql) {
    return tokenize(sql, StatementBudget.unlimited());
  }

  /**
   * Tokenizes {@code sql}, checking {@code budget} every 4,096 tokens (a statement may be a megabyte).
   * Lines are counted at {@code \n}; a column is 1-based, in chars.
   *
   * @throws SqlException for an unterminated string literal or quoted identifier
   */
  static List<Token> tokenize(String sql, StatementBudget budget) {
    List<Token> out = new ArrayList<>();
    int line = 1;
    int lineStart = 0;
    for (SqlScanner.Token s = SqlScanner.first(sql); s != null; s = s.next()) {
      int start = s.start();
      int col = start - lineStart + 1;
      int tokenLine = line;
      for (int k = start; k < s.end(); k++) {
        if (sql.charAt(k) == '\n') {
          line++;
          lineStart = k + 1;
        }
      }
      if (s.isBlank()) {
        continue;
      }
      if ((out.size() & 4095) == 4095) {
        budget.check();
      }
      Token t = switch (s.kind()) {
        case WORD -> new Token(Kind.WORD, s.text().toLowerCase(Locale.ROOT), start, tokenLine, col);
        case NUMBER -> new Token(Kind.NUMBER, s.text(), start, tokenLine, col);
        case PARAMETER -> new Token(Kind.PARAMETER, s.text(), start, tokenLine, col);
        case STRING, QUOTED_IDENTIFIER -> {
          boolean string = s.kind() == SqlScanner.Kind.STRING;
          if (!s.closed()) {
            // the line is where the text ended, as the scan reached it
            throw new SqlException("Cannot parse statement: unterminated " + (string ? "string" : "quoted identifier"), line, col);
          }
          yield new Token(string ? Kind.STRING : Kind.QUOTED, s.value(), start, tokenLine, col);
        }
        default -> new Token(Kind.SYMBOL, s.text(), start, tokenLine, col);
      };
      out.add(t);
    }
    out.add(new Token(Kind.END, "", sql.length(), line, sql.length() - lineStart + 1));
    return out;
  }
}
