package io.cairn.engine.row;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** KeySort against a stable comparison sort (the oracle), for the radix and the generic paths. */
class KeySortTest {

  private static int[] oracle(Row[] keys, int n) {
    List<Integer> idx = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      idx.add(i);
    }
    idx.sort(Comparator.comparing(i -> keys[i])); // List.sort is stable
    return idx.stream().mapToInt(Integer::intValue).toArray();
  }

  private static Row[] longKeys(Random r, int n) {
    long[] pool = {Long.MIN_VALUE, Long.MAX_VALUE, -1, 0, 1, 65535, 65536, -65536, 1L << 40, -(1L << 40)};
    Row[] keys = new Row[n];
    int mode = r.nextInt(4);
    for (int i = 0; i < n; i++) {
      long v = switch (mode) {
        case 0 -> r.nextInt(50); // few distinct keys: long equal runs
        case 1 -> r.nextLong();
        case 2 -> pool[r.nextInt(pool.length)];
        default -> r.nextInt(1 << 20) - (1 << 19);
      };
      keys[i] = Row.of(v);
    }
    return keys;
  }

  @Test
  void singleBigintKeysSortLikeAStableComparisonSort() {
    Gen<Row[]> gen = (r, size) -> longKeys(r, r.nextInt(3) == 0 ? r.nextInt(300) : 256 + r.nextInt(50 * size + 1));
    Property.tries(200).forAll(gen, keys -> assertThat(KeySort.byKey(keys, keys.length)).isEqualTo(oracle(keys, keys.length)));
  }

  @Test
  void otherKeysTakeTheGenericPathWithTheSameOrder() {
    Gen<Row[]> gen = (r, size) -> {
      int n = 256 + r.nextInt(20 * size + 1);
      Row[] keys = longKeys(r, n);
      int odd = r.nextInt(n);
      keys[odd] = switch (r.nextInt(3)) {
        case 0 -> Row.of((Object) null); // a NULL key: not the radix path, NULL sorts first
        case 1 -> Row.of(1L, "x");
        default -> Row.of("text");
      };
      if (keys[odd].size() == 1 && keys[odd].get(0) instanceof String) {
        for (int i = 0; i < n; i++) {
          keys[i] = Row.of("k" + keys[i].get(0));
        }
      }
      return keys;
    };
    Property.tries(100).forAll(gen, keys -> assertThat(KeySort.byKey(keys, keys.length)).isEqualTo(oracle(keys, keys.length)));
  }

  @Test
  void repeatingKeysSortByRankLikeAStableComparisonSort() {
    Gen<Row[]> gen = (r, size) -> {
      int n = 256 + r.nextInt(40 * size + 1);
      int distinct = 1 + r.nextInt(Math.max(1, n / 3));
      int shape = r.nextInt(4);
      Row[] keys = new Row[n];
      for (int i = 0; i < n; i++) {
        int k = r.nextInt(distinct);
        keys[i] = switch (shape) {
          case 0 -> Row.of("customer " + k); // a TEXT key: new String objects, equal values
          case 1 -> Row.of(k % 7 == 0 ? null : "c" + k, (long) (k % 3)); // TEXT and BIGINT, NULLs first
          case 2 -> Row.of(k % 5 == 0 ? -0.0 : k * 0.5); // DOUBLE, with -0.0
          default -> Row.of((long) k, k % 2 == 0 ? "even" : "odd\u00e9\uD83D\uDE00"); // non-ASCII, a surrogate pair
        };
      }
      return keys;
    };
    Property.tries(150).forAll(gen, keys -> {
      assertThat(KeySort.byRank(keys, keys.length)).as("repeating keys take the rank path").isNotNull();
      assertThat(KeySort.byKey(keys, keys.length)).isEqualTo(oracle(keys, keys.length));
    });
  }

  @Test
  void mostlyDistinctKeysLeaveTheRankPath() {
    Row[] keys = new Row[1000];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = Row.of("k" + (keys.length - i));
    }
    assertThat(KeySort.byRank(keys, keys.length)).isNull();
    assertThat(KeySort.byKey(keys, keys.length)).isEqualTo(oracle(keys, keys.length));
  }
}
