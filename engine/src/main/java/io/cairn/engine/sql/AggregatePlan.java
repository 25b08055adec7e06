package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.DoubleValue;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.expression.NotExpression;
import net.sf.jsqlparser.expression.NullValue;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.statement.select.AllColumns;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * Plans the aggregation of a SELECT that has GROUP BY, HAVING or an aggregate call in its select
 * list: {@code Map(group keys, aggregate inputs) → Reduce → [Filter(HAVING)] → Map(select list)}.
 *
 * <p>How it is built, in {@link #plan}:
 *
 * <ol>
 *   <li>GROUP BY expressions are translated over the input row (group {@code i}); a column
 *       number ({@code GROUP BY 1}) and GROUPING SETS are refused.
 *   <li>The select list, then HAVING, are searched for aggregate calls (COUNT, SUM, MIN, MAX,
 *       AVG; see {@link AggregateCalls}); calls with the same text (case and blanks ignored) are
 *       computed once. {@code f(DISTINCT x)} aggregates the distinct (group keys, x) rows; all the
 *       aggregates of such a SELECT must be DISTINCT over the same x. Refused: {@code *} in the select list,
 *       {@code *} for anything but COUNT, other than one argument, an aggregate inside an
 *       aggregate, SUM/AVG of a non-number.
 *   <li>A Map computes the group keys (columns {@code g0..}) then each aggregate's argument
 *       ({@code a0..}; none for {@code COUNT(*)}); a Reduce groups by the keys and outputs the
 *       keys then one column per aggregate ({@code agg0..}).
 *   <li>HAVING and the select list are translated over the Reduce's output ({@link
 *       ExpressionTranslator.ReduceSlots}): an aggregate call or an expression equal to a group
 *       key reads its column; a column that is neither throws "must appear in the GROUP BY
 *       clause or be used in an aggregate function".
 * </ol>
 *
 * <p>{@link #keyCols()}: when the select list outputs every group key as a plain column, the
 * output positions of the keys in GROUP BY order (a view is then arranged by them, so a lookup by
 * key is a seek); otherwise null (arranged by the whole row).
 *
 * <p>One instance plans one SELECT, once; every failure is a {@link SqlException} at the
 * offending node's position.
 */
final class AggregatePlan implements ExpressionTranslator.ReduceSlots {
  private final PlanErrors errors;
  private final Scope rowScope;
  private final PlainSelect ps;
  private final List<Expr> groups = new ArrayList<>();
  private final List<String> aggKeys = new ArrayList<>(); // normalized text of each aggregate call
  private final List<Aggregate.Kind> aggKinds = new ArrayList<>();
  private final List<Expr> aggArgs = new ArrayList<>(); // null for COUNT(*)
  private final List<Boolean> aggDistinct = new ArrayList<>(); // COUNT(DISTINCT x) and the like
  private int[] keyCols;

  /**
   * @param errors where failures are reported
   * @param rowScope the columns of the input row (the FROM clause's joined row)
   * @param ps the SELECT whose GROUP BY, select list and HAVING are planned
   */
  AggregatePlan(PlanErrors errors, Scope rowScope, PlainSelect ps) {
    this.errors = errors;
    this.rowScope = rowScope;
    this.ps = ps;
  }

  /** The output columns the result is keyed by after {@link #plan}, or null for the whole row. */
  int[] keyCols() {
    return keyCols;
  }

  /** The aggregation over {@code input} (the FROM clause's rows, after WHERE), ending with the select list's Map. */
  Plan plan(Plan input) {
    ExpressionTranslator row = new ExpressionTranslator(errors, rowScope, null);
    if (ps.getGroupBy() != null) {
      ExpressionList<?> list = ps.getGroupBy().getGroupByExpressionList();
      if (ps.getGroupBy().getGroupingSets() != null && !ps.getGroupBy().getGroupingSets().isEmpty()) {
        throw errors.error(ps.getGroupBy(), "unsupported syntax: GROUPING SETS");
      }
      for (Object o : list) {
        Expression g = (Expression) o;
        if (g instanceof LongValue) {
          throw errors.error(g, "unsupported syntax: GROUP BY a column number (name the column)");
        }
        groups.add(row.expr(g));
      }
    }
    for (SelectItem<?> item : ps.getSelectItems()) {
      if (item.getExpression() instanceof AllColumns) {
        throw errors.error(item, "unsupported syntax: * with GROUP BY or aggregates (name the columns)");
      }
      collect(item.getExpression(), row);
    }
    if (ps.getHaving() != null) {
      collect(ps.getHaving(), row);
    }
    // pre-map: group keys, then aggregate inputs
    List<Expr> pre = new ArrayList<>(groups);
    List<String> preNames = new ArrayList<>();
    for (int i = 0; i < groups.size(); i++) {
      preNames.add("g" + i);
    }
    int[] argCol = new int[aggArgs.size()];
    for (int a = 0; a < aggArgs.size(); a++) {
      if (aggArgs.get(a) == null) {
        argCol[a] = -1;
      } else {
        argCol[a] = pre.size();
        pre.add(aggArgs.get(a));
        preNames.add("a" + a);
      }
    }
    Plan mapped;
    if (aggDistinct.contains(true)) {
      // f(DISTINCT x): the distinct (group keys, x) rows, then f over x per group. Every aggregate of
      // the SELECT must then be a DISTINCT one over the same x (one set of distinct rows serves them)
      Expr x = aggArgs.get(0);
      for (int a = 0; a < aggArgs.size(); a++) {
        if (!aggDistinct.get(a) || aggArgs.get(a) == null || !aggArgs.get(a).equals(x)) {
          throw errors.error(ps, "unsupported syntax: an aggregate with DISTINCT beside other aggregates, or over other arguments"
              + " (all the aggregates of a SELECT with DISTINCT must be f(DISTINCT x) of one x; join two views for more)");
        }
        argCol[a] = groups.size();
      }
      List<Expr> keysAndX = new ArrayList<>(groups);
      keysAndX.add(x);
      List<String> names = new ArrayList<>(preNames.subList(0, groups.size()));
      names.add("a0");
      mapped = new Plan.Distinct(SelectList.project(input, keysAndX, names));
    } else {
      mapped = SelectList.project(input, pre, preNames);
    }
    List<Aggregate> aggs = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    int[] groupBy = new int[groups.size()];
    for (int i = 0; i < groups.size(); i++) {
      groupBy[i] = i;
      cols.add(SelectList.outputColumn("g" + i, groups.get(i), input.schema()));
    }
    for (int a = 0; a < aggArgs.size(); a++) {
      Type in = aggArgs.get(a) == null ? Type.BIGINT : aggArgs.get(a).type();
      Aggregate g = new Aggregate(aggKinds.get(a), argCol[a], in);
      aggs.add(g);
      int scale = g.resultType() == Type.NUMERIC && g.kind() != Aggregate.Kind.AVG
          ? io.cairn.engine.expr.Exprs.scale(aggArgs.get(a), input.schema()) : Column.NONE; // SUM, MIN, MAX: the input's
      cols.add(new Column("agg" + a, g.resultType(), Column.NONE, scale));
    }
    Plan reduce = new Plan.Reduce(mapped, groupBy, aggs, new Schema(cols));
    ExpressionTranslator post = new ExpressionTranslator(errors, rowScope, this);
    if (ps.getHaving() != null) {
      Expr h = post.condition(ps.getHaving(), "HAVING");
      reduce = new Plan.Filter(reduce, h);
    }
    List<Expr> exprs = new ArrayList<>();
    List<String> names = new ArrayList<>();
    for (SelectItem<?> item : ps.getSelectItems()) {
      exprs.add(post.expr(item.getExpression()));
      names.add(SelectList.outputName(item, names.size()));
    }
    // arrange by the group columns when the view outputs all of them
    List<Integer> keys = new ArrayList<>();
    for (int g = 0; g < groups.size(); g++) {
      int found = -1;
      for (int i = 0; i < exprs.size() && found < 0; i++) {
        if (exprs.get(i) instanceof Expr.Col c && c.index() == g) {
          found = i;
        }
      }
      keys.add(found);
    }
    keyCols = !keys.isEmpty() && !keys.contains(-1) ? keys.stream().mapToInt(i -> i).toArray() : null;
    return SelectList.project(reduce, exprs, names);
  }

  /** Adds the aggregate calls in {@code e} not seen yet (their arguments translated by {@code row}). */
  private void collect(Expression e, ExpressionTranslator row) {
    if (AggregateCalls.isAggregate(e)) {
      Function f = (Function) e;
      String key = f.toString().toLowerCase(Locale.ROOT).replaceAll("\\s+", "");
      if (aggKeys.contains(key)) {
        return;
      }
      Aggregate.Kind kind = Aggregate.Kind.valueOf(f.getName().toUpperCase(Locale.ROOT));
      if (f.isUnique()) {
        throw errors.error(e, "unsupported syntax: " + f.getName() + "(UNIQUE ...)");
      }
      Expr arg;
      if (f.isAllColumns() || (f.getParameters() != null && f.getParameters().size() == 1
          && f.getParameters().get(0) instanceof AllColumns)) {
        if (kind != Aggregate.Kind.COUNT) {
          throw errors.error(e, "unsupported syntax: " + f.getName() + "(*) (only COUNT takes *)");
        }
        arg = null;
      } else {
        if (f.getParameters() == null || f.getParameters().size() != 1) {
          throw errors.error(e, f.getName() + " takes exactly one argument");
        }
        Expression p = (Expression) f.getParameters().get(0);
        if (AggregateCalls.containsAggregate(p)) {
          throw errors.error(p, "aggregate calls cannot be nested");
        }
        arg = row.expr(p);
        if ((kind == Aggregate.Kind.SUM || kind == Aggregate.Kind.AVG) && !arg.type().isNumeric() && arg.type() != Type.NULL
            && arg.type() != Type.INTERVAL) {
          throw errors.error(e, "type mismatch: " + f.getName().toUpperCase(Locale.ROOT) + " needs a number or an INTERVAL, but '" + p
              + "' is " + arg.type());
        }
      }
      if (f.isDistinct() && arg == null) {
        throw errors.error(e, "unsupported syntax: " + f.getName() + "(DISTINCT *)");
      }
      aggKeys.add(key);
      aggKinds.add(kind);
      aggArgs.add(arg);
      aggDistinct.add(f.isDistinct());
      return;
    }
    if (e instanceof BinaryExpression b) {
      collect(b.getLeftExpression(), row);
      collect(b.getRightExpression(), row);
    } else if (e instanceof ParenthesedExpressionList<?> p) {
      for (Object o : p) {
        collect((Expression) o, row);
      }
    } else if (e instanceof SignedExpression s) {
      collect(s.getExpression(), row);
    } else if (e instanceof NotExpression n) {
      collect(n.getExpression(), row);
    } else if (e instanceof IsNullExpression n) {
      collect(n.getLeftExpression(), row);
    } else if (e instanceof net.sf.jsqlparser.expression.CaseExpression c) {
      if (c.getSwitchExpression() != null) {
        collect(c.getSwitchExpression(), row);
      }
      for (net.sf.jsqlparser.expression.WhenClause w : c.getWhenClauses()) {
        collect(w.getWhenExpression(), row);
        collect(w.getThenExpression(), row);
      }
      if (c.getElseExpression() != null) {
        collect(c.getElseExpression(), row);
      }
    } else if (e instanceof net.sf.jsqlparser.expression.operators.relational.Between b) {
      collect(b.getLeftExpression(), row);
      collect(b.getBetweenExpressionStart(), row);
      collect(b.getBetweenExpressionEnd(), row);
    } else if (e instanceof net.sf.jsqlparser.expression.operators.relational.InExpression in) {
      collect(in.getLeftExpression(), row);
      if (in.getRightExpression() instanceof ExpressionList<?> list) {
        for (Object o : list) {
          collect((Expression) o, row);
        }
      }
    }
  }

  /** The Reduce-output column for an aggregate call or a group-by expression, or null. */
  @Override
  public Expr slot(Expression e) {
    if (AggregateCalls.isAggregate(e)) {
      String key = e.toString().toLowerCase(Locale.ROOT).replaceAll("\\s+", "");
      int a = aggKeys.indexOf(key);
      Type t = new Aggregate(aggKinds.get(a), aggArgs.get(a) == null ? -1 : 0,
          aggArgs.get(a) == null ? Type.BIGINT : aggArgs.get(a).type()).resultType();
      return Expr.col(groups.size() + a, t);
    }
    if (e instanceof LongValue || e instanceof DoubleValue || e instanceof StringValue || e instanceof NullValue) {
      return null;
    }
    try {
      Expr asRow = new ExpressionTranslator(errors, rowScope, null).expr(e);
      int g = groups.indexOf(asRow);
      return g >= 0 ? Expr.col(g, groups.get(g).type()) : null;
    } catch (SqlException notARowExpression) {
      return null;
    }
  }
}
