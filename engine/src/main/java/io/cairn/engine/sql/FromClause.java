package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.select.FromItem;
import net.sf.jsqlparser.statement.select.Join;
import net.sf.jsqlparser.statement.select.PlainSelect;

/**
 * Plans a SELECT's FROM clause: {@code Get} of the first source or view, then per {@code JOIN}
 * a {@code Join} on its equalities followed by a {@code Filter} per other ON condition.
 *
 * <p>Rules:
 *
 * <ul>
 *   <li>FROM items are sources or views of the catalog, named without a schema, or subqueries
 *       {@code (SELECT ...) AS alias [(column, ...)]} (a derived table: planned inline, like a
 *       view that is not arranged of its own; the alias is required, as in PostgreSQL, and the
 *       column list renames the first columns). An alias (or else the name) may appear only
 *       once. LATERAL and functions are refused.
 *   <li>{@code [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN ... ON}; CROSS/NATURAL, the comma join,
 *       USING and a JOIN without ON are refused. An outer join is planned out of the inner join
 *       and an anti-join (see {@link #outer}).
 *   <li>The ON condition is split into its AND-ed conjuncts. Each {@code a = b} between a column
 *       of the tables joined so far and a column of the new table becomes a join key (the two
 *       must have the same type); at least one is required. Every other conjunct is a filter
 *       after the join, a BOOLEAN condition over the joined row.
 *   <li>The joined row is the left row's columns then the new table's; a new column whose name
 *       is taken already is renamed {@code name_2}, {@code name_3}, ... in the joined schema (a
 *       qualified name still resolves through the table's own schema, see {@link Scope}).
 * </ul>
 *
 * <p>{@link #plan} appends a {@link Relation} per table, in FROM order, to the list it is given;
 * every failure is a {@link SqlException} at the offending node's position.
 */
final class FromClause {
  private final PlanErrors errors;
  private final Function<String, Schema> catalog;
  private final Function<net.sf.jsqlparser.statement.select.Select, Plan> subquery;

  /**
   * @param errors where failures are reported
   * @param catalog schema of a source or view by name, or null when there is none
   * @param subquery the plan of a subquery in FROM (its output names are its columns' names)
   */
  FromClause(PlanErrors errors, Function<String, Schema> catalog, Function<net.sf.jsqlparser.statement.select.Select, Plan> subquery) {
    this.errors = errors;
    this.catalog = catalog;
    this.subquery = subquery;
  }

  /** The plan of {@code ps}'s FROM clause (FROM item and joins), adding its tables to {@code rels}. */
  Plan plan(PlainSelect ps, List<Relation> rels) {
    Plan plan = table(ps.getFromItem(), rels, 0);
    if (ps.getJoins() != null) {
      for (Join j : ps.getJoins()) {
        Kind kind = j.isFull() ? Kind.FULL : j.isLeft() ? Kind.LEFT : j.isRight() ? Kind.RIGHT : Kind.INNER;
        boolean other = j.isCross() || j.isNatural() || j.isSimple() || j.isSemi() || j.isApply() || j.isStraight()
            || (j.isOuter() && kind == Kind.INNER);
        if (other) {
          throw errors.error(j.getRightItem(), "unsupported syntax: only [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN ... ON is supported, not '"
              + j.toString().trim() + "'");
        }
        if (j.getUsingColumns() != null && !j.getUsingColumns().isEmpty()) {
          throw errors.error(j.getRightItem(), "unsupported syntax: JOIN ... USING (write JOIN ... ON a.x = b.x)");
        }
        if (j.getOnExpressions() == null || j.getOnExpressions().isEmpty()) {
          throw errors.error(j.getRightItem(), "unsupported syntax: JOIN without ON");
        }
        List<Relation> left = new ArrayList<>(rels);
        Plan right = table(j.getRightItem(), rels, plan.schema().size());
        Relation rightRel = rels.get(rels.size() - 1);
        Schema joined = plan.schema().concat(renamed(plan.schema(), right.schema()));
        Scope scope = new Scope(errors, rels, joined);
        List<Integer> lk = new ArrayList<>();
        List<Integer> rk = new ArrayList<>();
        List<Expression> residual = new ArrayList<>();
        for (Expression on : j.getOnExpressions()) {
          for (Expression c : conjuncts(on)) {
            if (c instanceof EqualsTo eq
                && eq.getLeftExpression() instanceof net.sf.jsqlparser.schema.Column a
                && eq.getRightExpression() instanceof net.sf.jsqlparser.schema.Column b) {
              int ia = scope.resolve(a);
              int ib = scope.resolve(b);
              int leftCols = plan.schema().size();
              int l = -1;
              int r = -1;
              if (ia < leftCols && ib >= leftCols) {
                l = ia;
                r = ib - leftCols;
              } else if (ib < leftCols && ia >= leftCols) {
                l = ib;
                r = ia - leftCols;
              }
              if (l >= 0) {
                Type lt = plan.schema().type(l);
                Type rt = right.schema().type(r);
                if (lt != rt) {
                  throw errors.error(eq, "type mismatch: cannot join " + a + " (" + joined.type(ia) + ") with " + b + " ("
                      + joined.type(ib) + ")");
                }
                lk.add(l);
                rk.add(r);
                continue;
              }
            }
            residual.add(c);
          }
        }
        if (lk.isEmpty()) {
          throw errors.error(j.getOnExpressions().iterator().next(),
              "unsupported syntax: JOIN ... ON needs an equality between a column of '" + rightRel.alias() + "' and a column of "
                  + left.stream().map(Relation::alias).toList());
        }
        int[] lka = lk.stream().mapToInt(i -> i).toArray();
        int[] rka = rk.stream().mapToInt(i -> i).toArray();
        if (kind == Kind.INNER) {
          plan = Plan.Join.of(plan, right, lka, rka);
          for (Expression c : residual) {
            Expr e = new ExpressionTranslator(errors, new Scope(errors, rels, plan.schema()), null).condition(c, "ON");
            plan = new Plan.Filter(plan, e);
          }
        } else {
          plan = outer(kind, plan, right, lka, rka, residual, rels, rightRel);
        }
      }
    }
    return plan;
  }

