package io.cairn.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.RestartStrategy;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.testkit.FlakyConnector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Sources that fail: what is kept, what a snapshot holds, how a source comes back, and that
 * nobody but the ticking thread touches a source's client. The oracle is {@link
 * EngineSmokeTest#oracle}: the view over an uninterrupted read of the same generator.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 2 s; the per-method limits stand
class SourceFailureTest {
  static final TickPolicy POLICY = new TickPolicy(1000, Duration.ZERO);
  static final RestartStrategy FAST = new RestartStrategy(Duration.ofMillis(5), Duration.ofMillis(40), 2, 0.2, 0);

  static Engine engine(FlakyConnector flaky) {
    Engine e = Engine.builder().workers(2).tickPolicy(POLICY).restartStrategy(FAST).connector(flaky).build();
    e.createSource(1, new SourceDefinition("gen", FlakyConnector.NAME, EngineSmokeTest.OPTS, null, null, Envelope.UPSERT));
    e.createView(2, "by_cat", EngineSmokeTest.countByCategory());
    return e;
  }

  static long offset(Engine e) {
    return e.offsets().get("gen").getLong("offset", 0);
  }

  static List<SourceStatus.State> tickUntilCaughtUp(Engine e, int maxTicks) {
    List<SourceStatus.State> seen = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    for (int i = 0; i < maxTicks && System.nanoTime() < deadline; i++) {
      e.tick();
      seen.add(e.sourceStatus("gen").orElseThrow().state());
      if (offset(e) == 20000 && e.caughtUp()) {
        break;
      }
    }
    return seen;
  }

