package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import net.sf.jsqlparser.statement.select.PlainSelect;

/**
 * Plans a SELECT (parsed by JSqlParser) into a {@link Plan}: FROM one source or view, inner
 * {@code JOIN ... ON} equalities (other ON conditions become a filter), WHERE, GROUP BY with
 * COUNT/SUM/MIN/MAX/AVG and HAVING, DISTINCT, projections with arithmetic, comparisons,
 * AND/OR/NOT and IS [NOT] NULL. Anything else is refused as unsupported syntax, naming it and its
 * position.
 *
 * <p>Shape of the plan: Get → Join* → Filter(WHERE) → [Map(group keys, aggregate inputs) → Reduce
 * → Filter(HAVING)] → Map(select list) → [Distinct]. A view with GROUP BY is arranged by the
 * group columns it outputs (so {@code SELECT ... WHERE key = ...} is a lookup); otherwise by the
 * whole row.
 *
 * <p>This class is the entry point and runs the clauses in that order; each clause is planned in
 * its own class:
 *
 * <ul>
 *   <li>{@link SelectParser}: the text to a {@link PlainSelect}, within the statement's budget;
 *       syntax errors with JSqlParser's positions.
 *   <li>{@link FromClause}: FROM and JOIN ... ON, recording a {@link Relation} per table; {@link
 *       Scope} resolves column names against them.
 *   <li>{@link ExpressionTranslator}: a JSqlParser expression to a typed {@link Expr} (WHERE, ON,
 *       select list, GROUP BY, HAVING).
 *   <li>{@link AggregatePlan}: GROUP BY, aggregate calls ({@link AggregateCalls}) and HAVING.
 *   <li>{@link SelectList}: the select list without aggregation, output names, the final Map.
 *   <li>{@link PlanErrors}: every planning error, prefixed with the subject and placed at the
 *       offending node's line and column.
 * </ul>
 *
 * <p>Failures: every refusal is a {@link SqlException} whose message starts with {@code what}; an
 * ended budget throws {@link StatementCanceledException}; a walk that still runs out of stack
 * (despite {@link ExpressionDepth}) throws "it is nested too deeply". Each call parses the text
 * afresh; {@link Planned#select()} is that tree as planned (the translator hoists a NOT that
 * JSqlParser bound to a comparison's operand, see {@link ExpressionTranslator}). Not thread-safe:
 * one statement, one thread.
 */
final class Planner {
  /** The planned query and the output columns its arrangement is keyed by (null: whole row). */
  record Planned(Plan plan, int[] keyCols, net.sf.jsqlparser.statement.select.Select select) {}

  private static final String ORDER_WITHOUT_LIMIT =
      "unsupported syntax: ORDER BY without LIMIT in a view (views are unordered; order the query that reads it, or keep the"
          + " first rows with ORDER BY … LIMIT n)";

  private final PlanErrors errors;
  private final Function<String, Schema> catalog;
  private final StatementBudget budget;

  /**
   * @param what the subject for messages, e.g. "Cannot plan view 'v'"
   * @param sql the SELECT text (prefix blanked, so positions match the statement)
   * @param catalog schema of a source or view by name, or null when there is none
   * @param budget checked while the text is read by the parser (every {@value
   *     SelectParser#PARSE_CHUNK} characters)
   */
  Planner(String what, String sql, Function<String, Schema> catalog, StatementBudget budget) {
    this.errors = new PlanErrors(what, sql);
    this.catalog = catalog;
    this.budget = budget;
  }

  /** An identifier as cairn compares it: surrounding quotes removed, lower-cased (see {@link Scope#unquote}). */
  static String unquote(String s) {
    return Scope.unquote(s);
  }

  /**
   * Microseconds since the Unix epoch of a timestamp's text (see {@link
   * ExpressionTranslator#timestampMicros}).
   *
   * @throws java.time.DateTimeException when {@code text} is not such a timestamp
   */
  static long timestampMicros(String text) {
    return ExpressionTranslator.timestampMicros(text);
  }

  /** Parses the SELECT (and nothing more): a syntax error or an ended budget throws. */
  void parseOnly() {
    new SelectParser(errors, budget).parse();
  }

  /** Plans a view or a query. {@code allowLimit}: LIMIT is allowed (one-shot queries), else refused. */
  Planned plan(boolean allowLimit) {
    try {
      net.sf.jsqlparser.statement.select.Select parsed = new SelectParser(errors, budget).parse();
      if (parsed instanceof net.sf.jsqlparser.statement.select.SetOperationList set) {
        return planSetOperation(set, allowLimit);
      }
      return planParsed((PlainSelect) parsed, allowLimit);
    } catch (StackOverflowError e) {
      // ExpressionDepth bounds every tree the planner walks; should a walk still run out of stack
      throw new SqlException(errors.what() + ": it is nested too deeply");
    }
  }

  /** A subquery in FROM: planned as a view is (no ORDER BY or LIMIT of its own). */
  private Plan planSubquery(net.sf.jsqlparser.statement.select.Select sub) {
    if (sub instanceof net.sf.jsqlparser.statement.select.SetOperationList set) {
      return planSetOperation(set, false).plan();
    }
    if (sub instanceof net.sf.jsqlparser.statement.select.ParenthesedSelect p) {
      return planSubquery(p.getSelect());
    }
    if (!(sub instanceof PlainSelect ps)) {
      throw errors.error(sub, "unsupported syntax: a subquery in FROM must be a SELECT, not '" + sub + "'");
    }
    return planParsed(ps, false).plan();
  }

