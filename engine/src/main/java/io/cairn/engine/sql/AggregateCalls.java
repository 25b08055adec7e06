package io.cairn.engine.sql;

import java.util.Locale;
import java.util.Set;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.ExpressionVisitorAdapter;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.NotExpression;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * Recognizes aggregate calls in JSqlParser trees: a call of COUNT, SUM, MIN, MAX or AVG (any
 * case), whatever its arguments. The search descends through the node kinds the planner
 * translates: binary operators, parenthesized lists, unary signs, NOT and IS [NOT] NULL; it does
 * not look inside the arguments of other functions (which the planner refuses anyway). Stateless.
 */
final class AggregateCalls {
  private static final Set<String> AGGREGATES = Set.of("count", "sum", "min", "max", "avg");

  private AggregateCalls() {}

  /** Whether {@code e} itself is an aggregate call. */
  static boolean isAggregate(Expression e) {
    return e instanceof Function f && AGGREGATES.contains(f.getName().toLowerCase(Locale.ROOT));
  }

  /** Whether an item of the select list contains an aggregate call (WHERE, GROUP BY and HAVING are not looked at). */
  static boolean hasAggregate(PlainSelect ps) {
    for (SelectItem<?> item : ps.getSelectItems()) {
      if (containsAggregate(item.getExpression())) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code e} is a call of COUNT. */
  static boolean isCount(Expression e) {
    return e instanceof Function f && "count".equalsIgnoreCase(f.getName());
  }

  /**
   * Whether {@code e} calls COUNT anywhere in it: in any operand, function argument, cast or CASE
   * (not inside a subquery, which is planned on its own).
   */
  static boolean callsCount(Expression e) {
    boolean[] found = {false};
    e.accept(new ExpressionVisitorAdapter<Void>() {
      @Override
      public <S> Void visit(Function f, S context) {
        found[0] |= isCount(f);
        return super.visit(f, context);
      }
    }, null);
    return found[0];
  }

  /** Whether {@code e} is or contains an aggregate call. */
  static boolean containsAggregate(Expression e) {
    if (isAggregate(e)) {
      return true;
    }
    if (e instanceof BinaryExpression b) {
      return containsAggregate(b.getLeftExpression()) || containsAggregate(b.getRightExpression());
    }
    if (e instanceof ParenthesedExpressionList<?> p) {
      return p.stream().anyMatch(x -> containsAggregate((Expression) x));
    }
    if (e instanceof SignedExpression s) {
      return containsAggregate(s.getExpression());
    }
    if (e instanceof NotExpression n) {
      return containsAggregate(n.getExpression());
    }
    if (e instanceof IsNullExpression n) {
      return containsAggregate(n.getLeftExpression());
    }
    return false;
  }
}
