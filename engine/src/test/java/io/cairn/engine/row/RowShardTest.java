package io.cairn.engine.row;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import org.junit.jupiter.api.Test;

/** Guards the exchange: routing by {@code shardOf(cols)} must send a row where its key's arrangement shard lives. */
class RowShardTest {
  record Case(long a, String b, double c, boolean nullB, int shards) {}

  @Test
  void shardOfEqualsTheShardOfTheSelectedKey() {
    Gen<Long> as = Gen.anyLong();
    Gen<String> bs = Gen.strings(255);
    Gen<Double> cs = Gen.anyDouble();
    Gen<Boolean> nullBs = Gen.booleans();
    Gen<Integer> shardCounts = Gen.ints(1, 16);
    Gen<Case> gen = (r, size) ->
        new Case(as.next(r, size), bs.next(r, size), cs.next(r, size), nullBs.next(r, size), shardCounts.next(r, size));
    Property.tries(300).forAll(gen, t -> {
      Row row = Row.of(t.a(), t.nullB() ? null : t.b(), t.c());
      for (int[] cols : new int[][] {{0}, {1}, {2, 0}, {0, 1, 2}, {}}) {
        assertThat(row.shardOf(cols, t.shards())).isEqualTo(row.select(cols).shard(t.shards()));
      }
    });
  }
}