  private Planned planParsed(PlainSelect ps, boolean allowLimit) {
    refuseUnsupported(ps, allowLimit);
    List<Relation> rels = new ArrayList<>();
    Plan input = new FromClause(errors, catalog, this::planSubquery).plan(ps, rels);
    Scope rowScope = new Scope(errors, rels, input.schema());
    if (ps.getWhere() != null) {
      // a conjunct that is IN (subquery) or [NOT] EXISTS (subquery) is a semi- or anti-join; the rest one filter
      Expr w = null;
      for (net.sf.jsqlparser.expression.Expression c : FromClause.conjuncts(ps.getWhere())) {
        Plan joined = subqueryJoin(c, input, rowScope);
        if (joined != null) {
          input = joined;
          continue;
        }
        Expr e = new ExpressionTranslator(errors, rowScope, null).condition(c, "WHERE");
        w = w == null ? e : new Expr.And(w, e);
      }
      if (w != null) {
        input = new Plan.Filter(input, w);
      }
    }
    boolean aggregate = ps.getGroupBy() != null || ps.getHaving() != null || AggregateCalls.hasAggregate(ps);
    Plan out;
    int[] keyCols = null;
    if (!aggregate) {
      Plan.TopK numbered = rowNumber(ps, input, rowScope);
      if (numbered != null) {
        List<Relation> withNumber = new ArrayList<>(rels);
        withNumber.add(new Relation(ROW_NUMBER_RELATION, ROW_NUMBER_RELATION, Schema.of(numbered.schema().column(input.schema().size())),
            input.schema().size()));
        input = numbered;
        rowScope = new Scope(errors, withNumber, input.schema());
      }
      out = SelectList.plan(errors, rowScope, ps.getSelectItems(), input);
    } else {
      net.sf.jsqlparser.expression.AnalyticExpression window = windowItem(ps);
      if (window != null) {
        throw errors.error(window, "unsupported syntax: a window function beside GROUP BY or aggregates"
            + " (number the rows of a subquery that aggregates: SELECT *, ROW_NUMBER() OVER (…) FROM (SELECT … GROUP BY …) g)");
      }
      List<net.sf.jsqlparser.expression.operators.relational.ComparisonOperator> later = havingSubqueries(ps);
      AggregatePlan ap = new AggregatePlan(errors, rowScope, ps);
      out = ap.plan(input);
      keyCols = ap.keyCols();
      if (!later.isEmpty()) {
        // each compares a hidden output column with its subquery, as a WHERE over the groups would
        int visible = out.schema().size() - later.size();
        Scope groups = new Scope(errors, List.of(new Relation("#groups", "#groups", out.schema(), 0)), out.schema());
        for (var c : later) {
          out = scalarComparison(c, out, groups);
        }
        out = new Plan.Map(out, columnsOf(out.schema()).subList(0, visible), new Schema(out.schema().columns().subList(0, visible)));
      }
    }
    if (ps.getDistinct() != null && ps.getDistinct().getOnSelectItems() != null) {
      int[] on = distinctOn(ps, out.schema());
      out = new Plan.TopK(out, on, ResultWindow.of(ps, out.schema(), errors.what()).keys(), 0, 1);
      keyCols = on;
    } else if (ps.getDistinct() != null) {
      out = new Plan.Distinct(out);
      keyCols = null;
    }
    if (!allowLimit && (ps.getLimit() != null || ps.getOffset() != null)) {
      out = topK(ps, out);
    }
    return new Planned(out, keyCols, ps);
  }

  /** The relation whose one column is the row number of {@link #rowNumber}: never expanded by {@code *}. */
  static final String ROW_NUMBER_RELATION = "#window";
  private static final String ROW_NUMBER_COLUMN = "#row_number";

  /** The select item of {@code ps} that is a window function, or null. */
  private static net.sf.jsqlparser.expression.AnalyticExpression windowItem(PlainSelect ps) {
    for (net.sf.jsqlparser.statement.select.SelectItem<?> item : ps.getSelectItems()) {
      if (item.getExpression() instanceof net.sf.jsqlparser.expression.AnalyticExpression a) {
        return a;
      }
    }
    return null;
  }

  /**
   * {@code ROW_NUMBER() OVER (PARTITION BY a, b ORDER BY x DESC)} as a select item: a top-k per
   * partition without a limit whose rows carry their number ({@link Plan.TopK#rowNumber}); the
   * item is rewritten to read that number (named {@code row_number} unless aliased). An outer
   * {@code WHERE rn <= k} becomes the top-k's limit (FilterPushdown), which is how top-k per group
   * is written in PostgreSQL. Partitions and orders are by columns; one window function per SELECT.
   * Null when {@code ps} has none.
   */
  private Plan.TopK rowNumber(PlainSelect ps, Plan input, Scope rowScope) {
    net.sf.jsqlparser.expression.AnalyticExpression a = null;
    net.sf.jsqlparser.statement.select.SelectItem<?> at = null;
    for (net.sf.jsqlparser.statement.select.SelectItem<?> item : ps.getSelectItems()) {
      if (item.getExpression() instanceof net.sf.jsqlparser.expression.AnalyticExpression x) {
        if (a != null) {
          throw errors.error(x, "unsupported syntax: more than one window function in a SELECT");
        }
        a = x;
        at = item;
      }
    }
    if (a == null) {
      return null;
    }
    if (!a.getName().equalsIgnoreCase("row_number")) {
      throw errors.error(a, "unsupported syntax: window function " + a.getName().toUpperCase(java.util.Locale.ROOT)
          + " (ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) is supported)");
    }
    if (a.getExpression() != null || a.getWindowElement() != null || a.getWindowName() != null || a.getFilterExpression() != null
        || a.getType() != net.sf.jsqlparser.expression.AnalyticType.OVER) {
      throw errors.error(a, "unsupported syntax: " + a + " (write ROW_NUMBER() OVER (PARTITION BY … ORDER BY …), without a frame or a named window)");
    }
    ExpressionTranslator tr = new ExpressionTranslator(errors, rowScope, null);
    List<Integer> partition = new ArrayList<>();
    if (a.getPartitionExpressionList() != null) {
      for (Object o : a.getPartitionExpressionList()) {
        partition.add(windowColumn(tr, (net.sf.jsqlparser.expression.Expression) o, "PARTITION BY"));
      }
    }
    List<io.cairn.engine.plan.SortKey> order = new ArrayList<>();
    if (a.getOrderByElements() != null) {
      for (net.sf.jsqlparser.statement.select.OrderByElement e : a.getOrderByElements()) {
        boolean desc = !e.isAsc();
        boolean nullsFirst = e.getNullOrdering() == null ? desc
            : e.getNullOrdering() == net.sf.jsqlparser.statement.select.OrderByElement.NullOrdering.NULLS_FIRST;
        order.add(new io.cairn.engine.plan.SortKey(windowColumn(tr, e.getExpression(), "ORDER BY"), desc, nullsFirst));
      }
    }
    if (at.getAlias() == null) {
      at.setAlias(new net.sf.jsqlparser.expression.Alias("row_number"));
    }
    @SuppressWarnings({"unchecked", "rawtypes"})
    net.sf.jsqlparser.statement.select.SelectItem raw = at;
    raw.setExpression(new net.sf.jsqlparser.schema.Column("\"" + ROW_NUMBER_COLUMN + "\""));
    return new Plan.TopK(input, partition.stream().mapToInt(Integer::intValue).toArray(), order, 0, Long.MAX_VALUE, ROW_NUMBER_COLUMN);
  }

