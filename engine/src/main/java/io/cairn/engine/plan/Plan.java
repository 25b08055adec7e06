package io.cairn.engine.plan;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A dataflow plan: the operator tree one view definition compiles to. Built by the SQL planner
 * (or by hand in tests), instantiated by the engine on every worker.
 */
public sealed interface Plan {
  /** The schema of the rows this plan produces. */
  Schema schema();

  /** Child plans. */
  List<Plan> inputs();

  /** Reads the collection of a source or view by name. */
  record Get(String name, Schema schema) implements Plan {
    public Get {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(schema, "schema");
    }

    @Override
    public List<Plan> inputs() {
      return List.of();
    }
  }

  /** Evaluates {@code exprs} for every row; {@code schema} names the outputs. */
  record Map(Plan input, List<Expr> exprs, Schema schema) implements Plan {
    public Map {
      exprs = List.copyOf(exprs);
      if (exprs.size() != schema.size()) {
        throw new IllegalArgumentException("Cannot plan projection: " + exprs.size() + " expressions for " + schema.size() + " columns");
      }
      for (int i = 0; i < exprs.size(); i++) {
        Type t = exprs.get(i).type();
        if (t != schema.type(i) && t != Type.NULL) {
          throw new IllegalArgumentException(
              "Cannot plan projection: column '" + schema.column(i).name() + "' is " + schema.type(i) + " but its expression is " + t);
        }
      }
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }
  }

  /** Keeps rows for which {@code predicate} is TRUE. */
  record Filter(Plan input, Expr predicate) implements Plan {
    public Filter {
      if (predicate.type() != Type.BOOLEAN && predicate.type() != Type.NULL) {
        throw new IllegalArgumentException("Cannot filter on " + predicate + ": it is " + predicate.type() + ", not BOOLEAN");
      }
    }

    @Override
    public Schema schema() {
      return input.schema();
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }
  }

  /** The multiset sum of two collections with equal column types. */
  record Union(Plan left, Plan right) implements Plan {
    public Union {
      if (left.schema().size() != right.schema().size()) {
        throw new IllegalArgumentException("Cannot union " + left.schema().size() + " columns with " + right.schema().size());
      }
      for (int i = 0; i < left.schema().size(); i++) {
        if (left.schema().type(i) != right.schema().type(i)) {
          throw new IllegalArgumentException("Cannot union column " + i + ": " + left.schema().type(i) + " vs " + right.schema().type(i));
        }
      }
    }

    @Override
    public Schema schema() {
      return left.schema();
    }

    @Override
    public List<Plan> inputs() {
      return List.of(left, right);
    }
  }

  /** Negates every diff. */
  record Negate(Plan input) implements Plan {
    @Override
    public Schema schema() {
      return input.schema();
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }
  }

  /**
   * Inner equi-join: rows with equal, non-NULL {@code leftKeys} / {@code rightKeys} columns pair
   * up; the output is the left row followed by the right row, named by {@code schema}.
   */
  record Join(Plan left, Plan right, int[] leftKeys, int[] rightKeys, Schema schema) implements Plan {
    public Join {
      leftKeys = leftKeys.clone();
      rightKeys = rightKeys.clone();
      if (leftKeys.length != rightKeys.length || leftKeys.length == 0) {
        throw new IllegalArgumentException("Cannot plan join: it needs the same, non-zero number of key columns on each side");
      }
      if (schema.size() != left.schema().size() + right.schema().size()) {
        throw new IllegalArgumentException("Cannot plan join: output schema must have the columns of both sides");
      }
    }

    /** A join whose output columns are named {@code <left name>} / {@code <right name>}, de-duplicated with suffixes. */
    public static Join of(Plan left, Plan right, int[] leftKeys, int[] rightKeys) {
      List<Column> cols = new ArrayList<>(left.schema().columns());
      java.util.Set<String> names = new java.util.HashSet<>();
      cols.forEach(c -> names.add(c.name()));
      for (Column c : right.schema().columns()) {
        String n = c.name();
        int k = 2;
        while (!names.add(n)) {
          n = c.name() + "_" + k++;
        }
        cols.add(c.renamed(n));
      }
      return new Join(left, right, leftKeys, rightKeys, new Schema(cols));
    }

    @Override
    public List<Plan> inputs() {
      return List.of(left, right);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Join j
          && j.left.equals(left)
          && j.right.equals(right)
          && Arrays.equals(j.leftKeys, leftKeys)
          && Arrays.equals(j.rightKeys, rightKeys)
          && j.schema.equals(schema);
    }

    @Override
    public int hashCode() {
      return Objects.hash(left, right, Arrays.hashCode(leftKeys), Arrays.hashCode(rightKeys));
    }

    @Override
    public String toString() {
      return "Join[" + Arrays.toString(leftKeys) + "=" + Arrays.toString(rightKeys) + "]";
    }
  }

