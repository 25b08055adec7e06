package io.cairn.engine.plan;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.expr.Exprs;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.function.Function;

/**
 * Drops the columns no operator above needs before the operators that keep rows: a plan as the
 * SQL planner builds it carries every column of every table through every join, so a join of five
 * tables arranged its inputs with all their columns (TPC-H Q8's view held 1.5 KB per row, most of
 * it comments and addresses it never reads).
 *
 * <p>The rewrite works top-down with the set of columns each node's parent needs, and returns the
 * node's new plan with where each old column went ({@code -1}: dropped):
 *
 * <ul>
 *   <li>Map keeps the expressions needed; Filter needs its predicate's columns too; Negate passes
 *       through; Reduce needs its group and aggregate columns (its output is kept whole);
 *       Distinct and TopK need every column (they compare whole rows).
 *   <li>A Join needs its keys; each side is cut to the columns needed by a Map, unless it is a
 *       Get whose collection is arranged by exactly the join key — then the join reads that
 *       arrangement and keeps no copy, which is better than any cut.
 *   <li>A Union's two sides are cut to the same columns in the same order.
 * </ul>
 *
 * The root keeps all its columns in their order (the view's schema and key do not change). The
 * result is a function of the plan and the collections' keys, so a view planned again at recovery
 * gets the same operators and arrangements as before.
 */
public final class ColumnPruning {
  private final Function<String, int[]> arrangedBy;

  /** @param arrangedBy the key columns a source's or view's collection is arranged by, by name */
  private ColumnPruning(Function<String, int[]> arrangedBy) {
    this.arrangedBy = arrangedBy;
  }

  /** {@code plan} with the columns nobody reads dropped before its joins; same output. */
  public static Plan prune(Plan plan, Function<String, int[]> arrangedBy) {
    BitSet all = new BitSet();
    all.set(0, plan.schema().size());
    Cut c = new ColumnPruning(arrangedBy).cut(plan, all);
    return exactly(c, all, plan.schema()).plan();
  }

  /** A rewritten plan and, per old output column, its new index (-1: dropped). */
  private record Cut(Plan plan, int[] map) {
    static Cut same(Plan p) {
      int[] m = new int[p.schema().size()];
      for (int i = 0; i < m.length; i++) {
        m[i] = i;
      }
      return new Cut(p, m);
    }
  }

