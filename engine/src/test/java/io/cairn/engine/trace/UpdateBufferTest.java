package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The seal (UpdateBuffer: columnar staging, permutation sort, one consolidation scan) against the
 * naive oracle: sort boxed updates by (key, val, time) and sum equal ones.
 */
class UpdateBufferTest {
  private static final Schema[] KEYS = {
      Schema.of(Column.of("k", Type.BIGINT)),
      Schema.of(Column.of("k", Type.BIGINT), Column.of("k2", Type.BIGINT)),
      Schema.of(Column.of("k", Type.TEXT)),
      Schema.of(Column.of("k", Type.TEXT), Column.of("k2", Type.BIGINT)),
      Schema.of(Column.of("k", Type.INTERVAL)),
      Schema.of(),
  };
  private static final Schema[] VALS = {
      Schema.of(),
      Schema.of(Column.of("v", Type.BIGINT)),
      Schema.of(Column.of("v", Type.BIGINT), Column.of("t", Type.TIMESTAMP)),
      Schema.of(Column.of("d", Type.DOUBLE), Column.of("b", Type.BOOLEAN)),
      Schema.of(Column.of("i", Type.INTERVAL), Column.of("n", Type.NUMERIC)),
  };

  record Case(Schema key, Schema val, List<Update> updates) {}

  private static Object value(Random r, Type t, boolean nulls) {
    if (nulls && r.nextInt(8) == 0) {
      return null;
    }
    return switch (t) {
      case BIGINT, TIMESTAMP, DATE -> r.nextBoolean() ? (long) r.nextInt(20) - 5 : r.nextLong();
      case DOUBLE -> new double[] {0.0, -0.0, 1.5, Double.NaN, -3.0}[r.nextInt(5)];
      case BOOLEAN -> r.nextBoolean();
      // few values (long runs of one key) or many (a seal sorts the distinct ones, then the runs)
      case TEXT -> r.nextBoolean() ? new String[] {"", "a", "b", "é", "zz"}[r.nextInt(5)]
          : (r.nextBoolean() ? "name " : "Ünïcode \uD83D\uDE00 ") + r.nextInt(300);
      case NUMERIC -> new java.math.BigDecimal[] {java.math.BigDecimal.ZERO, new java.math.BigDecimal("1.5"), new java.math.BigDecimal("-2")}[r.nextInt(3)];
      case INTERVAL -> new io.cairn.engine.row.Interval[] {io.cairn.engine.row.Interval.ZERO, new io.cairn.engine.row.Interval(1, 0, 0),
          new io.cairn.engine.row.Interval(0, 30, 0), new io.cairn.engine.row.Interval(0, -1, 7_200_000_000L)}[r.nextInt(4)];
      case NULL -> null;
    };
  }

  private static Row row(Random r, Schema s, boolean nulls) {
    Object[] v = new Object[s.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = value(r, s.type(i), nulls);
    }
    return Row.of(v);
  }

  @Test
  void sealEqualsTheNaiveSortAndSum() {
    Gen<Case> gen = (r, size) -> {
      Schema k = KEYS[r.nextInt(KEYS.length)];
      Schema v = VALS[r.nextInt(VALS.length)];
      boolean nulls = r.nextBoolean();
      int n = r.nextInt(10 * size + 1) + (r.nextInt(4) == 0 ? 300 : 0);
      List<Update> ups = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (!ups.isEmpty() && r.nextInt(4) == 0) { // a retraction or repeat of an earlier update
          Update u = ups.get(r.nextInt(ups.size()));
          ups.add(new Update(u.key(), u.val(), u.time(), r.nextBoolean() ? -u.diff() : u.diff()));
        } else {
          ups.add(new Update(row(r, k, nulls), row(r, v, nulls), r.nextInt(3), r.nextBoolean() ? 1 : -1 - r.nextInt(3)));
        }
      }
      return new Case(k, v, ups);
    };
    Property.tries(300).forAll(gen, c -> {
      UpdateBuffer buf = new UpdateBuffer(c.key(), c.val());
      c.updates().forEach(u -> buf.add(u.key(), u.val(), u.time(), u.diff()));
      Batch got = buf.seal(new Description(0, 3, 0));
      assertThat(buf.isEmpty()).isTrue();
      List<Update> expected = naive(c.updates());
      List<Update> actual = new ArrayList<>();
      for (int i = 0; i < got.size(); i++) {
        actual.add(got.update(i));
      }
      assertThat(actual).isEqualTo(expected);
    });
  }

  private static List<Update> naive(List<Update> updates) {
    List<Update> sorted = new ArrayList<>(updates);
    sorted.sort(Update.ORDER);
    List<Update> out = new ArrayList<>();
    for (Update u : sorted) {
      Update last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && last.key().equals(u.key()) && last.val().equals(u.val()) && last.time() == u.time()) {
        out.set(out.size() - 1, new Update(u.key(), u.val(), u.time(), last.diff() + u.diff()));
      } else {
        out.add(u);
      }
    }
    out.removeIf(u -> u.diff() == 0);
    return out;
  }
}
