package io.cairn.engine.plan;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.expr.Exprs;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Moves each condition of a Filter as close to the rows it reads as the plan allows: the SQL
 * planner puts the whole WHERE above the joins, so every join arranged all the rows of its inputs,
 * those the WHERE then dropped included (TPC-H's {@code n_name = 'SAUDI ARABIA'} filtered the
 * last of four joins).
 *
 * <p>A Filter's conjuncts go down through operators that treat rows one by one and commute with a
 * filter: Filter (conditions merge), Map (the condition reads the Map's expressions instead of its
 * columns), Union, Negate and Distinct (both sides, or the input), and a Join — a conjunct that
 * reads only the left side's columns filters the left input, only the right side's the right
 * input (its columns moved), and one that reads both stays above the join. They stop at a Reduce
 * and a TopK (a filter of their input is not a filter of their output) and at a Get.
 *
 * <p>The result computes the same rows: each operator passed is linear (a row's updates come out
 * alone) or, for Distinct, keeps a row exactly when its count is positive, which a filter on the
 * row's own columns does not change.
 */
public final class FilterPushdown {
  private FilterPushdown() {}

  /** {@code plan} with its filters' conjuncts moved down as far as they go. */
  public static Plan push(Plan plan) {
    if (plan instanceof Plan.Filter f) {
      return into(push(f.input()), conjuncts(f.predicate()));
    } else if (plan instanceof Plan.Map m) {
      return new Plan.Map(push(m.input()), m.exprs(), m.schema());
    } else if (plan instanceof Plan.Union u) {
      return new Plan.Union(push(u.left()), push(u.right()));
    } else if (plan instanceof Plan.Negate n) {
      return new Plan.Negate(push(n.input()));
    } else if (plan instanceof Plan.Join j) {
      return new Plan.Join(push(j.left()), push(j.right()), j.leftKeys(), j.rightKeys(), j.schema());
    } else if (plan instanceof Plan.Reduce r) {
      return new Plan.Reduce(push(r.input()), r.groupBy(), r.aggregates(), r.schema());
    } else if (plan instanceof Plan.Distinct d) {
      return new Plan.Distinct(push(d.input()));
    } else if (plan instanceof Plan.TopK t) {
      return t.with(push(t.input()), t.limit());
    }
    return plan; // Get
  }

  /** {@code p} (already pushed) filtered by {@code conds}, each placed as low as it goes. */
  private static Plan into(Plan p, List<Expr> conds) {
    if (conds.isEmpty()) {
      return p;
    }
    if (p instanceof Plan.Filter f) {
      List<Expr> all = new ArrayList<>(conjuncts(f.predicate()));
      all.addAll(conds);
      return into(f.input(), all);
    } else if (p instanceof Plan.Map m) {
      List<Expr> below = new ArrayList<>();
      for (Expr c : conds) {
        below.add(inline(c, m.exprs()));
      }
      return new Plan.Map(into(m.input(), below), m.exprs(), m.schema());
    } else if (p instanceof Plan.Union u) {
      return new Plan.Union(into(u.left(), conds), into(u.right(), conds));
    } else if (p instanceof Plan.Negate n) {
      return new Plan.Negate(into(n.input(), conds));
    } else if (p instanceof Plan.Distinct d) {
      return new Plan.Distinct(into(d.input(), conds));
    } else if (p instanceof Plan.Join j) {
      int lw = j.left().schema().size();
      List<Expr> left = new ArrayList<>();
      List<Expr> right = new ArrayList<>();
      List<Expr> stay = new ArrayList<>();
      for (Expr c : conds) {
        BitSet cols = new BitSet();
        Exprs.columns(c, cols);
        if (!cols.isEmpty() && cols.previousSetBit(j.schema().size()) < lw) {
          left.add(c);
        } else if (!cols.isEmpty() && cols.nextSetBit(0) >= lw) {
          right.add(Exprs.mapColumns(c, i -> i - lw));
        } else {
          stay.add(c);
        }
      }
      Plan joined = new Plan.Join(into(j.left(), left), into(j.right(), right), j.leftKeys(), j.rightKeys(), j.schema());
      return stay.isEmpty() ? joined : new Plan.Filter(joined, and(stay));
    } else if (p instanceof Plan.TopK t && (t.groupBy().length > 0 || t.rowNumber() != null)) {
      return intoTopK(t, conds);
    }
    return new Plan.Filter(p, and(conds)); // Get, Reduce, TopK
  }

