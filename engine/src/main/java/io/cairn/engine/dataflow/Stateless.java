package io.cairn.engine.dataflow;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.List;

/** Operators that keep no state: map, filter, union, negate. */
final class Stateless {
  private Stateless() {}

  static final class MapOp extends Operator {
    private final Expr[] exprs;

    MapOp(Operator input, List<Expr> exprs, Schema schema, int shards) {
      super(schema, List.of(input), shards);
      this.exprs = exprs.toArray(new Expr[0]);
    }

    /** The input's partitioning when every one of its columns is passed on as is (a column reference). */
    @Override
    public int[] partitioning() {
      int[] in = inputs().get(0).partitioning();
      if (in == null) {
        return null;
      }
      int[] out = new int[in.length];
      for (int k = 0; k < in.length; k++) {
        out[k] = -1;
        for (int e = 0; e < exprs.length && out[k] < 0; e++) {
          if (exprs[e] instanceof Expr.Col c && c.index() == in[k]) {
            out[k] = e;
          }
        }
        if (out[k] < 0) {
          return null;
        }
      }
      return out;
    }

    @Override
    public void process(int shard, long tick, Rows[] in) {
      Rows src = in[0];
      Rows dst = out(shard);
      for (int i = 0; i < src.size(); i++) {
        Row r = src.row(i);
        Object[] v = new Object[exprs.length];
        for (int e = 0; e < exprs.length; e++) {
          v[e] = exprs[e].eval(r);
        }
        dst.add(Row.wrap(v), src.diff(i));
      }
    }

    @Override
    public String describe() {
      return "Map " + List.of(exprs);
    }
  }

  static final class FilterOp extends Operator {
    private final Expr predicate;

    FilterOp(Operator input, Expr predicate, int shards) {
      super(input.schema(), List.of(input), shards);
      this.predicate = predicate;
    }

    @Override
    public int[] partitioning() {
      return inputs().get(0).partitioning();
    }

    @Override
    public void process(int shard, long tick, Rows[] in) {
      Rows src = in[0];
      Rows dst = out(shard);
      for (int i = 0; i < src.size(); i++) {
        if (Boolean.TRUE.equals(predicate.eval(src.row(i)))) {
          dst.add(src.row(i), src.diff(i));
        }
      }
    }

    @Override
    public String describe() {
      return "Filter " + predicate;
    }
  }

  static final class UnionOp extends Operator {
    UnionOp(Operator left, Operator right, int shards) {
      super(left.schema(), List.of(left, right), shards);
    }

    /** Both inputs' partitioning when it is the same, else none. */
    @Override
    public int[] partitioning() {
      int[] l = inputs().get(0).partitioning();
      return l != null && java.util.Arrays.equals(l, inputs().get(1).partitioning()) ? l : null;
    }

    @Override
    public void process(int shard, long tick, Rows[] in) {
      out(shard).addAll(in[0]);
      out(shard).addAll(in[1]);
    }

    @Override
    public String describe() {
      return "Union";
    }
  }

  static final class NegateOp extends Operator {
    NegateOp(Operator input, int shards) {
      super(input.schema(), List.of(input), shards);
    }

    @Override
    public int[] partitioning() {
      return inputs().get(0).partitioning();
    }

    @Override
    public void process(int shard, long tick, Rows[] in) {
      Rows src = in[0];
      for (int i = 0; i < src.size(); i++) {
        out(shard).add(src.row(i), -src.diff(i));
      }
    }

    @Override
    public String describe() {
      return "Negate";
    }
  }
}