  @Test
  void aRetriableErrorRestartsTheSourceFromItsRecordedOffsetsAndLosesNothing() {
    // poll 3 delivers its 1000 records and then throws: they must be dropped and read again
    FlakyConnector flaky = new FlakyConnector().failPoll(3, true).failPoll(9, true);
    try (Engine e = engine(flaky)) {
      List<SourceStatus.State> seen = tickUntilCaughtUp(e, 10_000);
      assertThat(seen).contains(SourceStatus.State.RESTARTING);
      SourceStatus st = e.sourceStatus("gen").orElseThrow();
      assertThat(st.state()).isEqualTo(SourceStatus.State.RUNNING);
      assertThat(st.error()).contains("injected poll failure");
      assertThat(flaky.opened()).as("re-opened once per failure").isEqualTo(3);
      assertThat(offset(e)).isEqualTo(20000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
    }
  }

  @Test
  void aFatalErrorKeepsTheSourcesStateAtItsOffsetsAndTheSnapshotHoldsBoth() {
    FlakyConnector flaky = new FlakyConnector().failPoll(4, false);
    EngineState snapshot;
    try (Engine e = engine(flaky)) {
      for (int i = 0; i < 10; i++) {
        e.tick();
      }
      SourceStatus st = e.sourceStatus("gen").orElseThrow();
      assertThat(st.state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(st.error()).contains("injected poll failure");
      assertThat(offset(e)).as("offsets stay where the state is").isEqualTo(3000);
      assertThat(e.peek("by_cat")).as("views keep serving").containsExactlyElementsOf(EngineSmokeTest.oracle(3000));
      assertThat(e.caughtUp()).as("a FAILED source has nothing more to deliver").isTrue();
      snapshot = e.capture();
    }
    assertThat(snapshot.arrangements()).extracting(ArrangementState::arrangement).anyMatch(n -> n.startsWith("d000001."));
    assertThat(snapshot.offsets().get("gen").getLong("offset", -1)).isEqualTo(3000);
    // a later start (the problem fixed) resumes from the snapshot: nothing lost, nothing twice
    try (Engine e = engine(new FlakyConnector())) {
      Engine.Restored r = e.restore(snapshot);
      assertThat(r.rereadSources()).isEmpty();
      assertThat(r.recomputedViews()).isEmpty();
      tickUntilCaughtUp(e, 10_000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
    }
  }

  /** Regression (issue 30): a record that fails the same way each time restarted its source forever. */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aRecordThatFailsAgainAtTheSamePositionFailsTheSourceInsteadOfRestartingItForever() {
    FlakyConnector flaky = new FlakyConnector().failAtRecord(2500, true);
    try (Engine e = engine(flaky)) {
      List<SourceStatus.State> seen = new ArrayList<>();
      for (int i = 0; i < 200 && e.sourceStatus("gen").map(st -> st.state() != SourceStatus.State.FAILED).orElse(true); i++) {
        e.tick();
        seen.add(e.sourceStatus("gen").orElseThrow().state());
        sleepMs(2);
      }
      SourceStatus st = e.sourceStatus("gen").orElseThrow();
      assertThat(seen).as("one restart first").contains(SourceStatus.State.RESTARTING);
      assertThat(st.state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(st.error()).contains("injected bad record at offset 2500").contains("the same error at the same position twice");
      assertThat(flaky.opened()).as("opened, then re-opened once").isEqualTo(2);
      assertThat(offset(e)).as("offsets exactly before the record").isEqualTo(2500);
      assertThat(e.peek("by_cat")).as("every record before it applied, once").containsExactlyElementsOf(EngineSmokeTest.oracle(2500));
    }
  }

  /**
   * Regression (issue 30): a fatal error at a record dropped the records read before it in the same
   * tick. They stand now, the offsets are exactly before the record, and a snapshot of that state
   * resumes without losing or repeating a record.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aFatalErrorAtARecordKeepsEveryRecordBeforeItAndTheSnapshotResumesExactly() {
    FlakyConnector flaky = new FlakyConnector().failAtRecord(2500, false);
    EngineState snapshot;
    try (Engine e = engine(flaky)) {
      for (int i = 0; i < 10; i++) {
        e.tick();
      }
      SourceStatus st = e.sourceStatus("gen").orElseThrow();
      assertThat(st.state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(st.error()).contains("injected bad record at offset 2500");
      assertThat(flaky.opened()).isEqualTo(1);
      assertThat(offset(e)).isEqualTo(2500);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(2500));
      snapshot = e.capture();
    }
    assertThat(snapshot.offsets().get("gen").getLong("offset", -1)).isEqualTo(2500);
    try (Engine e = engine(new FlakyConnector())) {
      e.restore(snapshot);
      tickUntilCaughtUp(e, 10_000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
    }
  }

  static void sleepMs(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      throw new AssertionError(ex);
    }
  }

  @Test
  void aSnapshotWithoutASourcesStateReReadsItFromTheBeginningNeverFromItsOffsets() {
    EngineState full;
    try (Engine e = engine(new FlakyConnector())) {
      for (int i = 0; i < 5; i++) {
        e.tick();
      }
      full = e.capture();
    }
    // as a snapshot written without the source's state (as an older build did) would be
    List<ArrangementState> withoutSource =
        full.arrangements().stream().filter(a -> !a.arrangement().startsWith("d000001.")).toList();
    EngineState partial = new EngineState(full.tick(), full.shards(), full.offsets(), withoutSource);
    try (Engine e = engine(new FlakyConnector())) {
      Engine.Restored r = e.restore(partial);
      assertThat(r.rereadSources()).containsExactly("gen");
      assertThat(r.recomputedViews()).as("views over a re-read source are recomputed").containsExactly("by_cat");
      assertThat(offset(e)).isZero();
      tickUntilCaughtUp(e, 10_000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
    }
  }

  @Test
  void aFailedViewIsLeftOutOfTheSnapshotAndRecomputedFromItsInputs() {
    // 100 / (category - 3): fails once category 3 shows up
    Plan failing = new Plan.Map(new Plan.Get("gen", EngineSmokeTest.GEN),
        List.of(Expr.col(0, Type.BIGINT), new Expr.Arith(Expr.ArithOp.DIV, Expr.lit(100L),
            new Expr.Arith(Expr.ArithOp.SUB, Expr.col(1, Type.BIGINT), Expr.lit(3L)))),
        io.cairn.engine.row.Schema.of(io.cairn.engine.row.Column.of("id", Type.BIGINT),
            io.cairn.engine.row.Column.of("q", Type.BIGINT)));
    EngineState snapshot;
    try (Engine e = engine(new FlakyConnector())) {
      e.createView(3, "fragile", failing);
      for (int i = 0; i < 5; i++) {
        e.tick();
      }
      assertThat(e.dataflow("fragile").orElseThrow().state().name()).isEqualTo("FAILED");
      assertThat(e.dataflow("by_cat").orElseThrow().state().name()).isEqualTo("RUNNING");
      snapshot = e.capture();
    }
    assertThat(snapshot.arrangements()).extracting(ArrangementState::arrangement).noneMatch(n -> n.startsWith("d000003."));
    try (Engine e = engine(new FlakyConnector())) {
      e.createView(3, "fragile", failing);
      Engine.Restored r = e.restore(snapshot);
      assertThat(r.recomputedViews()).containsExactly("fragile");
      assertThat(r.rereadSources()).isEmpty();
      tickUntilCaughtUp(e, 10_000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(EngineSmokeTest.oracle(20000));
      assertThat(e.dataflow("fragile").orElseThrow().error()).contains("division by zero");
    }
  }

  @Test
  void seekSourcesReportsAFailedSeekBeforeAnyTick() {
    try (Engine e = engine(new FlakyConnector().failSeek(1, false))) {
      var statuses = e.seekSources();
      assertThat(statuses.get("gen").state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(statuses.get("gen").error()).contains("injected seek failure");
      assertThat(e.lastClosedTick()).isZero();
    }
    try (Engine e = engine(new FlakyConnector().failSeek(1, true))) {
      assertThat(e.seekSources().get("gen").state()).isEqualTo(SourceStatus.State.RESTARTING);
      assertThat(e.caughtUp()).as("a RESTARTING source is not caught up").isFalse();
    }
  }

  @Test
  void readersOfStatusMetricsAndViewsNeverEnterTheSourceClient() throws Exception {
    FlakyConnector flaky = new FlakyConnector();
    Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(200, Duration.ofMillis(5))).connector(flaky).build();
    e.createSource(1, new SourceDefinition("gen", FlakyConnector.NAME,
        java.util.Map.of("keys", "500", "seed", "7", "rate", "20000"), null, null, Envelope.UPSERT));
    e.createView(2, "by_cat", EngineSmokeTest.countByCategory());
    ExecutorService readers = Executors.newFixedThreadPool(4);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong reads = new AtomicLong();
    try {
      e.start();
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        fs.add(readers.submit(() -> {
          while (!stop.get()) {
            e.sourceStatuses();
            e.caughtUp();
            e.metrics();
            e.peek("by_cat");
            reads.incrementAndGet();
          }
          return null;
        }));
      }
      Thread.sleep(1500);
      stop.set(true);
      for (Future<?> f : fs) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      readers.shutdownNow();
      e.close();
    }
    assertThat(reads.get()).as("reads ran").isGreaterThan(100);
    assertThat(flaky.polls()).as("the source was read meanwhile").isGreaterThan(10);
    assertThat(flaky.concurrentAccesses()).isZero();
  }

  @Test
  void anIdleEngineDoesNotSpin() throws Exception {
    try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(1000, Duration.ofMillis(200))).build()) {
      e.start();
      Thread.sleep(1000);
      assertThat(e.metrics().ticks()).as("ticks in 1 s with no source (was ~10,000)").isLessThanOrEqualTo(10);
    }
    // a source that failed for good leaves the engine idle too
    FlakyConnector flaky = new FlakyConnector().failPoll(1, false);
    try (Engine e = Engine.builder().workers(1).tickPolicy(new TickPolicy(1000, Duration.ofMillis(100))).connector(flaky).build()) {
      e.createSource(1, new SourceDefinition("gen", FlakyConnector.NAME, EngineSmokeTest.OPTS, null, null, Envelope.UPSERT));
      e.start();
      Thread.sleep(1000);
      assertThat(e.sourceStatus("gen").orElseThrow().state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(e.metrics().ticks()).isLessThanOrEqualTo(15);
    }
  }

  @Test
  void restartBackoffGrowsToItsCapWithJitterAndHonoursMaxAttempts() {
    RestartStrategy r = new RestartStrategy(Duration.ofMillis(100), Duration.ofSeconds(1), 2, 0.1, 3);
    assertThat(r.backoff(1, 0.5)).isEqualTo(Duration.ofMillis(100));
    assertThat(r.backoff(3, 0.5)).isEqualTo(Duration.ofMillis(400));
    assertThat(r.backoff(10, 0.5)).isEqualTo(Duration.ofSeconds(1));
    assertThat(r.backoff(2, 0.0)).isEqualTo(Duration.ofMillis(180));
    assertThat(r.backoff(2, 0.999999).toMillis()).isBetween(219L, 220L);
    assertThat(r.allows(3)).isTrue();
    assertThat(r.allows(4)).isFalse();
    assertThat(RestartStrategy.DEFAULT.allows(1_000_000)).isTrue();
  }

  @Test
  void pastMaxAttemptsARetriableErrorFailsTheSource() {
    FlakyConnector flaky = new FlakyConnector().failPoll(1, true).failSeek(2, true);
    try (Engine e = Engine.builder().workers(1).tickPolicy(POLICY)
        .restartStrategy(new RestartStrategy(Duration.ZERO, Duration.ofMillis(1), 1, 0, 1)).connector(flaky).build()) {
      e.createSource(1, new SourceDefinition("gen", FlakyConnector.NAME, EngineSmokeTest.OPTS, null, null, Envelope.UPSERT));
      for (int i = 0; i < 5; i++) {
        e.tick();
      }
      SourceStatus st = e.sourceStatus("gen").orElseThrow();
      assertThat(st.state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(st.error()).contains("gave up after 1 restart attempts");
    }
  }

  static Row row(Object... v) {
    return Row.of(v);
  }
}