  /**
   * Filters over a top-k per group: a condition on the group columns alone keeps or drops whole
   * groups, so it goes below (the groups it keeps are the same top-k); a bound on the row number
   * ({@code rn <= k}, {@code rn < k}, {@code rn = 1}) lowers the limit, so the operator keeps and
   * emits only those rows (the condition stays above it, where it holds for every row). Others stay above.
   */
  private static Plan intoTopK(Plan.TopK t, List<Expr> conds) {
    java.util.Set<Integer> groupCols = new java.util.HashSet<>();
    for (int g : t.groupBy()) {
      groupCols.add(g);
    }
    int rn = t.rowNumber() == null ? -1 : t.input().schema().size();
    long limit = t.limit();
    List<Expr> below = new ArrayList<>();
    List<Expr> stay = new ArrayList<>();
    for (Expr c : conds) {
      BitSet cols = new BitSet();
      Exprs.columns(c, cols);
      if (!cols.isEmpty() && cols.stream().allMatch(groupCols::contains)) {
        below.add(c);
        continue;
      }
      if (rn >= 0) {
        limit = Math.min(limit, rowNumberBound(c, rn));
      }
      stay.add(c);
    }
    Plan topK = t.with(into(t.input(), below), limit);
    return stay.isEmpty() ? topK : new Plan.Filter(topK, and(stay));
  }

  /** The largest row number {@code c} lets through when it bounds column {@code rn} by a constant; else no bound. */
  private static long rowNumberBound(Expr c, int rn) {
    if (!(c instanceof Expr.Cmp cmp)) {
      return Long.MAX_VALUE;
    }
    Expr.CmpOp op = cmp.op();
    Expr col = cmp.left();
    Expr lit = cmp.right();
    if (!(col instanceof Expr.Col) && cmp.right() instanceof Expr.Col) { // k >= rn is rn <= k
      col = cmp.right();
      lit = cmp.left();
      op = switch (op) {
        case LT -> Expr.CmpOp.GT;
        case LE -> Expr.CmpOp.GE;
        case GT -> Expr.CmpOp.LT;
        case GE -> Expr.CmpOp.LE;
        default -> op;
      };
    }
    if (!(col instanceof Expr.Col x) || x.index() != rn || !(lit instanceof Expr.Lit l) || !(l.value() instanceof Long k)) {
      return Long.MAX_VALUE;
    }
    return switch (op) {
      case LE, EQ -> Math.max(0, k);
      case LT -> Math.max(0, k - 1);
      default -> Long.MAX_VALUE;
    };
  }

  /** {@code c} reading {@code exprs[i]} wherever it read column {@code i}. */
  private static Expr inline(Expr c, List<Expr> exprs) {
    return Exprs.mapExprColumns(c, col -> exprs.get(col.index()));
  }

  private static List<Expr> conjuncts(Expr e) {
    List<Expr> out = new ArrayList<>();
    if (e instanceof Expr.And a) {
      out.addAll(conjuncts(a.left()));
      out.addAll(conjuncts(a.right()));
    } else {
      out.add(e);
    }
    return out;
  }

  private static Expr and(List<Expr> conds) {
    Expr out = conds.get(0);
    for (int i = 1; i < conds.size(); i++) {
      out = new Expr.And(out, conds.get(i));
    }
    return out;
  }
}
