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
  record Planned(Plan plan, int[] keyCols, PlainSelect select) {}

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
      return planParsed(new SelectParser(errors, budget).parse(), allowLimit);
    } catch (StackOverflowError e) {
      // ExpressionDepth bounds every tree the planner walks; should a walk still run out of stack
      throw new SqlException(errors.what() + ": it is nested too deeply");
    }
  }

  private Planned planParsed(PlainSelect ps, boolean allowLimit) {
    refuseUnsupported(ps, allowLimit);
    List<Relation> rels = new ArrayList<>();
    Plan input = new FromClause(errors, catalog).plan(ps, rels);
    Scope rowScope = new Scope(errors, rels, input.schema());
    if (ps.getWhere() != null) {
      Expr w = new ExpressionTranslator(errors, rowScope, null).condition(ps.getWhere(), "WHERE");
      input = new Plan.Filter(input, w);
    }
    boolean aggregate = ps.getGroupBy() != null || ps.getHaving() != null || AggregateCalls.hasAggregate(ps);
    Plan out;
    int[] keyCols = null;
    if (!aggregate) {
      out = SelectList.plan(errors, rowScope, ps.getSelectItems(), input);
    } else {
      AggregatePlan ap = new AggregatePlan(errors, rowScope, ps);
      out = ap.plan(input);
      keyCols = ap.keyCols();
    }
    if (ps.getDistinct() != null) {
      out = new Plan.Distinct(out);
      keyCols = null;
    }
    return new Planned(out, keyCols, ps);
  }

  /** Refuses the clauses cairn does not plan, before anything is planned. */
  private void refuseUnsupported(PlainSelect ps, boolean allowLimit) {
    if (ps.getWithItemsList() != null && !ps.getWithItemsList().isEmpty()) {
      throw errors.error(ps, "unsupported syntax: WITH");
    }
    if (ps.getDistinct() != null && ps.getDistinct().getOnSelectItems() != null) {
      throw errors.error(ps.getDistinct(), "unsupported syntax: DISTINCT ON");
    }
    // a query's result has an order (ResultWindow); a view is unordered
    if (ps.getOrderByElements() != null && !ps.getOrderByElements().isEmpty() && !allowLimit) {
      throw errors.error(ps.getOrderByElements().get(0), "unsupported syntax: ORDER BY in a view (views are unordered; order the query that reads it)");
    }
    if (ps.getLimit() != null && !allowLimit) {
      throw errors.error(ps.getLimit(), "unsupported syntax: LIMIT in a view");
    }
    if (ps.getOffset() != null && !allowLimit) {
      throw errors.error(ps, "unsupported syntax: OFFSET in a view");
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
