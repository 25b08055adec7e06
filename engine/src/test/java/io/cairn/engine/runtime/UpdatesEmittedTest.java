package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.ScriptedConnector;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Engine#updatesEmitted()} counts what flows between a dataflow's operators, including a
 * join's output that feeds a reduce and is never arranged: a change to a joined row fans out in
 * it, where {@link Engine#updatesSealed()} sees only the few groups that changed.
 */
class UpdatesEmittedTest {
  private static final Schema ORDERS = Schema.of(Column.of("id", Type.BIGINT), Column.of("customer", Type.BIGINT), Column.of("amount", Type.BIGINT));
  private static final Schema CUSTOMERS = Schema.of(Column.of("cid", Type.BIGINT), Column.of("region", Type.BIGINT));
  private static final TickPolicy POLICY = new TickPolicy(1_000_000, Duration.ZERO);

  @Test
  void aChangedCustomerFansOutThroughTheJoinInTheEmittedCountNotTheSealedOne() {
    List<Rec> orders = new ArrayList<>();
    for (long i = 0; i < 55; i++) {
      // 50 orders of customer 1, 5 of customer 2, each of its own amount (a COUNT(*) alone would let the join
      // hold one row per customer with multiplicity 50, and a move would re-join that one row)
      orders.add(Rec.append(Row.of(i, i < 50 ? 1L : 2L, 100 + i), 1));
    }
    ScriptedConnector c = new ScriptedConnector()
        .script("customers", new Script(CUSTOMERS, List.of(), List.of(
            List.of(Rec.append(Row.of(1L, 10L), 1), Rec.append(Row.of(2L, 20L), 1)),
            List.of(),
            List.of(Rec.append(Row.of(1L, 10L), -1), Rec.append(Row.of(1L, 30L), 1))))) // customer 1 moves to region 30
        .script("orders", new Script(ORDERS, List.of(), List.of(List.of(), orders, List.of())));
    Plan join = Plan.Join.of(new Plan.Get("orders", ORDERS), new Plan.Get("customers", CUSTOMERS), new int[] {1}, new int[] {0});
    Plan byRegion = new Plan.Reduce(join, new int[] {4}, List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.SUM, 2, Type.BIGINT)),
        Schema.of(Column.of("region", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("total", Type.BIGINT)));
    try (Engine e = Engine.builder().workers(2).tickPolicy(POLICY).connector(c).build()) {
      c.release(0);
      e.createSource(1, ScriptedConnector.definition("customers"));
      e.createSource(2, ScriptedConnector.definition("orders"));
      e.createView(3, "by_region", byRegion);
      c.release(2);
      e.tick();
      e.tick();
      assertThat(e.peek("by_region")).containsExactlyInAnyOrder(Row.of(10L, 50L, 6225L), Row.of(20L, 5L, 760L));
      Map<String, Long> emitted = e.updatesEmitted();
      assertThat(emitted).containsOnlyKeys("customers", "orders", "by_region");
      assertThat(emitted.get("orders")).as("each record once, as a row").isEqualTo(55L);
      long emittedBefore = emitted.get("by_region");
      long sealedBefore = e.updatesSealed().get("by_region");

      c.release(3);
      e.tick();
      assertThat(e.peek("by_region")).containsExactlyInAnyOrder(Row.of(30L, 50L, 6225L), Row.of(20L, 5L, 760L));
      long emittedDelta = e.updatesEmitted().get("by_region") - emittedBefore;
      long sealedDelta = e.updatesSealed().get("by_region") - sealedBefore;
      // the two customer records, the join's 50 retractions and 50 insertions, the reduce's changed groups
      assertThat(emittedDelta).as("the move re-joins the customer's 50 orders").isGreaterThanOrEqualTo(2 + 100 + 2);
      assertThat(sealedDelta).as("arranged: the customer row and the two groups, not the orders").isLessThan(20);
    }
  }
}