  /** The kinds of JOIN planned. */
  private enum Kind { INNER, LEFT, RIGHT, FULL }

  /**
   * An outer join, out of the operators every view has (so its state is in the snapshot and
   * restored like theirs): the inner join, plus for a LEFT (RIGHT, FULL) join the rows of the
   * left (right, both) side whose key matches no row of the other side, padded with NULLs. Those
   * are the side minus its rows that do match, found by joining the side with the distinct keys of
   * the other: {@code side − π(side ⋈ δ(keys(other)))}. A NULL key matches nothing, so its row
   * is always padded. A condition of the ON clause that is not an equality between the two sides
   * must concern the side that is not preserved (the right side of a LEFT join, the left side of
   * a RIGHT join): it filters that side before the join, which is what it means there.
   */
  private Plan outer(Kind kind, Plan left, Plan right, int[] lk, int[] rk, List<Expression> residual, List<Relation> rels,
      Relation rightRel) {
    int leftCols = left.schema().size();
    Schema joined = Plan.Join.of(left, right, lk, rk).schema();
    Scope scope = new Scope(errors, rels, joined);
    for (Expression c : residual) {
      Expr e = new ExpressionTranslator(errors, scope, null).condition(c, "ON");
      java.util.BitSet cols = new java.util.BitSet();
      io.cairn.engine.expr.Exprs.columns(e, cols);
      boolean onlyRight = cols.isEmpty() || cols.nextSetBit(0) >= leftCols;
      boolean onlyLeft = cols.isEmpty() || cols.previousSetBit(joined.size() - 1) < leftCols;
      if (kind == Kind.LEFT && onlyRight) {
        right = new Plan.Filter(right, io.cairn.engine.expr.Exprs.mapColumns(e, i -> i - leftCols));
      } else if (kind == Kind.RIGHT && onlyLeft) {
        left = new Plan.Filter(left, e);
      } else {
        throw errors.error(c, "unsupported syntax: in the ON of a " + kind + " JOIN, a condition other than an equality between "
            + "the two sides must concern only " + (kind == Kind.LEFT ? "'" + rightRel.alias() + "'" : kind == Kind.RIGHT
                ? "the tables left of '" + rightRel.alias() + "'" : "one side, and a FULL JOIN takes none"));
      }
    }
    Plan out = Plan.Join.of(left, right, lk, rk);
    if (kind == Kind.LEFT || kind == Kind.FULL) {
      out = new Plan.Union(out, unmatched(left, right, lk, rk, joined, true));
    }
    if (kind == Kind.RIGHT || kind == Kind.FULL) {
      out = new Plan.Union(out, unmatched(right, left, rk, lk, joined, false));
    }
    return out;
  }

  /** The rows of {@code side} whose key matches no row of {@code other}, padded with NULLs into {@code joined}'s columns. */
  private static Plan unmatched(Plan side, Plan other, int[] sideKeys, int[] otherKeys, Schema joined, boolean sideIsLeft) {
    List<Expr> keyExprs = new ArrayList<>();
    List<Column> keyCols = new ArrayList<>();
    int[] all = new int[otherKeys.length];
    for (int i = 0; i < otherKeys.length; i++) {
      keyExprs.add(Expr.col(otherKeys[i], other.schema().type(otherKeys[i])));
      keyCols.add(new Column("k" + i, other.schema().type(otherKeys[i])));
      all[i] = i;
    }
    Plan keys = new Plan.Distinct(new Plan.Map(other, keyExprs, new Schema(keyCols)));
    List<Expr> sideCols = new ArrayList<>();
    for (int i = 0; i < side.schema().size(); i++) {
      sideCols.add(Expr.col(i, side.schema().type(i)));
    }
    Plan matched = new Plan.Map(Plan.Join.of(side, keys, sideKeys, all), sideCols, side.schema());
    Plan rest = new Plan.Union(side, new Plan.Negate(matched));
    List<Expr> padded = new ArrayList<>();
    int sideFrom = sideIsLeft ? 0 : joined.size() - side.schema().size();
    for (int i = 0; i < joined.size(); i++) {
      int s = i - sideFrom;
      padded.add(s >= 0 && s < side.schema().size() ? Expr.col(s, joined.type(i)) : new Expr.Lit(null, joined.type(i)));
    }
    return new Plan.Map(rest, padded, joined);
  }

