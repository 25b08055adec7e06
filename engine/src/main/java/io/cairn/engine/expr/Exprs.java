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

  /**
   * The scale (digits after the point) PostgreSQL shows a NUMERIC expression's values with, over
   * rows of {@code input}: a column's declared scale; a literal's digits; the larger of two
   * operands' for {@code +}, {@code -} and {@code %}, their sum for {@code *} (a BIGINT operand has
   * scale 0); the CASE's and COALESCE's results' when those that are not literals agree; ABS's argument's. {@link
   * io.cairn.engine.row.Column#NONE} for anything else (a division, whose scale PostgreSQL chooses
   * per value) and for an expression that is not a NUMERIC.
   */
  public static int scale(Expr e, io.cairn.engine.row.Schema input) {
    return e.type() == io.cairn.engine.row.Type.NUMERIC ? operandScale(e, input) : io.cairn.engine.row.Column.NONE;
  }

  private static int operandScale(Expr e, io.cairn.engine.row.Schema input) {
    final int none = io.cairn.engine.row.Column.NONE;
    switch (e.type()) {
      case BIGINT, NULL:
        return 0;
      case NUMERIC:
        break;
      default:
        return none;
    }
    if (e instanceof Expr.Col c) {
      return c.index() < input.size() ? input.column(c.index()).scale() : none;
    }
    if (e instanceof Expr.Lit l) {
      return l.value() instanceof java.math.BigDecimal d ? Math.max(0, d.scale()) : 0;
    }
    if (e instanceof Expr.Arith a) {
      int l = operandScale(a.left(), input);
      int r = operandScale(a.right(), input);
      if (l == none || r == none) {
        return none;
      }
      return switch (a.op()) {
        case ADD, SUB, MOD -> Math.max(l, r);
        case MUL -> Math.min(l + r, io.cairn.engine.row.Numeric.MAX_SCALE);
        case DIV -> none;
      };
    }
    if (e instanceof Expr.Func f && f.fn() == Expr.Func.Fn.ABS) {
      return operandScale(f.args().get(0), input);
    }
    java.util.List<Expr> branches = new java.util.ArrayList<>();
    if (e instanceof Expr.Case c) {
      branches.addAll(c.results());
      branches.add(c.otherwise());
    } else if (e instanceof Expr.Func f && f.fn() == Expr.Func.Fn.COALESCE) {
      branches.addAll(f.args());
    } else {
      return none;
    }
    // PostgreSQL shows each value with its own branch's scale: one scale only when the branches
    // that read columns agree. A literal branch (COALESCE(price, 0.00)) takes theirs: a literal's
    // written zeros are not kept (0.00 is 0), and the column's rows are the many.
    // Literals alone: each value as written (canonical), as PostgreSQL shows 10 and 2.5.
    int s = none;
    for (Expr b : branches) {
      if (b instanceof Expr.Lit) {
        continue;
      }
      int x = operandScale(b, input);
      if (x == none || (s != none && x != s)) {
        return none;
      }
      s = x;
    }
    return s;
  }
}
