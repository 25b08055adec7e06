package io.cairn.engine.sql;

import java.util.Locale;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.parser.ASTNodeAccess;
import net.sf.jsqlparser.parser.Node;
import net.sf.jsqlparser.parser.Token;

/**
 * The errors of planning one SELECT: a {@link SqlException} whose message starts with the
 * statement's subject ({@code what}, e.g. "Cannot plan view 'v'") and which carries the line and
 * column of the JSqlParser node at fault.
 *
 * <p>Where a node is, tried in this order:
 *
 * <ol>
 *   <li>the first token of its syntax-tree node, when JSqlParser kept one;
 *   <li>for a binary expression, the position of its leftmost operand (found iteratively: an
 *       operator chain may be hundreds deep);
 *   <li>the first case-insensitive occurrence of the node's text in the SELECT text;
 *   <li>otherwise unknown (line and column 0: the message then names no position).
 * </ol>
 *
 * <p>Positions are those of the whole statement: the SELECT text given has its prefix blanked
 * (e.g. {@code CREATE MATERIALIZED VIEW v AS} replaced by spaces), so line and column match what
 * the user wrote. Immutable.
 */
final class PlanErrors {
  private final String what;
  private final String sql;

  /**
   * @param what the subject for messages, e.g. "Cannot plan view 'v'"
   * @param sql the SELECT text (prefix blanked, so positions match the statement)
   */
  PlanErrors(String what, String sql) {
    this.what = what;
    this.sql = sql;
  }

  /** The subject that starts every message. */
  String what() {
    return what;
  }

  /** The SELECT text positions refer to. */
  String sql() {
    return sql;
  }

  /** {@code "<what>: <message>"} at the position of {@code node} (0, 0 when it cannot be found). */
  SqlException error(Object node, String message) {
    int[] p = position(node);
    return new SqlException(what + ": " + message, p[0], p[1]);
  }

  /** {line, column} of {@code node}, 1-based, or {0, 0} when unknown. */
  int[] position(Object node) {
    if (node instanceof ASTNodeAccess a) {
      Node n = a.getASTNode();
      if (n != null && n.jjtGetFirstToken() != null) {
        Token t = n.jjtGetFirstToken();
        return new int[] {t.beginLine, t.beginColumn};
      }
    }
    if (node instanceof BinaryExpression b) {
      Expression left = b.getLeftExpression();
      while (left instanceof BinaryExpression l) { // iterative: a chain may be hundreds deep
        left = l.getLeftExpression();
      }
      return position(left);
    }
    if (node != null) {
      String needle = node.toString().toLowerCase(Locale.ROOT);
      int i = needle.isEmpty() ? -1 : sql.toLowerCase(Locale.ROOT).indexOf(needle);
      if (i >= 0) {
        int line = 1;
        int col = 1;
        for (int k = 0; k < i; k++) {
          if (sql.charAt(k) == '\n') {
            line++;
            col = 1;
          } else {
            col++;
          }
        }
        return new int[] {line, col};
      }
    }
    return new int[] {0, 0};
  }
}
