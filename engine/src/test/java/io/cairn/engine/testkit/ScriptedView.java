package io.cairn.engine.testkit;

import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The check an operator's property test makes: one view over a scripted source {@code s} (append
 * records with diffs, one script tick per engine tick), compared after every tick with an oracle
 * computed from scratch over the input multiset read so far.
 */
public final class ScriptedView {
  private ScriptedView() {}

  /**
   * Runs {@code ticks} of rows of {@code schema} through source {@code s} and view {@code v} (whose
   * plan reads {@code new Plan.Get("s", schema)}) on an engine of {@code workers}, {@code options}
   * applied to its builder; after each tick asserts that the view equals {@code oracle} of the input.
   */
  public static void assertEqualsOracleTickByTick(Schema schema, List<List<Rec>> ticks, int workers,
      UnaryOperator<Engine.Builder> options, Plan view, Function<Map<Row, Long>, Map<Row, Long>> oracle) {
    ScriptedConnector c = new ScriptedConnector().script("s", new Script(schema, List.of(), ticks));
    Engine.Builder b = Engine.builder().workers(workers).tickPolicy(new TickPolicy(1_000_000, Duration.ZERO)).connector(c);
    try (Engine e = options.apply(b).build()) {
      e.createSource(1, ScriptedConnector.definition("s"));
      e.createView(2, "v", view);
      Map<Row, Long> input = new HashMap<>();
      for (int t = 0; t < ticks.size(); t++) {
        c.release(t + 1);
        e.tick();
        for (Rec rec : ticks.get(t)) {
          Multisets.add(input, rec.row(), rec.diff());
        }
        Multisets.assertSame("the view after tick " + (t + 1), Multisets.contents(e, "v"), oracle.apply(input));
      }
    }
  }
}
