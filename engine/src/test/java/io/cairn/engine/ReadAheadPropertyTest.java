package io.cairn.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.testkit.FlakyConnector;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reading ahead (a full tick computes while the ticking thread reads the next tick's records):
 * after every tick the view equals the naive oracle over exactly the records up to {@code
 * offsets(T)} — nothing read ahead leaks into a tick's state or offsets, nothing read ahead is
 * lost when a source fails, restarts or the engine is restored from a capture.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 5 s
class ReadAheadPropertyTest {
  record Case(int workers, int maxRecords, boolean zeroDuration, List<Integer> failingPolls, int captureAtTick) {}

  static Gen<Case> cases() {
    return (r, size) -> {
      List<Integer> faults = new ArrayList<>();
      int n = r.nextInt(4);
      for (int i = 0; i < n; i++) {
        faults.add(1 + r.nextInt(60));
      }
      return new Case(1 + r.nextInt(3), 300 + r.nextInt(2700), r.nextBoolean(), faults, r.nextInt(25));
    };
  }

  static long offset(Engine e) {
    var o = e.offsets().get("gen");
    return o == null ? 0 : o.getLong("offset", 0);
  }

  /** An engine with the default options (reading ahead is on by default) over {@code flaky}. */
  static Engine engine(FlakyConnector flaky, Case c) {
    return engine(flaky, c, Engine.builder());
  }

  static Engine engine(FlakyConnector flaky, Case c, Engine.Builder b) {
    Engine e = b.workers(c.workers())
        .tickPolicy(new TickPolicy(c.maxRecords(), c.zeroDuration() ? Duration.ZERO : Duration.ofMillis(5)))
        .restartStrategy(SourceFailureTest.FAST).connector(flaky).build();
    e.createSource(1, new SourceDefinition("gen", FlakyConnector.NAME, EngineSmokeTest.OPTS, null, null, Envelope.UPSERT));
    e.createView(2, "by_cat", EngineSmokeTest.countByCategory());
    return e;
  }

  @Test
  void everyTicksStateIsTheOracleAtItsOffsetsWithFaultsAndARestore() {
    AtomicLong readAhead = new AtomicLong();
    Property.tries(25).forAll(cases(), c -> {
      FlakyConnector flaky = new FlakyConnector();
      c.failingPolls().forEach(p -> flaky.failPoll(p, true));
      EngineState captured = null;
      try (Engine e = engine(flaky, c)) {
        for (int t = 0; t < c.captureAtTick() && offset(e) < 20000; t++) {
          e.tick();
          assertThat(e.peek("by_cat")).as("tick %d at offset %d", t, offset(e))
              .containsExactlyElementsOf(EngineSmokeTest.oracle(offset(e)));
        }
        captured = e.capture();
        readAhead.addAndGet(e.metrics().recordsReadAhead());
        assertThat(flaky.concurrentAccesses()).as("only the ticking thread uses the source").isZero();
      }
      FlakyConnector again = new FlakyConnector();
      try (Engine e = engine(again, c)) {
        e.restore(captured);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!(offset(e) == 20000 && e.caughtUp()) && System.nanoTime() < deadline) {
          e.tick();
          assertThat(e.peek("by_cat")).as("after restore, offset %d", offset(e))
              .containsExactlyElementsOf(EngineSmokeTest.oracle(offset(e)));
        }
        assertThat(offset(e)).isEqualTo(20000);
        assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
        readAhead.addAndGet(e.metrics().recordsReadAhead());
        assertThat(again.concurrentAccesses()).isZero();
      }
    });
    assertThat(readAhead.get()).as("records read ahead over all tries: the path under test ran").isPositive();
  }

  @Test
  void aSourceFailingWhileReadingAheadKeepsTheComputedTickAndReadsTheRestAgain() {
    // tick 1: poll 1 fills the tick (1,000 records); poll 2 reads ahead, delivers and throws.
    // Whether the read-ahead poll runs before the tick's computation ends is up to the scheduler
    // (on a loaded machine the compute thread may finish first): try again until it did.
    for (int attempt = 1; attempt <= 20; attempt++) {
      FlakyConnector flaky = new FlakyConnector().failPoll(2, true);
      Case c = new Case(2, 1000, true, List.of(), 0);
      try (Engine e = engine(flaky, c)) {
        e.tick();
        if (flaky.polls() == 1) {
          continue; // the computation ended before the read-ahead polled
        }
        assertReadAheadFailure(e, flaky);
        return;
      }
    }
    org.junit.jupiter.api.Assertions.fail("in 20 tries the read-ahead never polled while tick 1 computed");
  }

  private static void assertReadAheadFailure(Engine e, FlakyConnector flaky) {
    assertThat(flaky.polls()).as("the second poll was the read-ahead one").isEqualTo(2);
    assertThat(offset(e)).as("offsets(1) are those of the computed tick").isEqualTo(1000);
    assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(1000));
    assertThat(e.sourceStatus("gen").orElseThrow().state()).isEqualTo(SourceStatus.State.RESTARTING);
    assertThat(e.sourceStatus("gen").orElseThrow().error()).contains("injected poll failure");
    SourceFailureTest.tickUntilCaughtUp(e, 10_000);
    assertThat(flaky.opened()).as("re-opened once").isEqualTo(2);
    assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
  }

  @Test
  void aSourceIsNotCaughtUpWhileWhatItReadAheadIsNotApplied() {
    Case c = new Case(1, 1000, true, List.of(), 0);
    try (Engine e = engine(new FlakyConnector(), c)) {
      long ticks = 0;
      while (!e.caughtUp()) {
        e.tick();
        ticks++;
        assertThat(ticks).isLessThan(100);
      }
      assertThat(e.metrics().recordsReadAhead()).isPositive();
      assertThat(offset(e)).as("caught up means applied").isEqualTo(20000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
    }
  }

  @Test
  void withReadAheadOffATickReadsOnlyItsOwnRecords() {
    Case c = new Case(2, 1000, true, List.of(), 0);
    FlakyConnector flaky = new FlakyConnector();
    try (Engine e = engine(flaky, c, Engine.builder().readAhead(false))) {
      long ticks = 0;
      while (!e.caughtUp()) {
        e.tick();
        ticks++;
        assertThat(ticks).isLessThan(100);
        assertThat(flaky.polls()).as("one poll per full tick, none ahead").isEqualTo(ticks);
        assertThat(e.peek("by_cat")).as("tick %d", ticks).containsExactlyElementsOf(EngineSmokeTest.oracle(offset(e)));
      }
      assertThat(e.metrics().recordsReadAhead()).isZero();
      assertThat(offset(e)).isEqualTo(20000);
    }
  }
}
