package io.cairn.engine.expr;

import java.util.BitSet;
import java.util.function.IntUnaryOperator;

/** Walks over an {@link Expr} tree: the input columns it reads, and the same expression over other column indexes. */
public final class Exprs {
  private Exprs() {}

  /** Sets in {@code out} the input columns {@code e} reads. */
  public static void columns(Expr e, BitSet out) {
    if (e instanceof Expr.Col c) {
      out.set(c.index());
    } else if (e instanceof Expr.Arith a) {
      columns(a.left(), out);
      columns(a.right(), out);
    } else if (e instanceof Expr.Cmp c) {
      columns(c.left(), out);
      columns(c.right(), out);
    } else if (e instanceof Expr.And a) {
      columns(a.left(), out);
      columns(a.right(), out);
    } else if (e instanceof Expr.Or o) {
      columns(o.left(), out);
      columns(o.right(), out);
    } else if (e instanceof Expr.Not n) {
      columns(n.input(), out);
    } else if (e instanceof Expr.IsNull n) {
      columns(n.input(), out);
    } else if (e instanceof Expr.Like l) {
      columns(l.input(), out);
    } else if (e instanceof Expr.TimestampShift t) {
      columns(t.input(), out);
    } else if (e instanceof Expr.Extract x) {
      columns(x.input(), out);
    } else if (e instanceof Expr.Func f) {
      f.args().forEach(x -> columns(x, out));
    } else if (e instanceof Expr.Case c) {
      c.conditions().forEach(x -> columns(x, out));
      c.results().forEach(x -> columns(x, out));
      columns(c.otherwise(), out);
    } else if (!(e instanceof Expr.Lit)) {
      throw new IllegalStateException("Cannot read the columns of " + e + ": an expression kind this walker does not know");
    }
  }

  /** {@code e} reading column {@code to.applyAsInt(i)} wherever it read column {@code i}. */
  public static Expr mapColumns(Expr e, IntUnaryOperator to) {
    return mapExprColumns(e, c -> new Expr.Col(to.applyAsInt(c.index()), c.type()));
  }

  /** {@code e} with each column reference {@code c} replaced by {@code to.apply(c)}, an expression of {@code c}'s type. */
  public static Expr mapExprColumns(Expr e, java.util.function.Function<Expr.Col, Expr> to) {
    if (e instanceof Expr.Col c) {
      return to.apply(c);
    } else if (e instanceof Expr.Arith a) {
      return new Expr.Arith(a.op(), mapExprColumns(a.left(), to), mapExprColumns(a.right(), to));
    } else if (e instanceof Expr.Cmp c) {
      return new Expr.Cmp(c.op(), mapExprColumns(c.left(), to), mapExprColumns(c.right(), to));
    } else if (e instanceof Expr.And a) {
      return new Expr.And(mapExprColumns(a.left(), to), mapExprColumns(a.right(), to));
    } else if (e instanceof Expr.Or o) {
      return new Expr.Or(mapExprColumns(o.left(), to), mapExprColumns(o.right(), to));
    } else if (e instanceof Expr.Not n) {
      return new Expr.Not(mapExprColumns(n.input(), to));
    } else if (e instanceof Expr.IsNull n) {
      return new Expr.IsNull(mapExprColumns(n.input(), to), n.negated());
    } else if (e instanceof Expr.Like l) {
      return Expr.Like.of(mapExprColumns(l.input(), to), l.pattern(), l.escape(), l.caseInsensitive(), l.negated());
    } else if (e instanceof Expr.TimestampShift t) {
      return new Expr.TimestampShift(mapExprColumns(t.input(), to), t.months(), t.micros());
    } else if (e instanceof Expr.Extract x) {
      return new Expr.Extract(x.field(), mapExprColumns(x.input(), to));
    } else if (e instanceof Expr.Func f) {
      return new Expr.Func(f.fn(), f.args().stream().map(x -> mapExprColumns(x, to)).toList());
    } else if (e instanceof Expr.Case c) {
      return new Expr.Case(c.conditions().stream().map(x -> mapExprColumns(x, to)).toList(),
          c.results().stream().map(x -> mapExprColumns(x, to)).toList(), mapExprColumns(c.otherwise(), to), c.type());
    } else if (e instanceof Expr.Lit) {
      return e;
    }
    throw new IllegalStateException("Cannot move the columns of " + e + ": an expression kind this walker does not know");
  }
}