  /** {@code right}'s columns, each whose name is in {@code left} (or earlier in {@code right}) renamed {@code name_k}. */
  private static Schema renamed(Schema left, Schema right) {
    Set<String> names = new HashSet<>();
    left.columns().forEach(c -> names.add(c.name()));
    List<Column> cols = new ArrayList<>();
    for (Column c : right.columns()) {
      String n = c.name();
      int k = 2;
      while (!names.add(n)) {
        n = c.name() + "_" + k++;
      }
      cols.add(c.renamed(n));
    }
    return new Schema(cols);
  }

  /** The {@code Get} of one FROM item, whose columns start at {@code offset} of the joined row; adds its {@link Relation}. */
  private Plan table(FromItem item, List<Relation> rels, int offset) {
    if (item instanceof net.sf.jsqlparser.statement.select.ParenthesedSelect sub
        && !(item instanceof net.sf.jsqlparser.statement.select.LateralSubSelect)) {
      return derived(sub, rels, offset);
    }
    if (!(item instanceof Table t)) {
      throw errors.error(item, "unsupported syntax: LATERAL or a function in FROM (name a source or view, or a subquery)");
    }
    if (t.getSchemaName() != null) {
      throw errors.error(t, "unknown table '" + t.getFullyQualifiedName() + "' (cairn has no schemas)");
    }
    String name = Scope.unquote(t.getName());
    Schema schema = catalog.apply(name);
    if (schema == null) {
      throw errors.error(t, "unknown table '" + name + "'");
    }
    String alias = t.getAlias() != null ? Scope.unquote(t.getAlias().getName()) : name;
    claim(alias, t, rels);
    rels.add(new Relation(alias, name, schema, offset));
    return new Plan.Get(name, schema);
  }

  /** A subquery in FROM: its plan, its columns renamed by the alias's column list, as table {@code alias}. */
  private Plan derived(net.sf.jsqlparser.statement.select.ParenthesedSelect sub, List<Relation> rels, int offset) {
    if (sub.getAlias() == null) {
      throw errors.error(sub, "a subquery in FROM must have an alias: write (SELECT ...) AS name");
    }
    String alias = Scope.unquote(sub.getAlias().getName());
    claim(alias, sub, rels);
    Plan plan = subquery.apply(sub.getSelect());
    List<net.sf.jsqlparser.expression.Alias.AliasColumn> names = sub.getAlias().getAliasColumns();
    if (names != null && !names.isEmpty()) {
      if (names.size() > plan.schema().size()) {
        throw errors.error(sub, "table '" + alias + "' has " + plan.schema().size() + " columns available but " + names.size()
            + " columns specified");
      }
      List<Column> cols = new ArrayList<>();
      List<Expr> same = new ArrayList<>();
      Set<String> seen = new HashSet<>();
      for (int i = 0; i < plan.schema().size(); i++) {
        String n = i < names.size() ? Scope.unquote(names.get(i).name) : plan.schema().column(i).name();
        if (i < names.size() && !seen.add(n)) {
          throw errors.error(sub, "column name '" + n + "' is given twice in the column list of '" + alias + "'");
        }
        cols.add(plan.schema().column(i).renamed(n));
        same.add(Expr.col(i, plan.schema().type(i)));
      }
      plan = new Plan.Map(plan, same, new Schema(cols));
    }
    rels.add(new Relation(alias, "(subquery " + alias + ")", plan.schema(), offset));
    return plan;
  }

  /** Refuses a second table named {@code alias} in one FROM clause. */
  private void claim(String alias, Object at, List<Relation> rels) {
    for (Relation r : rels) {
      if (r.alias().equals(alias)) {
        throw errors.error(at, "table name '" + alias + "' is used twice in FROM (give one an alias)");
      }
    }
  }

  /** The AND-ed conjuncts of {@code e}, looking through single parentheses. */
  static List<Expression> conjuncts(Expression e) {
    List<Expression> out = new ArrayList<>();
    if (e instanceof AndExpression a) {
      out.addAll(conjuncts(a.getLeftExpression()));
      out.addAll(conjuncts(a.getRightExpression()));
    } else if (e instanceof ParenthesedExpressionList<?> p && p.size() == 1) {
      out.addAll(conjuncts(p.get(0)));
    } else {
      out.add(e);
    }
    return out;
  }
}