  private int windowColumn(ExpressionTranslator tr, net.sf.jsqlparser.expression.Expression e, String clause) {
    Expr x = tr.expr(e);
    if (!(x instanceof Expr.Col c)) {
      throw errors.error(e, "unsupported syntax: " + clause + " of a window by '" + e + "' (a column is required; compute it in a subquery)");
    }
    return c.index();
  }

  /**
   * The conjuncts of {@code ps}'s HAVING that compare with a scalar subquery (TPC-H Q11), taken out
   * of it: each one's other side becomes a hidden select item ({@code #having<i>}, after the
   * visible ones) and the comparison is rewritten to read that column, to be planned over the
   * groups by {@link #scalarComparison}. The rest of HAVING stays.
   */
  private List<net.sf.jsqlparser.expression.operators.relational.ComparisonOperator> havingSubqueries(PlainSelect ps) {
    List<net.sf.jsqlparser.expression.operators.relational.ComparisonOperator> out = new ArrayList<>();
    if (ps.getHaving() == null) {
      return out;
    }
    List<net.sf.jsqlparser.expression.Expression> rest = new ArrayList<>();
    for (net.sf.jsqlparser.expression.Expression c : FromClause.conjuncts(ps.getHaving())) {
      var cmp = c instanceof net.sf.jsqlparser.expression.operators.relational.ComparisonOperator o ? o : null;
      boolean subLeft = cmp != null && !scalarSubqueries(cmp.getLeftExpression()).isEmpty();
      boolean subRight = cmp != null && !scalarSubqueries(cmp.getRightExpression()).isEmpty();
      if (subLeft ^ subRight) {
        String name = "#having" + out.size();
        ps.addSelectItem(subRight ? cmp.getLeftExpression() : cmp.getRightExpression(), new net.sf.jsqlparser.expression.Alias("\"" + name + "\""));
        net.sf.jsqlparser.schema.Column ref = new net.sf.jsqlparser.schema.Column("\"" + name + "\"");
        if (subRight) {
          cmp.setLeftExpression(ref);
        } else {
          cmp.setRightExpression(ref);
        }
        out.add(cmp);
      } else {
        rest.add(c);
      }
    }
    if (!out.isEmpty()) {
      ps.setHaving(rest.isEmpty() ? null : and(rest));
    }
    return out;
  }

  /**
   * A view's (or subquery's) {@code ORDER BY … LIMIT n [OFFSET m]}: the rows of {@code out} in that
   * window, maintained as the input changes (a query's window is cut from its result instead, see
   * {@link ResultWindow}).
   */
  private Plan topK(net.sf.jsqlparser.statement.select.Select ps, Plan out) {
    ResultWindow w = ResultWindow.of(ps, out.schema(), errors.what());
    return new Plan.TopK(out, new int[0], w.keys(), w.offset(), w.limit());
  }

  /**
   * The output columns of {@code DISTINCT ON (…)}, PostgreSQL's "first row of each group": each an
   * output column's name or position, and, when there is an ORDER BY, its leading keys in any order
   * (the rest of the ORDER BY picks the row kept).
   */
  private int[] distinctOn(PlainSelect ps, Schema schema) {
    var items = ps.getDistinct().getOnSelectItems();
    int[] on = new int[items.size()];
    for (int i = 0; i < on.length; i++) {
      on[i] = ResultWindow.column(items.get(i).getExpression(), schema, errors.what(), "DISTINCT ON");
    }
    List<io.cairn.engine.plan.SortKey> keys = ResultWindow.of(ps, schema, errors.what()).keys();
    if (!keys.isEmpty()) {
      java.util.Set<Integer> lead = new java.util.HashSet<>();
      for (int i = 0; i < Math.min(on.length, keys.size()); i++) {
        lead.add(keys.get(i).column());
      }
      java.util.Set<Integer> onSet = new java.util.HashSet<>();
      for (int c : on) {
        onSet.add(c);
      }
      if (keys.size() < onSet.size() || !lead.equals(onSet)) {
        throw errors.error(ps.getDistinct(), "SELECT DISTINCT ON expressions must match initial ORDER BY expressions");
      }
    }
    return on;
  }

