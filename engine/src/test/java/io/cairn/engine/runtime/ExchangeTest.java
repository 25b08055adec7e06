package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.dataflow.Operator;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The exchange against a naive router: worker {@code t} must receive, for each source worker in
 * order, exactly that worker's updates whose key hashes to {@code t}, in their original order with
 * their diffs; an input already sharded by the key must stay where it is.
 */
class ExchangeTest {
  static final Schema SCHEMA = Schema.of(Column.of("a", Type.BIGINT), Column.of("b", Type.TEXT), Column.of("c", Type.DOUBLE));

  /** An operator whose output is given, with a declared partitioning. */
  static final class Given extends Operator {
    private final int[] partitioning;

    Given(List<List<Row>> perShard, int[] partitioning) {
      super(SCHEMA, List.of(), perShard.size());
      this.partitioning = partitioning;
      for (int s = 0; s < perShard.size(); s++) {
        long diff = 1;
        for (Row r : perShard.get(s)) {
          out(s).add(r, diff);
          diff = diff == 3 ? -2 : diff + 1; // every diff is checked, including retractions
        }
      }
    }

    @Override
    public int[] partitioning() {
      return partitioning;
    }

    @Override
    public void process(int shard, long tick, Rows[] inputs) {}

    @Override
    public String describe() {
      return "Given";
    }
  }

  /** An operator keyed on {@code key} (and not on its second input, if any). */
  static final class Keyed extends Operator {
    private final int[] key;

    Keyed(List<Operator> inputs, int[] key, int shards) {
      super(SCHEMA, inputs, shards);
      this.key = key;
    }

    @Override
    public int[] exchangeKey(int input) {
      return input == 0 ? key : null;
    }

    @Override
    public void process(int shard, long tick, Rows[] inputs) {}

    @Override
    public String describe() {
      return "Keyed";
    }
  }

  record Case(List<List<Row>> perShard, int[] key) {}

  static final int[][] KEYS = {{0}, {1}, {2, 0}, {0, 1, 2}, {}};

  static Gen<Case> cases() {
    Gen<Long> as = Gen.longs(-5, 5);
    Gen<String> bs = Gen.strings(3);
    Gen<Double> cs = Gen.of(0.0, -0.0, 1.5, Double.NaN);
    Gen<Integer> nulls = Gen.ints(0, 9);
    return (r, size) -> {
      int shards = 2 + r.nextInt(4);
      List<List<Row>> perShard = new ArrayList<>();
      for (int s = 0; s < shards; s++) {
        List<Row> rows = new ArrayList<>();
        int n = Gen.length(r, 0, 300, size);
        for (int i = 0; i < n; i++) {
          rows.add(Row.of(nulls.next(r, size) == 0 ? null : as.next(r, size), nulls.next(r, size) == 0 ? null : bs.next(r, size),
              cs.next(r, size)));
        }
        perShard.add(rows);
      }
      return new Case(perShard, KEYS[r.nextInt(KEYS.length)]);
    };
  }

  @Test
  void everyWorkerGetsExactlyTheUpdatesOfItsKeysInSourceOrder() {
    Property.tries(200).forAll(cases(), c -> {
      int shards = c.perShard().size();
      Given in = new Given(c.perShard(), null);
      Given other = new Given(c.perShard(), null);
      Keyed op = new Keyed(List.of(in, other), c.key(), shards);
      try (Workers workers = new Workers(shards)) {
        Exchange exchange = new Exchange(workers, shards, true);
        Exchange.Routed routed = exchange.route(op);
        long total = 0;
        for (int to = 0; to < shards; to++) {
          Rows[] got = routed.inputs(to);
          List<String> expected = new ArrayList<>();
          for (int from = 0; from < shards; from++) {
            Rows src = in.out(from);
            for (int i = 0; i < src.size(); i++) {
              if (src.row(i).shardOf(c.key(), shards) == to) {
                expected.add(src.row(i) + " x " + src.diff(i));
              }
            }
          }
          List<String> actual = new ArrayList<>();
          for (int i = 0; i < got[0].size(); i++) {
            actual.add(got[0].row(i) + " x " + got[0].diff(i));
          }
          assertThat(actual).as("worker %d of %d, key %s", to, shards, java.util.Arrays.toString(c.key())).isEqualTo(expected);
          assertThat(got[1]).as("an input without an exchange key stays on its worker").isSameAs(other.out(to));
          total += in.out(to).size();
        }
        assertThat(exchange.updatesExchanged()).isEqualTo(total);
        assertThat(exchange.exchangesSkipped()).isZero();
      }
    });
  }

  @Test
  void anInputShardedByExactlyTheKeyStaysWhereItIs() {
    List<List<Row>> perShard = List.of(List.of(Row.of(1L, "x", 0.5)), List.of(Row.of(2L, "y", 1.5)));
    try (Workers workers = new Workers(2)) {
      Exchange exchange = new Exchange(workers, 2, true);
      Given sharded = new Given(perShard, new int[] {2, 0});
      Exchange.Routed routed = exchange.route(new Keyed(List.of(sharded), new int[] {2, 0}, 2));
      assertThat(routed.inputs(0)[0]).isSameAs(sharded.out(0));
      assertThat(routed.inputs(1)[0]).isSameAs(sharded.out(1));
      assertThat(exchange.exchangesSkipped()).isEqualTo(1);
      assertThat(exchange.updatesExchanged()).isZero();

      // the same columns in another order hash differently: routed
      Given reordered = new Given(perShard, new int[] {0, 2});
      exchange.route(new Keyed(List.of(reordered), new int[] {2, 0}, 2));
      assertThat(exchange.updatesExchanged()).isEqualTo(2);
      assertThat(exchange.exchangesSkipped()).isEqualTo(1);
    }
  }

  @Test
  void withoutSkippingAnInputShardedByTheKeyIsRoutedLikeAnyOther() {
    List<List<Row>> perShard = List.of(List.of(Row.of(1L, "x", 0.5), Row.of(2L, "y", 1.5)), List.of(Row.of(3L, "z", 2.5)));
    try (Workers workers = new Workers(2)) {
      Exchange exchange = new Exchange(workers, 2, false);
      Given sharded = new Given(perShard, new int[] {0});
      Exchange.Routed routed = exchange.route(new Keyed(List.of(sharded), new int[] {0}, 2));
      for (int to = 0; to < 2; to++) {
        assertThat(routed.inputs(to)[0]).as("worker %d gets a gathered buffer", to).isNotSameAs(sharded.out(to));
        for (int i = 0; i < routed.inputs(to)[0].size(); i++) {
          assertThat(routed.inputs(to)[0].row(i).shardOf(new int[] {0}, 2)).isEqualTo(to);
        }
      }
      assertThat(exchange.updatesExchanged()).isEqualTo(3);
      assertThat(exchange.exchangesSkipped()).isZero();
    }
  }

  @Test
  void oneWorkerRoutesNothing() {
    try (Workers workers = new Workers(1)) {
      Exchange exchange = new Exchange(workers, 1, true);
      Given in = new Given(List.of(List.of(Row.of(1L, "x", 0.5), Row.of(2L, "y", 1.5))), null);
      Exchange.Routed routed = exchange.route(new Keyed(List.of(in), new int[] {0}, 1));
      assertThat(routed.inputs(0)[0]).isSameAs(in.out(0));
      assertThat(exchange.updatesExchanged()).isZero();
      assertThat(exchange.exchangesSkipped()).isZero();
    }
  }
}
