package io.cairn.engine.plan;

import io.cairn.engine.row.Row;
import java.util.Comparator;
import java.util.List;

/**
 * One key of an order (ORDER BY): column {@code column} of the row, ascending or descending, with
 * NULLs first or last (PostgreSQL's default is NULLS LAST ascending, NULLS FIRST descending).
 */
public record SortKey(int column, boolean descending, boolean nullsFirst) {
  /** The order of {@code keys}, outermost first; rows equal in every key compare 0. */
  public static Comparator<Row> comparator(List<SortKey> keys) {
    List<SortKey> ks = List.copyOf(keys);
    return (a, b) -> {
      for (SortKey k : ks) {
        Object x = a.get(k.column());
        Object y = b.get(k.column());
        int c;
        if (x == null || y == null) {
          c = x == y ? 0 : (x == null) == k.nullsFirst() ? -1 : 1;
        } else {
          c = Row.compareValues(x, y);
          if (k.descending()) {
            c = -c;
          }
        }
        if (c != 0) {
          return c;
        }
      }
      return 0;
    };
  }

  /** The order of {@code keys}, then of the whole row: a total order, so the rows kept at a tie are always the same ones. */
  public static Comparator<Row> total(List<SortKey> keys) {
    return comparator(keys).thenComparing(Comparator.naturalOrder());
  }
}