  /**
   * Groups by {@code groupBy} columns and computes {@code aggregates}; the output is the group
   * columns followed by one column per aggregate, named by {@code schema}. A group exists while
   * it has at least one input row.
   */
  record Reduce(Plan input, int[] groupBy, List<Aggregate> aggregates, Schema schema) implements Plan {
    public Reduce {
      groupBy = groupBy.clone();
      aggregates = List.copyOf(aggregates);
      if (schema.size() != groupBy.length + aggregates.size()) {
        throw new IllegalArgumentException("Cannot plan reduce: output schema must have group and aggregate columns");
      }
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Reduce r
          && r.input.equals(input)
          && Arrays.equals(r.groupBy, groupBy)
          && r.aggregates.equals(aggregates)
          && r.schema.equals(schema);
    }

    @Override
    public int hashCode() {
      return Objects.hash(input, Arrays.hashCode(groupBy), aggregates);
    }

    @Override
    public String toString() {
      return "Reduce[" + Arrays.toString(groupBy) + ", " + aggregates + "]";
    }
  }

  /** Each distinct row once, while its count is positive. */
  record Distinct(Plan input) implements Plan {
    @Override
    public Schema schema() {
      return input.schema();
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }
  }

  /**
   * Top-k: per group of equal {@code groupBy} columns (one group when there are none), the rows at
   * positions {@code offset} to {@code offset + limit} of the group in {@code order} (ties broken by
   * the whole row, so the rows kept are the same whatever the order of arrival). The output rows are
   * input rows; a row present n times counts n positions. With {@code rowNumber} each output row
   * also carries its position in the group, from 1 ({@code ROW_NUMBER() OVER (PARTITION BY … ORDER
   * BY …)}; the copies of a row present n times get n numbers).
   */
  record TopK(Plan input, int[] groupBy, List<SortKey> order, long offset, long limit, String rowNumber) implements Plan {
    public TopK {
      groupBy = groupBy.clone();
      order = List.copyOf(order);
      if (offset < 0 || limit < 0) {
        throw new IllegalArgumentException("Cannot plan top-k: offset and limit must not be negative");
      }
      if (rowNumber != null && offset != 0) {
        throw new IllegalArgumentException("Cannot plan top-k: rows are numbered from the first, without an offset");
      }
    }

    /** The window of each group's rows, without numbers. */
    public TopK(Plan input, int[] groupBy, List<SortKey> order, long offset, long limit) {
      this(input, groupBy, order, offset, limit, null);
    }

    /** The same window over another input (of the same columns), or with another limit. */
    public TopK with(Plan newInput, long newLimit) {
      return new TopK(newInput, groupBy, order, offset, newLimit, rowNumber);
    }

    /** The input's columns, then the row's number in its group's order (from 1) when {@code rowNumber} names one. */
    @Override
    public Schema schema() {
      return rowNumber == null ? input.schema() : input.schema().concat(Schema.of(Column.of(rowNumber, Type.BIGINT)));
    }

    @Override
    public List<Plan> inputs() {
      return List.of(input);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof TopK t && t.input.equals(input) && Arrays.equals(t.groupBy, groupBy) && t.order.equals(order)
          && t.offset == offset && t.limit == limit && Objects.equals(t.rowNumber, rowNumber);
    }

    @Override
    public int hashCode() {
      return Objects.hash(input, Arrays.hashCode(groupBy), order, offset, limit, rowNumber);
    }

    @Override
    public String toString() {
      return "TopK[" + Arrays.toString(groupBy) + ", " + order + ", offset " + offset + ", limit " + limit
          + (rowNumber == null ? "" : ", numbered as " + rowNumber) + "]";
    }
  }

  /** A readable, indented rendering of the plan (EXPLAIN). */
  static String explain(Plan plan) {
    StringBuilder sb = new StringBuilder();
    explain(plan, 0, sb);
    return sb.toString();
  }

  private static void explain(Plan p, int depth, StringBuilder sb) {
    sb.append("  ".repeat(depth));
    if (p instanceof Get g) {
      sb.append("Get ").append(g.name());
    } else if (p instanceof Map m) {
      sb.append("Map ").append(m.exprs());
    } else if (p instanceof Filter f) {
      sb.append("Filter ").append(f.predicate());
    } else if (p instanceof Union) {
      sb.append("Union");
    } else if (p instanceof Negate) {
      sb.append("Negate");
    } else if (p instanceof Join j) {
      sb.append("Join on ").append(Arrays.toString(j.leftKeys())).append(" = ").append(Arrays.toString(j.rightKeys()))
          .append(" (arranges both inputs by key)");
    } else if (p instanceof Reduce r) {
      sb.append("Reduce group by ").append(Arrays.toString(r.groupBy())).append(" ").append(r.aggregates())
          .append(" (arranged by group key)");
    } else if (p instanceof TopK t) {
      sb.append("TopK");
      if (t.groupBy().length > 0) {
        sb.append(" per group of ").append(Arrays.toString(t.groupBy()));
      }
      sb.append(" order by ").append(t.order()).append(t.offset() > 0 ? " offset " + t.offset() : "")
          .append(t.limit() < Long.MAX_VALUE ? " limit " + t.limit() : "")
          .append(t.rowNumber() == null ? "" : " numbered as " + t.rowNumber())
          .append(" (arranges its input by group; a change re-sorts its group)");
    } else {
      sb.append("Distinct (arranged by row)");
    }
    sb.append("  -> (").append(p.schema()).append(")\n");
    for (Plan c : p.inputs()) {
      explain(c, depth + 1, sb);
    }
  }
}