  private Cut cut(Plan p, BitSet needed) {
    if (p instanceof Plan.Get) {
      return Cut.same(p);
    } else if (p instanceof Plan.Map m) {
      BitSet in = new BitSet();
      List<Integer> kept = new ArrayList<>();
      for (int i = 0; i < m.exprs().size(); i++) {
        if (needed.get(i)) {
          kept.add(i);
          Exprs.columns(m.exprs().get(i), in);
        }
      }
      Cut input = cut(m.input(), in);
      List<Expr> exprs = new ArrayList<>();
      List<Column> cols = new ArrayList<>();
      int[] map = new int[m.exprs().size()];
      Arrays.fill(map, -1);
      for (int i : kept) {
        map[i] = exprs.size();
        exprs.add(Exprs.mapColumns(m.exprs().get(i), c -> input.map()[c]));
        cols.add(m.schema().column(i));
      }
      return new Cut(new Plan.Map(input.plan(), exprs, new Schema(cols)), map);
    } else if (p instanceof Plan.Filter f) {
      BitSet in = (BitSet) needed.clone();
      Exprs.columns(f.predicate(), in);
      Cut input = cut(f.input(), in);
      return new Cut(new Plan.Filter(input.plan(), Exprs.mapColumns(f.predicate(), c -> input.map()[c])), input.map());
    } else if (p instanceof Plan.Negate n) {
      Cut input = cut(n.input(), needed);
      return new Cut(new Plan.Negate(input.plan()), input.map());
    } else if (p instanceof Plan.Union u) {
      Cut l = exactly(cut(u.left(), needed), needed, u.left().schema());
      Cut r = exactly(cut(u.right(), needed), needed, u.right().schema());
      return new Cut(new Plan.Union(l.plan(), r.plan()), l.map());
    } else if (p instanceof Plan.Join j) {
      int lw = j.left().schema().size();
      BitSet ln = new BitSet();
      BitSet rn = new BitSet();
      needed.stream().forEach(i -> (i < lw ? ln : rn).set(i < lw ? i : i - lw));
      Arrays.stream(j.leftKeys()).forEach(ln::set);
      Arrays.stream(j.rightKeys()).forEach(rn::set);
      Cut l = side(j.left(), ln, j.leftKeys());
      Cut r = side(j.right(), rn, j.rightKeys());
      int[] lk = Arrays.stream(j.leftKeys()).map(k -> l.map()[k]).toArray();
      int[] rk = Arrays.stream(j.rightKeys()).map(k -> r.map()[k]).toArray();
      int newLw = l.plan().schema().size();
      int[] map = new int[j.schema().size()];
      List<Column> cols = new ArrayList<>();
      for (int i = 0; i < map.length; i++) {
        map[i] = i < lw ? l.map()[i] : (r.map()[i - lw] < 0 ? -1 : newLw + r.map()[i - lw]);
      }
      // the joined columns keep the names they had in the join's schema
      Column[] named = new Column[newLw + r.plan().schema().size()];
      for (int i = 0; i < map.length; i++) {
        if (map[i] >= 0) {
          named[map[i]] = j.schema().column(i);
        }
      }
      cols.addAll(Arrays.asList(named));
      return new Cut(new Plan.Join(l.plan(), r.plan(), lk, rk, new Schema(cols)), map);
    } else if (p instanceof Plan.Reduce r) {
      BitSet in = new BitSet();
      Arrays.stream(r.groupBy()).forEach(in::set);
      r.aggregates().forEach(a -> {
        if (a.column() >= 0) {
          in.set(a.column());
        }
      });
      Cut input = cut(r.input(), in);
      int[] groupBy = Arrays.stream(r.groupBy()).map(g -> input.map()[g]).toArray();
      List<Aggregate> aggs = r.aggregates().stream()
          .map(a -> a.column() < 0 ? a : new Aggregate(a.kind(), input.map()[a.column()], a.inputType())).toList();
      return Cut.same(new Plan.Reduce(input.plan(), groupBy, aggs, r.schema()));
    } else if (p instanceof Plan.Distinct d) {
      BitSet all = new BitSet();
      all.set(0, d.schema().size());
      return Cut.same(new Plan.Distinct(exactly(cut(d.input(), all), all, d.input().schema()).plan()));
    } else if (p instanceof Plan.TopK t) {
      BitSet all = new BitSet();
      all.set(0, t.input().schema().size());
      Plan in = exactly(cut(t.input(), all), all, t.input().schema()).plan();
      return Cut.same(t.with(in, t.limit()));
    }
    throw new IllegalStateException("Cannot prune the columns of " + p + ": a plan kind this rewrite does not know");
  }

  /**
   * One side of a join, cut to {@code needed}: a Get arranged by exactly {@code keys} stays whole
   * (the join shares its arrangement); anything else holding more columns than needed gets a Map.
   */
  private Cut side(Plan p, BitSet needed, int[] keys) {
    if (p instanceof Plan.Get g) {
      int[] by = arrangedBy.apply(g.name());
      if (by != null && Arrays.equals(by, keys)) {
        return Cut.same(p);
      }
    }
    Cut c = cut(p, needed);
    return c.plan().schema().size() > needed.cardinality() ? exactly(c, needed, p.schema()) : c;
  }

  /** {@code c} with exactly the columns of {@code keep} (old indexes of {@code old}), in their old order: a Map when it has others. */
  private static Cut exactly(Cut c, BitSet keep, Schema old) {
    int[] map = new int[old.size()];
    Arrays.fill(map, -1);
    List<Expr> exprs = new ArrayList<>();
    List<Column> cols = new ArrayList<>();
    boolean identity = c.plan().schema().size() == keep.cardinality();
    for (int i = keep.nextSetBit(0); i >= 0; i = keep.nextSetBit(i + 1)) {
      int at = c.map()[i];
      if (at < 0) {
        throw new IllegalStateException("Cannot keep column " + i + " of " + old + ": it was dropped below");
      }
      identity &= at == exprs.size();
      map[i] = exprs.size();
      exprs.add(Expr.col(at, c.plan().schema().type(at)));
      cols.add(old.column(i));
    }
    if (identity) {
      return new Cut(c.plan(), map);
    }
    return new Cut(new Plan.Map(c.plan(), exprs, new Schema(cols)), map);
  }
}
