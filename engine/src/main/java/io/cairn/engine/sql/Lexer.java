package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Splits a statement into tokens with their positions, for the hand-written parts of the grammar
 * (CREATE SOURCE, DROP, SHOW, the prefixes of CREATE MATERIALIZED VIEW and EXPLAIN). SELECT
 * bodies are parsed by JSqlParser.
 */
final class Lexer {
  enum Kind {
    WORD, // identifier or keyword (lower-cased in text)
    QUOTED, // "quoted identifier"
    STRING, // 'string literal'
    NUMBER,
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

  /** Tokenizes {@code sql}, checking {@code budget} every 4,096 tokens (a statement may be a megabyte). */
  static List<Token> tokenize(String sql, StatementBudget budget) {
    List<Token> out = new ArrayList<>();
    int i = 0;
    int line = 1;
    int lineStart = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (c == '\n') {
        line++;
        lineStart = i + 1;
        i++;
        continue;
      }
      if (Character.isWhitespace(c)) {
        i++;
        continue;
      }
      if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n') {
          i++;
        }
        continue;
      }
      if ((out.size() & 4095) == 4095) {
        budget.check();
      }
      int start = i;
      int col = i - lineStart + 1;
      if (Character.isLetter(c) || c == '_') {
        while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
          i++;
        }
        out.add(new Token(Kind.WORD, sql.substring(start, i).toLowerCase(Locale.ROOT), start, line, col));
      } else if (Character.isDigit(c)) {
        while (i < n && (Character.isDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
          i++;
        }
        out.add(new Token(Kind.NUMBER, sql.substring(start, i), start, line, col));
      } else if (c == '\'' || c == '"') {
        StringBuilder sb = new StringBuilder();
        i++;
        boolean closed = false;
        while (i < n) {
          char d = sql.charAt(i);
          if (d == c) {
            if (i + 1 < n && sql.charAt(i + 1) == c) {
              sb.append(c);
              i += 2;
              continue;
            }
            i++;
            closed = true;
            break;
          }
          if (d == '\n') {
            line++;
            lineStart = i + 1;
          }
          sb.append(d);
          i++;
        }
        if (!closed) {
          throw new SqlException("Cannot parse statement: unterminated " + (c == '\'' ? "string" : "quoted identifier"), line, col);
        }
        out.add(new Token(c == '\'' ? Kind.STRING : Kind.QUOTED, sb.toString(), start, line, col));
      } else {
        i++;
        out.add(new Token(Kind.SYMBOL, String.valueOf(c), start, line, col));
      }
    }
    int endCol = n - lineStart + 1;
    out.add(new Token(Kind.END, "", n, line, endCol));
    return out;
  }
}
