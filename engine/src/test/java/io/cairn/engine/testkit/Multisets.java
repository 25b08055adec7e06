package io.cairn.engine.testkit;

import static org.assertj.core.api.Assertions.fail;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Multisets of rows (row → non-zero count) read from an engine, and comparison with a tolerance for DOUBLEs. */
public final class Multisets {
  public static final double TOLERANCE = 1e-9;

  private Multisets() {}

  /** Adds {@code diff} to {@code row}'s count, removing it at zero. */
  public static void add(Map<Row, Long> m, Row row, long diff) {
    m.merge(row, diff, (a, b) -> a + b == 0 ? null : a + b);
  }

  /** The contents of source or view {@code name} as of the last closed tick, with multiplicities (negative ones too). */
  public static Map<Row, Long> contents(Engine engine, String name) {
    Dataflow d = engine.dataflow(name).orElseThrow(() -> new AssertionError("no dataflow " + name));
    Map<Row, Long> out = new TreeMap<>();
    engine.betweenTicks(
        () -> {
          for (int s = 0; s < engine.workers(); s++) {
            Rows r = d.contents(s);
            for (int i = 0; i < r.size(); i++) {
              add(out, r.row(i), r.diff(i));
            }
          }
          return null;
        });
    return out;
  }

  /**
   * Asserts that two multisets are equal, DOUBLE values compared with a relative tolerance of
   * {@link #TOLERANCE}; {@code what} names the view and tick in the failure message.
   */
  public static void assertSame(String what, Map<Row, Long> actual, Map<Row, Long> expected) {
    if (actual.equals(expected)) {
      return;
    }
    List<Map.Entry<Row, Long>> a = new ArrayList<>(new TreeMap<>(actual).entrySet());
    List<Map.Entry<Row, Long>> e = new ArrayList<>(new TreeMap<>(expected).entrySet());
    boolean ok = a.size() == e.size();
    for (int i = 0; ok && i < a.size(); i++) {
      ok = a.get(i).getValue().equals(e.get(i).getValue()) && close(a.get(i).getKey(), e.get(i).getKey());
    }
    if (!ok) {
      fail("%s differs%n  actual:   %s%n  expected: %s", what, new TreeMap<>(actual), new TreeMap<>(expected));
    }
  }

  /** Whether two rows are equal, DOUBLE values within the tolerance. */
  public static boolean close(Row x, Row y) {
    if (x.size() != y.size()) {
      return false;
    }
    for (int c = 0; c < x.size(); c++) {
      Object p = x.get(c);
      Object q = y.get(c);
      if (p instanceof Double dp && q instanceof Double dq) {
        if (Math.abs(dp - dq) > TOLERANCE * Math.max(1, Math.max(Math.abs(dp), Math.abs(dq)))) {
          return false;
        }
      } else if (Row.compareValues(p, q) != 0) {
        return false;
      }
    }
    return true;
  }
}