  /**
   * {@code a UNION [ALL] b}, {@code INTERSECT}, {@code EXCEPT}, left to right, out of the operators
   * every view has: UNION ALL is the multiset sum; UNION is its DISTINCT; INTERSECT and EXCEPT
   * (set semantics, as SQL's) group the two DISTINCT sides by every column — so that NULLs are
   * equal, as a set operation wants and an equi-join would not give — counting the rows of each
   * side, and keep the groups found in both, or in the left one only. The sides must have as many
   * columns, of the same types; the result has the left side's column names. INTERSECT ALL and
   * EXCEPT ALL are refused. The ORDER BY, LIMIT and OFFSET of the whole are a query's.
   */
  private Planned planSetOperation(net.sf.jsqlparser.statement.select.SetOperationList set, boolean allowLimit) {
    if (set.getWithItemsList() != null && !set.getWithItemsList().isEmpty()) {
      throw errors.error(set, "unsupported syntax: WITH");
    }
    boolean window = set.getLimit() != null || set.getOffset() != null;
    if (!allowLimit && !window && set.getOrderByElements() != null && !set.getOrderByElements().isEmpty()) {
      throw errors.error(set, ORDER_WITHOUT_LIMIT);
    }
    if (set.getFetch() != null) {
      throw errors.error(set, "unsupported syntax: FETCH (write LIMIT n)");
    }
    Plan acc = planParsed((PlainSelect) set.getSelect(0), false).plan();
    for (int i = 1; i < set.getSelects().size(); i++) {
      Plan next = planParsed((PlainSelect) set.getSelect(i), false).plan();
      net.sf.jsqlparser.statement.select.SetOperation op = set.getOperation(i - 1);
      if (next.schema().size() != acc.schema().size()) {
        throw errors.error(set.getSelect(i), "each " + op + " query must have the same number of columns: " + acc.schema().size()
            + " and " + next.schema().size());
      }
      for (int c = 0; c < acc.schema().size(); c++) {
        if (next.schema().type(c) != acc.schema().type(c)) {
          throw errors.error(set.getSelect(i), op + " types " + acc.schema().type(c) + " and " + next.schema().type(c)
              + " cannot be matched (column " + (c + 1) + ", '" + acc.schema().column(c).name() + "')");
        }
      }
      // the result keeps the left side's names
      next = new Plan.Map(next, columnsOf(next.schema()), acc.schema());
      if (op instanceof net.sf.jsqlparser.statement.select.UnionOp u) {
        acc = u.isAll() ? new Plan.Union(acc, next) : new Plan.Distinct(new Plan.Union(acc, next));
      } else if (op instanceof net.sf.jsqlparser.statement.select.IntersectOp || op instanceof net.sf.jsqlparser.statement.select.ExceptOp
          || op instanceof net.sf.jsqlparser.statement.select.MinusOp) {
        if (op.isAll()) {
          throw errors.error(set.getSelect(i), "unsupported syntax: " + op + " (INTERSECT and EXCEPT without ALL are supported)");
        }
        acc = setMembership(acc, next, op instanceof net.sf.jsqlparser.statement.select.IntersectOp);
      } else {
        throw errors.error(set.getSelect(i), "unsupported syntax: " + op);
      }
    }
    if (!allowLimit && window) {
      acc = topK(set, acc);
    }
    return new Planned(acc, null, set);
  }

  /** The distinct rows of {@code left} that are (INTERSECT) or are not (EXCEPT) rows of {@code right}, NULLs equal. */
  private static Plan setMembership(Plan left, Plan right, boolean intersect) {
    Schema s = left.schema();
    int n = s.size();
    List<io.cairn.engine.row.Column> tagged = new ArrayList<>(s.columns());
    tagged.add(new io.cairn.engine.row.Column("#from_left", io.cairn.engine.row.Type.BIGINT));
    Schema taggedSchema = new Schema(tagged);
    List<Expr> l = new ArrayList<>(columnsOf(s));
    l.add(Expr.lit(1L));
    List<Expr> r = new ArrayList<>(columnsOf(s));
    r.add(Expr.lit(0L));
    Plan both = new Plan.Union(new Plan.Map(new Plan.Distinct(left), l, taggedSchema), new Plan.Map(new Plan.Distinct(right), r, taggedSchema));
    int[] groupBy = new int[n];
    for (int i = 0; i < n; i++) {
      groupBy[i] = i;
    }
    List<io.cairn.engine.plan.Aggregate> aggs = List.of(
        io.cairn.engine.plan.Aggregate.countStar(),
        new io.cairn.engine.plan.Aggregate(io.cairn.engine.plan.Aggregate.Kind.SUM, n, io.cairn.engine.row.Type.BIGINT));
    List<io.cairn.engine.row.Column> outCols = new ArrayList<>(s.columns());
    outCols.add(new io.cairn.engine.row.Column("#sides", io.cairn.engine.row.Type.BIGINT));
    outCols.add(new io.cairn.engine.row.Column("#in_left", io.cairn.engine.row.Type.BIGINT));
    Plan counted = new Plan.Reduce(both, groupBy, aggs, new Schema(outCols));
    // INTERSECT: in both sides (2 rows, one of them the left's); EXCEPT: in the left side only (1 row, the left's)
    Expr keep = new Expr.And(
        new Expr.Cmp(Expr.CmpOp.EQ, Expr.col(n, io.cairn.engine.row.Type.BIGINT), Expr.lit(intersect ? 2L : 1L)),
        new Expr.Cmp(Expr.CmpOp.EQ, Expr.col(n + 1, io.cairn.engine.row.Type.BIGINT), Expr.lit(1L)));
    return new Plan.Map(new Plan.Filter(counted, keep), columnsOf(s), s);
  }

