package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link BulkPageEncoder.LongDictionary} gives each distinct value the id of its first appearance
 * (the order of the dictionary page), for values close together and far apart, at both ends of the
 * long range, across the table's growth and its reuse after {@code clear}; checked against a map.
 */
class LongDictionaryTest {
  @Test
  void idsAreTheOrderOfFirstAppearanceWhereverTheValuesFall() {
    SplittableRandom random = new SplittableRandom(3);
    BulkPageEncoder.LongDictionary dict = new BulkPageEncoder.LongDictionary();
    long[] firsts = {0, 500, -1, Long.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE - 10, Long.MIN_VALUE + 10, 1L << 40};
    int checked = 0;
    for (long first : firsts) {
      dict.clear();
      Map<Long, Integer> oracle = new LinkedHashMap<>();
      for (int i = 0; i < 300_000; i++) {
        long x = switch (i == 0 ? -1 : random.nextInt(6)) {
          case -1 -> first;
          case 0 -> first + random.nextInt(1000); // near each other
          case 1 -> first - 32_768 + random.nextInt(65_536); // a range of 2^16
          case 2 -> first + (random.nextBoolean() ? 32_768 : -32_769) + random.nextInt(3) - 1; // around that range's edges
          case 3 -> random.nextLong(); // anywhere
          case 4 -> random.nextBoolean() ? Long.MIN_VALUE + random.nextInt(100) : Long.MAX_VALUE - random.nextInt(100); // the ends
          default -> random.nextLong(50_000_000); // a wide range: the table grows
        };
        int expected = oracle.computeIfAbsent(x, k -> oracle.size());
        assertThat(dict.add(x)).as("value %d, first %d, step %d", x, first, i).isEqualTo(expected);
        checked++;
      }
      assertThat(dict.size()).isEqualTo(oracle.size());
      int id = 0;
      for (long k : oracle.keySet()) {
        assertThat(dict.keys[id++]).isEqualTo(k);
      }
    }
    assertThat(checked).isEqualTo(firsts.length * 300_000);
  }
}
