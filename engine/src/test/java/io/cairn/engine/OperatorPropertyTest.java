package io.cairn.engine;

import static io.cairn.engine.OperatorScenario.assertSame;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.OperatorScenario.Input;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.testkit.ScriptedConnector;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every operator (map, filter, union, negate, join, reduce with COUNT/SUM/MIN/MAX/AVG, distinct,
 * upsert sources, a view over a view) over random update streams with NULLs and retractions
 * spread over several ticks, compared after every tick with {@link OperatorScenario#oracle}, a
 * recomputation from the full input multisets.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 14 s
class OperatorPropertyTest {

  static final Gen<Input> INPUTS = OperatorScenario.inputs();
  static final Gen<Integer> WORKERS = Gen.of(1, 2, 4);

  /** Operator inputs the exchange left in place (already sharded by the key) and updates it routed, over all runs. */
  static final AtomicLong SKIPPED = new AtomicLong();
  static final AtomicLong EXCHANGED = new AtomicLong();

  /** Runs {@code in} tick by tick on a fresh engine and returns the contents of every collection after each tick. */
  static List<Map<String, Map<Row, Long>>> run(Map<String, Script> scripts, int ticks, int workers) {
    return run(scripts, ticks, Engine.builder().workers(workers));
  }

  /** As {@link #run(Map, int, int)}, on an engine built by {@code b}. */
  static List<Map<String, Map<Row, Long>>> run(Map<String, Script> scripts, int ticks, Engine.Builder b) {
    ScriptedConnector c = OperatorScenario.connector(scripts);
    List<Map<String, Map<Row, Long>>> out = new ArrayList<>();
    try (Engine e = OperatorScenario.engine(c, b)) {
      for (int t = 0; t < ticks; t++) {
        c.release(t + 1);
        e.tick();
        out.add(OperatorScenario.read(e));
      }
      for (Dataflow d : e.dataflows()) {
        assertThat(d.state()).as("state of %s (%s)", d.name(), d.error()).isEqualTo(Dataflow.State.RUNNING);
      }
      SKIPPED.addAndGet(e.metrics().exchangesSkipped());
      EXCHANGED.addAndGet(e.metrics().updatesExchanged());
    }
    return out;
  }

  record InputAndWorkers(Input in, int workers) {}

  @Test
  void everyOperatorMatchesTheOracleAfterEveryTick() {
    Gen<InputAndWorkers> gen = (r, size) -> new InputAndWorkers(INPUTS.next(r, size), WORKERS.next(r, size));
    long skippedBefore = SKIPPED.get();
    long exchangedBefore = EXCHANGED.get();
    Property.tries(150).forAll(gen, c -> {
      Input in = c.in();
      int workers = c.workers();
      Map<String, Script> scripts = OperatorScenario.scripts(in);
      List<Map<String, Map<Row, Long>>> seen = run(scripts, in.ticks(), workers);
      for (int t = 0; t < in.ticks(); t++) {
        assertSame("after tick " + (t + 1) + " with " + workers + " workers", seen.get(t), OperatorScenario.oracle(scripts, t + 1));
      }
    });
    // the runs went through both ways of the exchange: routing, and leaving sharded input in place
    assertThat(EXCHANGED.get() - exchangedBefore).as("updates routed between workers").isPositive();
    assertThat(SKIPPED.get() - skippedBefore).as("operator inputs already sharded by their key").isPositive();
  }

  @Test
  void resultsDoNotDependOnTheNumberOfWorkers() {
    Property.tries(60).forAll(INPUTS, in -> {
      Map<String, Script> scripts = OperatorScenario.scripts(in);
      List<Map<String, Map<Row, Long>>> one = run(scripts, in.ticks(), 1);
      for (int workers : new int[] {2, 4}) {
        List<Map<String, Map<Row, Long>>> many = run(scripts, in.ticks(), workers);
        for (int t = 0; t < in.ticks(); t++) {
          assertSame("after tick " + (t + 1) + ": " + workers + " workers vs 1", many.get(t), one.get(t));
        }
      }
    });
  }

  /**
   * An exchange that routes every keyed input, also those already sharded by the key, gives the
   * results of one that leaves them in place, and leaves none in place.
   */
  @Test
  void routingTheShardedInputsTooGivesTheSameResults() {
    Property.tries(40).forAll(INPUTS, in -> {
      Map<String, Script> scripts = OperatorScenario.scripts(in);
      for (int workers : new int[] {2, 4}) {
        List<Map<String, Map<Row, Long>>> skipping = run(scripts, in.ticks(), workers);
        long skippedBefore = SKIPPED.get();
        List<Map<String, Map<Row, Long>>> routing =
            run(scripts, in.ticks(), Engine.builder().workers(workers).skipPartitionedExchange(false));
        assertThat(SKIPPED.get() - skippedBefore).as("inputs left in place with skipping off").isZero();
        for (int t = 0; t < in.ticks(); t++) {
          assertSame("after tick " + (t + 1) + " with " + workers + " workers: routing all vs skipping", routing.get(t),
              skipping.get(t));
        }
      }
    });
  }

  record CaptureCase(Input in, int workersBefore, int workersAfter, double cutFraction) {}

  /**
   * State captured after tick T and restored into a fresh engine (same or another number of
   * workers), then fed the rest of the stream, equals the uninterrupted run after every tick.
   */
  @Test
  void captureAndRestoreContinueLikeAnUninterruptedRun() {
    Gen<CaptureCase> gen = (r, size) ->
        new CaptureCase(INPUTS.next(r, size), WORKERS.next(r, size), WORKERS.next(r, size), r.nextDouble());
    Property.tries(80).forAll(gen, c -> captureAndRestore(c.in(), c.workersBefore(), c.workersAfter(), c.cutFraction()));
  }

  private static void captureAndRestore(Input in, int workersBefore, int workersAfter, double cutFraction) {
    Map<String, Script> scripts = OperatorScenario.scripts(in);
    int ticks = in.ticks();
    int cut = (int) Math.floor(Math.abs(cutFraction) % 1.0 * (ticks + 1)); // 0..ticks
    List<Map<String, Map<Row, Long>>> uninterrupted = run(scripts, ticks, workersBefore);

    EngineState state;
    ScriptedConnector c1 = OperatorScenario.connector(scripts);
    try (Engine e = OperatorScenario.engine(c1, workersBefore)) {
      for (int t = 0; t < cut; t++) {
        c1.release(t + 1);
        e.tick();
      }
      state = e.capture();
      // the engine keeps running after the capture: the captured batches must not change
      c1.release(ticks);
      e.tick();
    }
    assertThat(state.tick()).isEqualTo(cut);

    ScriptedConnector c2 = OperatorScenario.connector(scripts);
    try (Engine e = OperatorScenario.engine(c2, workersAfter)) {
      e.restore(state);
      if (cut > 0) {
        assertSame("right after restoring tick " + cut, OperatorScenario.read(e), uninterrupted.get(cut - 1));
      }
      for (int t = cut; t < ticks; t++) {
        c2.release(t + 1);
        e.tick();
        assertSame(
            "after tick " + (t + 1) + " (restored at " + cut + ", workers " + workersBefore + " -> " + workersAfter + ")",
            OperatorScenario.read(e),
            uninterrupted.get(t));
      }
    }
  }
}
