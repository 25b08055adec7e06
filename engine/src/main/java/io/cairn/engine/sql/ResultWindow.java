package io.cairn.engine.sql;

import io.cairn.engine.plan.SortKey;
import io.cairn.engine.row.CheckedSort;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.statement.select.OrderByElement;
import net.sf.jsqlparser.statement.select.PlainSelect;

/**
 * The ORDER BY, OFFSET and LIMIT of a one-shot SELECT, applied to its result rows (a view is
 * unordered: only a query's result has an order).
 *
 * <p>ORDER BY names an output column (its name or alias, or its position from 1), ASC or DESC,
 * with PostgreSQL's NULL order: NULLS LAST ascending and NULLS FIRST descending unless the query
 * says otherwise. Rows that tie keep the result's order (sorted by the whole row), so the answer
 * is the same every time. OFFSET and LIMIT take non-negative integers.
 *
 * @param keys the sort keys, outermost first (none: the result's own order)
 * @param offset rows skipped
 * @param limit rows kept after the offset ({@link Long#MAX_VALUE}: all)
 */
record ResultWindow(List<SortKey> keys, long offset, long limit) {
  ResultWindow {
    keys = List.copyOf(keys);
  }

  /** The window of the query {@code ps} over its output {@code schema}. */
  static ResultWindow of(net.sf.jsqlparser.statement.select.Select ps, Schema schema) {
    return of(ps, schema, "Cannot plan query");
  }

  /** The window of {@code ps} over its output {@code schema}; errors start with {@code what}. */
  static ResultWindow of(net.sf.jsqlparser.statement.select.Select ps, Schema schema, String what) {
    List<SortKey> keys = new ArrayList<>();
    if (ps.getOrderByElements() != null) {
      for (OrderByElement e : ps.getOrderByElements()) {
        int col = column(e.getExpression(), schema, what, "ORDER BY");
        boolean desc = !e.isAsc();
        boolean nullsFirst = e.getNullOrdering() == null ? desc : e.getNullOrdering() == OrderByElement.NullOrdering.NULLS_FIRST;
        keys.add(new SortKey(col, desc, nullsFirst));
      }
    }
    long offset = ps.getOffset() == null ? 0 : count(what, "OFFSET", ps.getOffset().getOffset());
    long limit = Long.MAX_VALUE;
    if (ps.getLimit() != null) {
      if (ps.getLimit().isLimitAll() || ps.getLimit().isLimitNull()) {
        limit = Long.MAX_VALUE;
      } else {
        limit = count(what, "LIMIT", ps.getLimit().getRowCount());
      }
      if (ps.getLimit().getOffset() != null) { // LIMIT offset, count (MySQL's form)
        throw new SqlException(what + ": write LIMIT n OFFSET m, not LIMIT m, n");
      }
    }
    return new ResultWindow(keys, offset, limit);
  }

  /**
   * The output column {@code e} names in {@code clause} (ORDER BY, DISTINCT ON): its name or alias,
   * or its position from 1.
   */
  static int column(Expression e, Schema schema, String what, String clause) {
    if (e instanceof LongValue lv) {
      long p = lv.getValue();
      if (p < 1 || p > schema.size()) {
        throw new SqlException(what + ": " + clause + " position " + p + " is not in the select list (1.." + schema.size() + ")");
      }
      return (int) p - 1;
    }
    if (e instanceof Column c) {
      String name = Planner.unquote(c.getColumnName());
      int found = -1;
      for (int i = 0; i < schema.size(); i++) {
        if (schema.column(i).name().equals(name)) {
          if (found >= 0) {
            throw new SqlException(what + ": " + clause + " '" + name + "' is ambiguous: the select list has it twice");
          }
          found = i;
        }
      }
      if (found >= 0) {
        return found;
      }
      throw new SqlException(what + ": " + clause + " '" + c + "' is not a column of the result " + names(schema)
          + " (" + clause + " takes an output column's name or position)");
    }
    throw new SqlException(what + ": " + clause + " '" + e + "': " + clause + " takes an output column's name or position; "
        + "select the expression and order by its alias");
  }

  private static String names(Schema schema) {
    List<String> n = new ArrayList<>();
    for (int i = 0; i < schema.size(); i++) {
      n.add(schema.column(i).name());
    }
    return n.toString();
  }

  private static long count(String what, String clause, Expression e) {
    if (e instanceof LongValue lv && lv.getValue() >= 0) {
      return lv.getValue();
    }
    throw new SqlException(what + ": " + clause + " takes a non-negative integer, not '" + e + "'");
  }

  /** {@code rows} (in the result's order) sorted by the keys, then cut to the offset and limit; {@code check} as the budget's. */
  List<Row> apply(List<Row> rows, Runnable check) {
    List<Row> out = rows;
    if (!keys.isEmpty()) {
      out = new ArrayList<>(rows);
      CheckedSort.sort(out, comparator(), check); // stable: ties keep the result's order
    }
    int from = (int) Math.min(out.size(), offset);
    int to = (int) Math.min(out.size(), from + Math.min(limit, Integer.MAX_VALUE));
    return out.subList(from, to);
  }

  private Comparator<Row> comparator() {
    return SortKey.comparator(keys);
  }
}
