package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * {@link Consolidation}, the engine's one consolidation routine, and {@link Values}, which uses
 * it, against naive oracles: {@link List#sort} for the order (stable) and a sorted map of sums for
 * the collection. Entries have NULLs, NaN, -0.0 and 0.0 (distinct values that sort apart), zero
 * diffs and retractions that cancel; their number crosses the insertion-sort limit (32), and some
 * samples are made of sorted runs, as a trace's batches are.
 */
class ConsolidationTest {
  record Entry(Row val, long diff) {}

  static Gen<List<Entry>> entries() {
    Gen<Object> a = Gen.<Object>oneOf(Gen.longs(-3, 3), Gen.of(0.0, -0.0, Double.NaN, 1.5)).orNull(0.1);
    Gen<Object> b = Gen.of((Object) "x", "y", "").orNull(0.2);
    Gen<Long> diffs = Gen.of(-2L, -1L, 0L, 1L, 1L, 2L);
    Gen<Entry> entry = (r, size) -> new Entry(Row.of(a.next(r, size), b.next(r, size)), diffs.next(r, size));
    Gen<List<Entry>> flat = entry.list(0, 120);
    // several sorted runs one after another (a trace read back)
    Gen<List<Entry>> runs = (r, size) -> {
      List<Entry> out = new ArrayList<>();
      int k = 1 + r.nextInt(5);
      for (int i = 0; i < k; i++) {
        List<Entry> run = new ArrayList<>(flat.next(r, size));
        run.sort(Comparator.comparing(Entry::val));
        out.addAll(run);
      }
      return out;
    };
    return Gen.oneOf(flat, runs);
  }

  /** Oracle: value → summed diff, zero sums left out, in value order. */
  static Map<Row, Long> oracle(List<Entry> es) {
    Map<Row, Long> m = new TreeMap<>();
    for (Entry e : es) {
      m.merge(e.val(), e.diff(), Long::sum);
    }
    m.values().removeIf(d -> d == 0);
    return m;
  }

  @Test
  void sortIsStableAndOrdered() {
    Property.tries(300).forAll(entries(), es -> {
      int[] perm = Consolidation.sortInto(new int[es.size()], es.size(), (x, y) -> es.get(x).val().compareTo(es.get(y).val()));
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < es.size(); i++) {
        expected.add(i);
      }
      expected.sort(Comparator.comparing(i -> es.get(i).val())); // List.sort is stable
      List<Integer> actual = new ArrayList<>();
      for (int p : perm) {
        actual.add(p);
      }
      assertThat(actual).isEqualTo(expected);
    });
  }

  @Test
  void consolidateSumsEqualEntriesAndDropsZeroSums() {
    Property.tries(300).forAll(entries(), es -> {
      Map<Row, Long> got = new LinkedHashMap<>();
      Consolidation.Order byVal = (x, y) -> es.get(x).val().compareTo(es.get(y).val());
      int[] perm = Consolidation.sortInto(new int[es.size()], es.size(), byVal);
      int live = Consolidation.scan(perm, es.size(), byVal, i -> es.get(i).diff(),
          (first, sum) -> assertThat(got.put(es.get(first).val(), sum)).as("one run per value").isNull());
      assertThat(live).isEqualTo(got.size());
      assertThat(new ArrayList<>(got.entrySet())).isEqualTo(new ArrayList<>(oracle(es).entrySet()));
    });
  }

  @Test
  void valuesConsolidateLikeTheOracleAndCanBeReused() {
    Values values = new Values();
    Property.tries(300).forAll(entries().list(1, 3), samples -> {
      for (List<Entry> es : samples) { // the same scratch, key after key
        values.clear();
        es.forEach(e -> values.add(e.val(), e.diff()));
        values.consolidate();
        Map<Row, Long> got = new LinkedHashMap<>();
        for (int i = 0; i < values.size(); i++) {
          got.put(values.val(i), values.diff(i));
        }
        assertThat(new ArrayList<>(got.entrySet())).isEqualTo(new ArrayList<>(oracle(es).entrySet()));
      }
    });
  }
}
