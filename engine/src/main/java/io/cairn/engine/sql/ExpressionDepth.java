package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.CaseExpression;
import net.sf.jsqlparser.expression.CastExpression;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.NotExpression;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.WhenClause;
import net.sf.jsqlparser.expression.operators.relational.Between;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.InExpression;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.statement.select.Join;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * Refuses a parsed SELECT whose expression trees are deeper than {@link #MAX_DEPTH}, before the
 * planner walks them. {@link Nesting} bounds parentheses and CASE in the text, but a chain of
 * operators needs none: {@code a + a + ... + a} with 50,000 terms parses (JSqlParser reads chains
 * in a loop) into a tree 50,000 deep, and every recursive walk of it (the planner's translation,
 * its aggregate search, {@code toString} in an error message, evaluation) would overflow a
 * thread's stack: measured, the planner overflowed a 1 MiB stack between 1,000 and 2,000 levels.
 *
 * <p>This walk uses an explicit stack, so its own depth is constant, and it checks the statement's
 * budget every {@value #CHECK_EVERY} nodes. It descends through every node kind the planner can
 * translate or report (operators, NOT, IS NULL, unary signs, parenthesised lists, function
 * arguments, CASE, CAST, BETWEEN, IN); a node of another kind is a leaf here, and the planner
 * refuses it as unsupported. One level is one node on the path from the root, so {@code a + b * c}
 * is 3 deep.
 */
final class ExpressionDepth {
  /**
   * The deepest expression tree a statement may have. A left-deep chain of 500 operators plans
   * with a 1 MiB stack to spare (the planner's recursion costs about 0.5 KiB a level), as do 64
   * levels of parentheses inside it.
   */
  static final int MAX_DEPTH = 500;

  private static final int CHECK_EVERY = 4096;

  private ExpressionDepth() {}

  /**
   * Returns normally when every expression of {@code ps} (select list, FROM's join conditions,
   * WHERE, GROUP BY, HAVING) is at most {@link #MAX_DEPTH} deep.
   *
   * @throws SqlException naming the limit, prefixed with {@code what}
   * @throws StatementCanceledException when {@code budget} ends during the walk
   */
  static void check(String what, PlainSelect ps, StatementBudget budget) {
    List<Expression> roots = new ArrayList<>();
    for (SelectItem<?> item : ps.getSelectItems()) {
      roots.add(item.getExpression());
    }
    if (ps.getJoins() != null) {
      for (Join j : ps.getJoins()) {
        if (j.getOnExpressions() != null) {
          roots.addAll(j.getOnExpressions());
        }
      }
    }
    roots.add(ps.getWhere());
    if (ps.getGroupBy() != null && ps.getGroupBy().getGroupByExpressionList() != null) {
      roots.add(ps.getGroupBy().getGroupByExpressionList());
    }
    roots.add(ps.getHaving());
    // (node, depth) pairs on an explicit stack
    List<Expression> nodes = new ArrayList<>();
    List<Integer> depths = new ArrayList<>();
    for (Expression r : roots) {
      if (r != null) {
        nodes.add(r);
        depths.add(1);
      }
    }
    long visited = 0;
    while (!nodes.isEmpty()) {
      Expression e = nodes.remove(nodes.size() - 1);
      int d = depths.remove(depths.size() - 1);
      if (d > MAX_DEPTH) {
        throw new SqlException(what + ": an expression is nested more than " + MAX_DEPTH
            + " levels deep (each operator in a chain such as a + b + c is one level); split it, or use IN (...) for a long OR of equalities");
      }
      if (++visited % CHECK_EVERY == 0) {
        budget.check();
      }
      for (Expression child : children(e)) {
        if (child != null) {
          nodes.add(child);
          depths.add(d + 1);
        }
      }
    }
  }

  private static List<Expression> children(Expression e) {
    if (e instanceof BinaryExpression b) {
      return pair(b.getLeftExpression(), b.getRightExpression());
    }
    if (e instanceof SignedExpression s) {
      return pair(s.getExpression(), null);
    }
    if (e instanceof NotExpression n) {
      return pair(n.getExpression(), null);
    }
    if (e instanceof IsNullExpression n) {
      return pair(n.getLeftExpression(), null);
    }
    if (e instanceof CastExpression c) {
      return pair(c.getLeftExpression(), null);
    }
    if (e instanceof InExpression in) {
      return pair(in.getLeftExpression(), in.getRightExpression());
    }
    if (e instanceof ExpressionList<?> list) {
      List<Expression> out = new ArrayList<>(list.size());
      for (Object o : list) {
        if (o instanceof Expression x) {
          out.add(x);
        }
      }
      return out;
    }
    if (e instanceof Function f) {
      return f.getParameters() == null ? List.of() : List.of(f.getParameters());
    }
    if (e instanceof Between b) {
      List<Expression> out = new ArrayList<>(3);
      out.add(b.getLeftExpression());
      out.add(b.getBetweenExpressionStart());
      out.add(b.getBetweenExpressionEnd());
      return out;
    }
    if (e instanceof CaseExpression c) {
      List<Expression> out = new ArrayList<>();
      out.add(c.getSwitchExpression());
      if (c.getWhenClauses() != null) {
        out.addAll(c.getWhenClauses());
      }
      out.add(c.getElseExpression());
      return out;
    }
    if (e instanceof WhenClause w) {
      return pair(w.getWhenExpression(), w.getThenExpression());
    }
    return List.of();
  }

  private static List<Expression> pair(Expression a, Expression b) {
    List<Expression> out = new ArrayList<>(2);
    out.add(a);
    out.add(b);
    return out;
  }
}