  /** Every column of {@code s}, as expressions. */
  private static List<Expr> columnsOf(Schema s) {
    List<Expr> out = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      out.add(Expr.col(i, s.type(i)));
    }
    return out;
  }

  /**
   * The WHERE conjunct {@code c} decorrelated into a join with {@code input}, or null when it holds
   * no subquery:
   *
   * <ul>
   *   <li>{@code x IN (SELECT y ...)} (uncorrelated, one column): the rows of {@code input} whose
   *       x is a value of the subquery: {@code π(input ⋈ δ(sub))} on x = y (a NULL x matches
   *       nothing, as SQL's IN is then not TRUE). {@code NOT IN (SELECT ...)} is refused (its
   *       NULL rules make it another operator): write NOT EXISTS.
   *   <li>{@code [NOT] EXISTS (SELECT ... FROM t WHERE t.a = outer.b AND ...)}: the conjuncts of
   *       the subquery's WHERE that equate one of its columns with a column of the outer query are
   *       the join keys (at least one is required); the others filter the subquery's rows. EXISTS
   *       is the semi-join {@code π(input ⋈ δ(keys))}, NOT EXISTS {@code input} minus it.
   * </ul>
   *
   * Each keeps the rows of {@code input} with their multiplicity, and its columns.
   */
  private Plan subqueryJoin(net.sf.jsqlparser.expression.Expression c, Plan input, Scope rowScope) {
    boolean notExists = false;
    if (c instanceof net.sf.jsqlparser.expression.NotExpression n
        && n.getExpression() instanceof net.sf.jsqlparser.expression.operators.relational.ExistsExpression) {
      notExists = true;
      c = n.getExpression();
    }
    if (c instanceof net.sf.jsqlparser.expression.operators.relational.InExpression in
        && in.getRightExpression() instanceof net.sf.jsqlparser.statement.select.ParenthesedSelect sub) {
      if (!(sub.getSelect() instanceof PlainSelect inner)) {
        throw errors.error(sub, "unsupported syntax: the subquery of IN must be a plain SELECT");
      }
      Plan values = planParsed(inner, false).plan();
      if (values.schema().size() != 1) {
        throw errors.error(sub, "the subquery of IN must return one column, not " + values.schema().size());
      }
      Expr x = new ExpressionTranslator(errors, rowScope, null).expr(in.getLeftExpression());
      if (!(x instanceof Expr.Col col)) {
        throw errors.error(in.getLeftExpression(), "unsupported syntax: IN (subquery) takes a column on its left");
      }
      if (col.type() != values.schema().type(0)) {
        throw errors.error(in, "type mismatch: " + col.type() + " IN (subquery of " + values.schema().type(0) + ")");
      }
      if (in.isNot()) {
        return notIn(input, values, col.index());
      }
      return semiJoin(input, new Plan.Distinct(values), new int[] {col.index()}, false);
    }
    if (c instanceof net.sf.jsqlparser.expression.operators.relational.ComparisonOperator cmp
        && (!scalarSubqueries(cmp.getRightExpression()).isEmpty() || !scalarSubqueries(cmp.getLeftExpression()).isEmpty())) {
      return scalarComparison(cmp, input, rowScope);
    }
    if (c instanceof net.sf.jsqlparser.expression.operators.relational.ExistsExpression ex) {
      notExists |= ex.isNot();
      if (!(ex.getRightExpression() instanceof net.sf.jsqlparser.statement.select.ParenthesedSelect sub)
          || !(sub.getSelect() instanceof PlainSelect inner)) {
        throw errors.error(ex, "unsupported syntax: EXISTS takes a plain SELECT");
      }
      if (inner.getGroupBy() != null || inner.getHaving() != null || AggregateCalls.hasAggregate(inner) || inner.getLimit() != null
          || inner.getOffset() != null || (inner.getOrderByElements() != null && !inner.getOrderByElements().isEmpty())) {
        throw errors.error(ex, "unsupported syntax: the subquery of EXISTS may have FROM, JOIN and WHERE only");
      }
      List<Relation> innerRels = new ArrayList<>();
      Plan from = new FromClause(errors, catalog, this::planSubquery).plan(inner, innerRels);
      Scope innerScope = new Scope(errors, innerRels, from.schema());
      Correlation cor = correlate(inner, innerScope, input, rowScope, "WHERE of EXISTS");
      if (cor.innerKeys().isEmpty()) {
        throw errors.error(ex, "unsupported syntax: EXISTS needs its WHERE to equate a column of the subquery with a column of the"
            + " outer query (a correlated EXISTS)");
      }
      Plan rows = cor.local().isEmpty() ? from : new Plan.Filter(from, new ExpressionTranslator(errors, innerScope, null)
          .condition(and(cor.local()), "WHERE of EXISTS"));
      int[] outerKeys = cor.outerKeys().stream().mapToInt(i -> i).toArray();
      if (cor.crossing().isEmpty()) {
        List<Expr> keyExprs = new ArrayList<>();
        List<io.cairn.engine.row.Column> keyCols = new ArrayList<>();
        for (int k = 0; k < cor.innerKeys().size(); k++) {
          int i = cor.innerKeys().get(k);
          keyExprs.add(Expr.col(i, from.schema().type(i)));
          keyCols.add(new io.cairn.engine.row.Column("k" + k, from.schema().type(i)));
        }
        Plan keys = new Plan.Distinct(new Plan.Map(rows, keyExprs, new Schema(keyCols)));
        return semiJoin(input, keys, outerKeys, notExists);
      }
      // conditions between the two rows other than equalities (TPC-H Q21's l2.l_suppkey <> l1.l_suppkey): over the
      // joined rows, whose outer columns that the keys and those conditions read are the rows of the outer query that match
      Plan joined = Plan.Join.of(input, rows, outerKeys, cor.innerKeys().stream().mapToInt(i -> i).toArray());
      Scope both = innerScope.after(rowScope, joined.schema());
      Expr cond = new ExpressionTranslator(errors, both, null).condition(and(cor.crossing()), "WHERE of EXISTS");
      java.util.BitSet used = new java.util.BitSet();
      io.cairn.engine.expr.Exprs.columns(cond, used);
      java.util.TreeSet<Integer> cols = new java.util.TreeSet<>(cor.outerKeys());
      used.stream().filter(i -> i < input.schema().size()).forEach(cols::add);
      List<Expr> keyExprs = new ArrayList<>();
      List<io.cairn.engine.row.Column> keyCols = new ArrayList<>();
      for (int i : cols) {
        keyExprs.add(Expr.col(i, input.schema().type(i)));
        keyCols.add(new io.cairn.engine.row.Column("k" + keyCols.size(), input.schema().type(i)));
      }
      Plan matched = new Plan.Distinct(new Plan.Map(new Plan.Filter(joined, cond), keyExprs, new Schema(keyCols)));
      return semiJoin(input, matched, cols.stream().mapToInt(i -> i).toArray(), notExists);
    }
    return null;
  }

  /**
   * The scalar subqueries of {@code e} that are its whole value or reached through arithmetic, signs
   * and parentheses only ({@code 2 * (SELECT …) + 1}): operators that give NULL for NULL, so a
   * subquery's missing value (no row) makes the comparison not TRUE, as a dropped row is. A
   * subquery under anything else (a function, CASE) is not found here, and is refused as an
   * expression.
   */
  private static List<net.sf.jsqlparser.statement.select.ParenthesedSelect> scalarSubqueries(net.sf.jsqlparser.expression.Expression e) {
    List<net.sf.jsqlparser.statement.select.ParenthesedSelect> out = new ArrayList<>();
    scalarSubqueries(e, out);
    return out;
  }

  private static void scalarSubqueries(net.sf.jsqlparser.expression.Expression e, List<net.sf.jsqlparser.statement.select.ParenthesedSelect> out) {
    if (e instanceof net.sf.jsqlparser.statement.select.ParenthesedSelect ps) {
      out.add(ps);
    } else if (e instanceof net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList<?> p && p.size() == 1) {
      scalarSubqueries(p.get(0), out);
    } else if (e instanceof net.sf.jsqlparser.expression.SignedExpression s) {
      scalarSubqueries(s.getExpression(), out);
    } else if (e instanceof net.sf.jsqlparser.expression.operators.arithmetic.Addition
        || e instanceof net.sf.jsqlparser.expression.operators.arithmetic.Subtraction
        || e instanceof net.sf.jsqlparser.expression.operators.arithmetic.Multiplication
        || e instanceof net.sf.jsqlparser.expression.operators.arithmetic.Division
        || e instanceof net.sf.jsqlparser.expression.operators.arithmetic.Modulo) {
      net.sf.jsqlparser.expression.BinaryExpression b = (net.sf.jsqlparser.expression.BinaryExpression) e;
      scalarSubqueries(b.getLeftExpression(), out);
      scalarSubqueries(b.getRightExpression(), out);
    }
  }

  /**
   * {@code expr op (SELECT agg(...) FROM ...)}: a subquery that is one SUM, AVG, MIN or MAX (or an
   * expression of them) without GROUP BY, so one value or, over no rows, none — where SQL's value
   * is NULL and the comparison is not TRUE either. The subquery may stand inside arithmetic on its
   * side ({@code amount > 2 * (SELECT AVG(amount) FROM t)}, see {@link #scalarSubqueries}); one
   * subquery per comparison:
   *
   * <ul>
   *   <li>uncorrelated: its one row is joined to every row of {@code input} on a constant;
   *   <li>correlated by equalities ({@code WHERE inner.a = outer.b AND ...}, TPC-H Q2, Q17, Q20):
   *       decorrelated into the subquery grouped by its correlated columns, joined on them to
   *       {@code input} — an outer row without a group gets no value, as SQL's NULL compares.
   * </ul>
   *
   * Then compared, and the subquery's columns dropped again. COUNT counts 0 over no rows, not
   * NULL: uncorrelated, the subquery's one row is SQL's row of no rows anyway (COUNT 0); correlated,
   * the outer rows without a group (an anti-join on the keys) are added with a count of 0, so there
   * the subquery must be COUNT alone (an expression of it would need its value at 0). A
   * correlation other than equalities is refused.
   */
  private Plan scalarComparison(net.sf.jsqlparser.expression.operators.relational.ComparisonOperator cmp, Plan input, Scope rowScope) {
    List<net.sf.jsqlparser.statement.select.ParenthesedSelect> subs = scalarSubqueries(cmp.getLeftExpression());
    subs.addAll(scalarSubqueries(cmp.getRightExpression()));
    if (subs.size() != 1) {
      throw errors.error(subs.get(subs.size() - 1), "unsupported syntax: a comparison with " + subs.size() + " scalar subqueries ('" + cmp
          + "'): compare with one (write the others as separate conditions, or join them)");
    }
    var sub = subs.get(0);
    if (!(sub.getSelect() instanceof PlainSelect inner) || inner.getGroupBy() != null || !AggregateCalls.hasAggregate(inner)
        || inner.getSelectItems().size() != 1) {
      throw errors.error(sub, "unsupported syntax: a scalar subquery must be one COUNT, SUM, AVG, MIN or MAX (or an expression of"
          + " them) without GROUP BY");
    }
    net.sf.jsqlparser.expression.Expression item = inner.getSelectItems().get(0).getExpression();
    boolean count = AggregateCalls.isCount(item);
    boolean countInside = !count && AggregateCalls.callsCount(item);
    List<Relation> innerRels = new ArrayList<>();
    Plan from = new FromClause(errors, catalog, this::planSubquery).plan(inner, innerRels);
    Correlation cor = correlate(inner, new Scope(errors, innerRels, from.schema()), input, rowScope, "WHERE of a scalar subquery");
    int n = input.schema().size();
    int m = cor.innerKeys().size();
    Plan value;
    Plan joined;
    if (m == 0) {
      try {
        value = planParsed(inner, false).plan();
      } catch (SqlException e) {
        throw errors.error(sub, "unsupported syntax: a scalar subquery must be uncorrelated or correlated by equalities between its"
            + " columns and the outer query's (" + e.getMessage() + ")");
      }
      List<Expr> left = new ArrayList<>(columnsOf(input.schema()));
      left.add(Expr.lit(1L));
      List<io.cairn.engine.row.Column> leftCols = new ArrayList<>(input.schema().columns());
      leftCols.add(new io.cairn.engine.row.Column("#one", io.cairn.engine.row.Type.BIGINT));
      Plan keyed = new Plan.Map(input, left, new Schema(leftCols));
      Plan one = new Plan.Map(value, List.of(Expr.lit(1L), Expr.col(0, value.schema().type(0))),
          Schema.of(new io.cairn.engine.row.Column("#one", io.cairn.engine.row.Type.BIGINT),
              new io.cairn.engine.row.Column("#value", value.schema().type(0))));
      joined = Plan.Join.of(keyed, one, new int[] {n}, new int[] {0});
      m = 2; // the value follows the outer row's #one and the subquery's #one
    } else {
      if (!cor.crossing().isEmpty()) {
        throw errors.error(cor.crossing().get(0), "unsupported syntax: a correlated scalar subquery may relate its columns to the outer"
            + " query's by equalities only");
      }
      if (countInside) {
        throw errors.error(sub, "unsupported syntax: in a correlated scalar subquery COUNT must stand alone ('" + item
            + "'): over no rows its value is 0, which cairn adds only for COUNT itself");
      }
      // the subquery without its correlations, grouped by its correlated columns, which lead its select list
      inner.setWhere(cor.local().isEmpty() ? null : and(cor.local()));
      net.sf.jsqlparser.statement.select.GroupByElement group = new net.sf.jsqlparser.statement.select.GroupByElement();
      List<net.sf.jsqlparser.statement.select.SelectItem<?>> items = new ArrayList<>();
      for (int k = 0; k < m; k++) {
        group.addGroupByExpression(cor.innerColumns().get(k));
        items.add(new net.sf.jsqlparser.statement.select.SelectItem<>(cor.innerColumns().get(k),
            new net.sf.jsqlparser.expression.Alias("#k" + k)));
      }
      items.addAll(inner.getSelectItems());
      inner.setGroupByElement(group);
      inner.setSelectItems(items);
      value = planParsed(inner, false).plan();
      int[] valueKeys = new int[m];
      for (int k = 0; k < m; k++) {
        valueKeys[k] = k;
      }
      int[] outerKeys = cor.outerKeys().stream().mapToInt(i -> i).toArray();
      joined = Plan.Join.of(input, value, outerKeys, valueKeys);
      if (count) {
        joined = withZeroCounts(input, value, joined, outerKeys);
      }
    }
    // the comparison as written, over the joined row: the subquery reads its joined value
    Scope joinedScope = new Scope(errors, rowScope.relations(), joined.schema());
    java.util.Map<net.sf.jsqlparser.expression.Expression, Expr> planned = new java.util.IdentityHashMap<>();
    planned.put(sub, Expr.col(n + m, joined.schema().type(n + m)));
    Expr cond = new ExpressionTranslator(errors, joinedScope, null, planned).condition(cmp, "WHERE");
    Plan kept = new Plan.Filter(joined, cond);
    return new Plan.Map(kept, columnsOf(input.schema()), input.schema());
  }

  /**
   * A correlated COUNT's join ({@code input} ⋈ {@code value} on {@code outerKeys}: the outer row,
   * the group's keys, its count) plus the outer rows that have no group, each with its own key
   * columns and a count of 0, as SQL counts over no rows. Both parts carry the outer row's key
   * columns in the middle, so their columns agree.
   */
  private static Plan withZeroCounts(Plan input, Plan value, Plan joined, int[] outerKeys) {
    int n = input.schema().size();
    int m = outerKeys.length;
    List<io.cairn.engine.row.Column> cols = new ArrayList<>(input.schema().columns());
    List<Expr> matched = new ArrayList<>(columnsOf(input.schema()));
    List<Expr> lonely = new ArrayList<>(columnsOf(input.schema()));
    List<Expr> keyCols = new ArrayList<>();
    List<io.cairn.engine.row.Column> keySchema = new ArrayList<>();
    for (int k = 0; k < m; k++) {
      io.cairn.engine.row.Type t = input.schema().type(outerKeys[k]);
      cols.add(new io.cairn.engine.row.Column("#k" + k, t));
      matched.add(Expr.col(outerKeys[k], t));
      lonely.add(Expr.col(outerKeys[k], t));
      keyCols.add(Expr.col(k, value.schema().type(k)));
      keySchema.add(new io.cairn.engine.row.Column("#k" + k, value.schema().type(k)));
    }
    cols.add(new io.cairn.engine.row.Column("#count", io.cairn.engine.row.Type.BIGINT));
    matched.add(Expr.col(n + m, io.cairn.engine.row.Type.BIGINT));
    lonely.add(Expr.lit(0L));
    Schema schema = new Schema(cols);
    Plan groups = new Plan.Map(value, keyCols, new Schema(keySchema));
    Plan withoutGroup = semiJoin(input, groups, outerKeys, true);
    return new Plan.Union(new Plan.Map(joined, matched, schema), new Plan.Map(withoutGroup, lonely, schema));
  }

  /**
   * A subquery's WHERE split for decorrelation: equalities between one of its columns and a column
   * of the outer query (the join keys: {@code innerKeys} in the subquery's row, {@code innerColumns}
   * their names there, {@code outerKeys} in the outer row), conditions over its own columns
   * ({@code local}), and the other conditions ({@code crossing}: they name outer columns, or are
   * not plain conditions).
   */
  private record Correlation(List<Integer> innerKeys, List<net.sf.jsqlparser.schema.Column> innerColumns, List<Integer> outerKeys,
      List<net.sf.jsqlparser.expression.Expression> local, List<net.sf.jsqlparser.expression.Expression> crossing) {}

  private Correlation correlate(PlainSelect inner, Scope innerScope, Plan input, Scope outerScope, String clause) {
    List<Integer> innerKeys = new ArrayList<>();
    List<net.sf.jsqlparser.schema.Column> innerColumns = new ArrayList<>();
    List<Integer> outerKeys = new ArrayList<>();
    List<net.sf.jsqlparser.expression.Expression> local = new ArrayList<>();
    List<net.sf.jsqlparser.expression.Expression> crossing = new ArrayList<>();
    if (inner.getWhere() == null) {
      return new Correlation(innerKeys, innerColumns, outerKeys, local, crossing);
    }
    for (net.sf.jsqlparser.expression.Expression k : FromClause.conjuncts(inner.getWhere())) {
      if (k instanceof net.sf.jsqlparser.expression.operators.relational.EqualsTo eq
          && eq.getLeftExpression() instanceof net.sf.jsqlparser.schema.Column a
          && eq.getRightExpression() instanceof net.sf.jsqlparser.schema.Column b) {
        Integer ia = resolves(innerScope, a);
        Integer ib = resolves(innerScope, b);
        Integer oa = ia == null ? resolves(outerScope, a) : null;
        Integer ob = ib == null ? resolves(outerScope, b) : null;
        if ((ia != null && ob != null) || (ib != null && oa != null)) {
          int i = ia != null ? ia : ib;
          int o = ob != null ? ob : oa;
          if (innerScope.schema().type(i) != input.schema().type(o)) {
            throw errors.error(eq, "type mismatch: cannot correlate " + innerScope.schema().type(i) + " with " + input.schema().type(o));
          }
          innerKeys.add(i);
          innerColumns.add(ia != null ? a : b);
          outerKeys.add(o);
          continue;
        }
      }
      try {
        new ExpressionTranslator(errors, innerScope, null).condition(k, clause);
        local.add(k);
      } catch (SqlException notLocal) {
        crossing.add(k);
      }
    }
    return new Correlation(innerKeys, innerColumns, outerKeys, local, crossing);
  }

  /** {@code conjuncts} AND-ed into one expression. */
  private static net.sf.jsqlparser.expression.Expression and(List<net.sf.jsqlparser.expression.Expression> conjuncts) {
    net.sf.jsqlparser.expression.Expression out = conjuncts.get(0);
    for (int i = 1; i < conjuncts.size(); i++) {
      out = new net.sf.jsqlparser.expression.operators.conditional.AndExpression(out, conjuncts.get(i));
    }
    return out;
  }

  /**
   * {@code x NOT IN (subquery)} with SQL's NULL rules: TRUE for every row when the subquery has no
   * rows; otherwise TRUE only where x is not NULL, no value of the subquery is NULL and none equals
   * x. Out of the operators every view has: the anti-join of {@code input} with the distinct values,
   * then, through a one-row summary of the subquery (its row count and its NULLs, joined on a
   * constant), the rows kept while it has rows, plus every row of that anti-join while it has none.
   */
  private static Plan notIn(Plan input, Plan values, int x) {
    io.cairn.engine.row.Type big = io.cairn.engine.row.Type.BIGINT;
    Plan outside = semiJoin(input, new Plan.Distinct(values), new int[] {x}, true);
    Schema flagged = Schema.of(new io.cairn.engine.row.Column("#one", big), new io.cairn.engine.row.Column("#null", big));
    Plan flags = new Plan.Map(values, List.of(Expr.lit(1L), new Expr.Case(List.of(new Expr.IsNull(Expr.col(0, values.schema().type(0)),
        false)), List.of(Expr.lit(1L)), Expr.lit(0L), big)), flagged);
    Plan summary = new Plan.Reduce(flags, new int[] {0},
        List.of(new io.cairn.engine.plan.Aggregate(io.cairn.engine.plan.Aggregate.Kind.SUM, 1, big)),
        Schema.of(new io.cairn.engine.row.Column("#one", big), new io.cairn.engine.row.Column("#nulls", big)));
    int n = input.schema().size();
    List<Expr> withOne = new ArrayList<>(columnsOf(input.schema()));
    withOne.add(Expr.lit(1L));
    List<io.cairn.engine.row.Column> cols = new ArrayList<>(input.schema().columns());
    cols.add(new io.cairn.engine.row.Column("#one", big));
    Plan keyed = new Plan.Map(outside, withOne, new Schema(cols));
    Plan joined = Plan.Join.of(keyed, summary, new int[] {n}, new int[] {0});
    Expr ok = new Expr.And(new Expr.IsNull(Expr.col(x, input.schema().type(x)), true),
        new Expr.Cmp(Expr.CmpOp.EQ, Expr.col(n + 2, big), Expr.lit(0L)));
    Plan whileRows = new Plan.Map(new Plan.Filter(joined, ok), columnsOf(input.schema()), input.schema());
    Plan ones = new Plan.Map(summary, List.of(Expr.col(0, big)), Schema.of(new io.cairn.engine.row.Column("#one", big)));
    Plan whileNone = new Plan.Map(semiJoin(keyed, ones, new int[] {n}, true), columnsOf(input.schema()), input.schema());
    return new Plan.Union(whileRows, whileNone);
  }

  /** The column {@code c} names in {@code scope}, or null when it names none there. */
  private static Integer resolves(Scope scope, net.sf.jsqlparser.schema.Column c) {
    try {
      return scope.resolve(c);
    } catch (SqlException notHere) {
      return null;
    }
  }

  /**
   * The rows of {@code input} whose {@code inputKeys} equal a row of {@code keys} (distinct, every
   * column a key), or with {@code anti} those whose do not; {@code input}'s columns and multiplicities.
   */
  private static Plan semiJoin(Plan input, Plan keys, int[] inputKeys, boolean anti) {
    int[] all = new int[inputKeys.length];
    for (int i = 0; i < all.length; i++) {
      all[i] = i;
    }
    Plan matched = new Plan.Map(Plan.Join.of(input, keys, inputKeys, all), columnsOf(input.schema()), input.schema());
    return anti ? new Plan.Union(input, new Plan.Negate(matched)) : matched;
  }

  /** Refuses the clauses cairn does not plan, before anything is planned. */
  private void refuseUnsupported(PlainSelect ps, boolean allowLimit) {
    if (ps.getWithItemsList() != null && !ps.getWithItemsList().isEmpty()) {
      throw errors.error(ps, "unsupported syntax: WITH");
    }
    // a query's result has an order (ResultWindow); a view is unordered, but keeps a window of an order
    // (top-k), and DISTINCT ON's ORDER BY picks the row each group keeps
    boolean window = ps.getLimit() != null || ps.getOffset() != null;
    boolean distinctOn = ps.getDistinct() != null && ps.getDistinct().getOnSelectItems() != null;
    if (ps.getOrderByElements() != null && !ps.getOrderByElements().isEmpty() && !allowLimit && !window && !distinctOn) {
      throw errors.error(ps.getOrderByElements().get(0), ORDER_WITHOUT_LIMIT);
    }
    if (ps.getFetch() != null) {
      throw errors.error(ps, "unsupported syntax: FETCH (write LIMIT n)");
    }
    if (ps.getIntoTables() != null || ps.getTop() != null || ps.getQualify() != null
        || (ps.getWindowDefinitions() != null && !ps.getWindowDefinitions().isEmpty())) {
      throw errors.error(ps, "unsupported syntax: INTO, TOP, QUALIFY or WINDOW");
    }
    if (ps.getFromItem() == null) {
      throw errors.error(ps, "unsupported syntax: SELECT without FROM");
    }
  }
}
