package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.statement.select.AllColumns;
import net.sf.jsqlparser.statement.select.AllTableColumns;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * The select list: the final {@code Map} of a SELECT, and how its output columns are named.
 *
 * <ul>
 *   <li>{@link #plan}: a select list without aggregation, over the FROM clause's row; {@code *}
 *       expands to every column of every relation in FROM order, {@code t.*} to the columns of
 *       {@code t}.
 *   <li>{@link #outputName}: an item's alias, else its column's or function's name, else {@code
 *       column<n>} (1-based); all lower-case.
 *   <li>{@link #project}: a Map computing the expressions, its column names made unique by
 *       suffixes ({@code id}, {@code id_2}, ...); no Map at all when the expressions are the input
 *       columns in order under their own names.
 * </ul>
 *
 * <p>Stateless; failures are {@link SqlException}s of the {@link ExpressionTranslator} or the
 * {@link Scope}.
 */
final class SelectList {
  private SelectList() {}

  /** The select list of {@code items} over {@code input}, whose row {@code rowScope} describes. */
  static Plan plan(PlanErrors errors, Scope rowScope, List<SelectItem<?>> items, Plan input) {
    List<Expr> exprs = new ArrayList<>();
    List<String> names = new ArrayList<>();
    ExpressionTranslator tr = new ExpressionTranslator(errors, rowScope, null);
    for (SelectItem<?> item : items) {
      Expression e = item.getExpression();
      if (e instanceof AllColumns && !(e instanceof AllTableColumns)) {
        for (Relation r : rowScope.relations()) {
          if (!r.alias().equals(Planner.ROW_NUMBER_RELATION)) { // a window's number is not a column of FROM
            expand(r, rowScope, exprs, names);
          }
        }
      } else if (e instanceof AllTableColumns atc) {
        expand(rowScope.relation(atc.getTable(), atc), rowScope, exprs, names);
      } else {
        exprs.add(tr.expr(e));
        names.add(outputName(item, names.size()));
      }
    }
    return project(input, exprs, names);
  }

  /** Adds every column of {@code r}, under its own name. */
  private static void expand(Relation r, Scope scope, List<Expr> exprs, List<String> names) {
    for (int i = 0; i < r.schema().size(); i++) {
      int idx = r.offset() + i;
      exprs.add(Expr.col(idx, scope.schema().type(idx)));
      names.add(r.schema().column(i).name());
    }
  }

  /** {@code Map(input, exprs)} with columns {@code names} made unique, or {@code input} itself for an identity. */
  static Plan project(Plan input, List<Expr> exprs, List<String> names) {
    // skip an identity projection
    if (exprs.size() == input.schema().size()) {
      boolean identity = true;
      for (int i = 0; i < exprs.size() && identity; i++) {
        identity = exprs.get(i) instanceof Expr.Col c && c.index() == i && input.schema().column(i).name().equals(names.get(i));
      }
      if (identity) {
        return input;
      }
    }
    List<Column> cols = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < exprs.size(); i++) {
      String n = names.get(i);
      int k = 2;
      String base = n;
      while (!seen.add(n)) {
        n = base + "_" + k++;
      }
      cols.add(outputColumn(n, exprs.get(i), input.schema()));
    }
    return new Plan.Map(input, exprs, new Schema(cols));
  }

  /**
   * The output column {@code name} of {@code e} over rows of {@code input}: a column read as it is
   * keeps its declared precision and scale; a NUMERIC expression gets the scale PostgreSQL shows it
   * with ({@link io.cairn.engine.expr.Exprs#scale}).
   */
  static Column outputColumn(String name, Expr e, Schema input) {
    if (e instanceof Expr.Col c && c.index() < input.size() && input.column(c.index()).type() == e.type()) {
      return input.column(c.index()).renamed(name);
    }
    return e.type() == io.cairn.engine.row.Type.NUMERIC
        ? Column.numeric(name, Column.NONE, io.cairn.engine.expr.Exprs.scale(e, input)) : new Column(name, e.type());
  }

  /** The output name of {@code item}, the {@code index}-th (0-based) output column. */
  static String outputName(SelectItem<?> item, int index) {
    if (item.getAlias() != null) {
      return Scope.unquote(item.getAlias().getName());
    }
    Expression e = item.getExpression();
    if (e instanceof net.sf.jsqlparser.schema.Column c) {
      return Scope.unquote(c.getColumnName());
    }
    if (e instanceof net.sf.jsqlparser.expression.Function f) {
      return f.getName().toLowerCase(Locale.ROOT);
    }
    return "column" + (index + 1);
  }
}
