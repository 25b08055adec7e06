package io.cairn.benchmarks.takeover;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a node must serve after the load generator's records {@code [0, limit)}, computed naively
 * from {@link LoadGeneratorConnector#recordAt}: the table keyed by id (the last record of each id
 * wins, a delete removes it), its row count and the view {@code by_cat} (category → rows, sum of
 * amount). Ids and categories are dense, so the table is an {@code int[]} of {@code category * 1000
 * + amount} (amounts are below 1000), -1 for no row: 4 bytes a key, no object per row.
 *
 * @param rows the table's rows (the view {@code total}: {@code SELECT COUNT(*) AS n FROM gen})
 * @param byCategory category → {rows, sum of amount}
 * @param lookups {@link #LOOKUPS} ids spread over the key space → {@code category * 1000 + amount}, -1 for no row:
 *     what key lookups on the source ({@code SELECT … FROM gen WHERE id = k}) must return
 */
public record Oracle(long rows, Map<Long, Totals> byCategory, Map<Long, Long> lookups) {
  static final int LOOKUPS = 8;

  /** One row of {@code by_cat}. */
  public record Totals(long n, long total) {}

  public Oracle {
    byCategory = Map.copyOf(byCategory);
    lookups = Map.copyOf(lookups);
  }

  /** The ids looked up: {@link #LOOKUPS} of them, evenly spread over {@code [0, keys)}. */
  static List<Long> lookupIds(long keys) {
    List<Long> ids = new ArrayList<>();
    for (int j = 0; j < LOOKUPS; j++) {
      ids.add(keys * j / LOOKUPS + j);
    }
    return ids;
  }

  static Oracle compute(LoadGeneratorConnector.Settings s) {
    if (s.keys() > Integer.MAX_VALUE - 8 || s.categories() * 1000 > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("Cannot compute the oracle: " + s.keys() + " keys or " + s.categories() + " categories is too many");
    }
    int[] table = new int[(int) s.keys()];
    Arrays.fill(table, -1);
    for (long i = 0; i < s.limit(); i++) {
      LoadGeneratorConnector.Record r = LoadGeneratorConnector.recordAt(s, i);
      Row row = r.row();
      table[(int) r.id()] = row == null ? -1 : (int) (row.getLong(1) * 1000 + row.getLong(2));
    }
    long[] n = new long[(int) s.categories()];
    long[] total = new long[(int) s.categories()];
    long rows = 0;
    for (int v : table) {
      if (v >= 0) {
        rows++;
        n[v / 1000]++;
        total[v / 1000] += v % 1000;
      }
    }
    Map<Long, Totals> by = new TreeMap<>();
    for (int c = 0; c < n.length; c++) {
      if (n[c] > 0) {
        by.put((long) c, new Totals(n[c], total[c]));
      }
    }
    Map<Long, Long> lookups = new TreeMap<>();
    for (long id : lookupIds(s.keys())) {
      lookups.put(id, (long) table[(int) id]);
    }
    return new Oracle(rows, by, lookups);
  }

  /** The differences between a served answer and this oracle, "" when there are none. */
  String diff(long servedRows, Map<Long, Totals> servedByCategory, Map<Long, Long> servedLookups) {
    StringBuilder sb = new StringBuilder();
    if (servedRows != rows) {
      sb.append("count(*) ").append(servedRows).append(" != ").append(rows).append("; ");
    }
    Map<Long, Totals> all = new TreeMap<>(byCategory);
    servedByCategory.forEach(all::putIfAbsent);
    for (Long c : all.keySet()) {
      Totals want = byCategory.get(c);
      Totals got = servedByCategory.get(c);
      if (want == null || !want.equals(got)) {
        sb.append("category ").append(c).append(' ').append(got).append(" != ").append(want).append("; ");
      }
    }
    for (Map.Entry<Long, Long> e : lookups.entrySet()) {
      Long got = servedLookups.get(e.getKey());
      if (!e.getValue().equals(got)) {
        sb.append("gen id ").append(e.getKey()).append(' ').append(got).append(" != ").append(e.getValue())
            .append(" (category * 1000 + amount, -1 for no row); ");
      }
    }
    return sb.toString();
  }
}
