package io.cairn.engine.row;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/** Guards the exchange: routing by {@code shardOf(cols)} must send a row where its key's arrangement shard lives. */
class RowShardTest {
  @Property(tries = 300)
  void shardOfEqualsTheShardOfTheSelectedKey(
      @ForAll long a, @ForAll String b, @ForAll double c, @ForAll boolean nullB, @ForAll("shards") int shards) {
    Row row = Row.of(a, nullB ? null : b, c);
    for (int[] cols : new int[][] {{0}, {1}, {2, 0}, {0, 1, 2}, {}}) {
      assertThat(row.shardOf(cols, shards)).isEqualTo(row.select(cols).shard(shards));
    }
  }

  @net.jqwik.api.Provide
  net.jqwik.api.Arbitrary<Integer> shards() {
    return net.jqwik.api.Arbitraries.integers().between(1, 16);
  }
}
