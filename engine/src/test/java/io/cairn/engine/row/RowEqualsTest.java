package io.cairn.engine.row;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import org.junit.jupiter.api.Test;

/** Row.equals (a per-value fast path) agrees with compareTo == 0 and with hashCode. */
class RowEqualsTest {
  private static final Object[] VALUES = {null, 0L, 1L, -1L, Long.MIN_VALUE, 0.0, -0.0, Double.NaN, 1.0,
      Double.POSITIVE_INFINITY, "", "a", "é", true, false};

  private static boolean sameClasses(Row a, Row b) {
    for (int i = 0; i < a.size(); i++) {
      if (a.get(i) != null && b.get(i) != null && a.get(i).getClass() != b.get(i).getClass()) {
        return false;
      }
    }
    return true;
  }

  @Test
  void equalsAgreesWithCompareTo() {
    Gen<Row[]> pairs = (r, size) -> {
      int n = r.nextInt(4);
      Object[] a = new Object[n];
      Object[] b = new Object[n];
      for (int i = 0; i < n; i++) {
        a[i] = VALUES[r.nextInt(VALUES.length)];
        b[i] = r.nextBoolean() ? a[i] : VALUES[r.nextInt(VALUES.length)];
        if (a[i] != null && b[i] != null && a[i].getClass() != b[i].getClass()
            && !(a[i] instanceof Number && b[i] instanceof Number)) {
          b[i] = a[i]; // a column holds one type (BIGINT and DOUBLE may meet in comparisons)
        }
      }
      return new Row[] {Row.of(a), Row.of(b)};
    };
    Property.tries(2000).forAll(pairs, p -> {
      boolean eq = p[0].equals(p[1]);
      assertThat(eq).as("%s vs %s", p[0], p[1]).isEqualTo(p[0].compareTo(p[1]) == 0);
      if (eq && sameClasses(p[0], p[1])) { // a BIGINT and an equal DOUBLE compare equal but never share a column
        assertThat(p[0].hashCode()).isEqualTo(p[1].hashCode());
      }
    });
  }
}
