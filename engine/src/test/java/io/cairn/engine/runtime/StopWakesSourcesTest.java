package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.testkit.BlockingConnector;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Stopping the engine while a tick is blocked inside a source (a Kafka call waiting out its
 * request timeout with the broker gone) wakes the source up, so the stop does not wait for the
 * call's own timeout; and the wake-up comes from another thread while the tick holds the engine
 * lock, so it must not need that lock.
 */
class StopWakesSourcesTest {

  @Test
  void wakingTheSourcesEndsABlockedTickAndTheSourceRestarts() throws Exception {
    BlockingConnector blocking = new BlockingConnector();
    try (Engine e = Engine.builder().workers(1).connector(blocking).build()) {
      e.createSource(0, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
      Thread ticker = new Thread(e::tick, "test-ticker");
      ticker.start();
      assertThat(blocking.awaitInPoll(20)).as("the tick entered the source's poll").isTrue();
      e.wakeSources();
      ticker.join(20_000);
      assertThat(ticker.isAlive()).as("the tick ended once the source was woken up").isFalse();
      assertThat(e.sourceStatus("b").orElseThrow().state()).isEqualTo(SourceStatus.State.RESTARTING);
      assertThat(e.sourceStatus("b").orElseThrow().error()).contains("woken up");
    }
  }

  @Test
  void metricsAnswerAtOnceWhileATickHoldsTheEngineLock() throws Exception {
    BlockingConnector blocking = new BlockingConnector();
    try (Engine e = Engine.builder().workers(1).connector(blocking).build()) {
      e.createSource(0, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
      long bytes = e.metrics().arrangementBytes();
      Thread ticker = new Thread(e::tick, "test-ticker");
      ticker.start();
      assertThat(blocking.awaitInPoll(20)).as("the tick entered the source's poll").isTrue();
      long t0 = System.nanoTime();
      Engine.Metrics m = e.metrics(); // a /metrics scrape: the tick holds the engine lock for up to a minute
      long millis = (System.nanoTime() - t0) / 1_000_000;
      assertThat(ticker.isAlive()).as("the tick is still blocked in the source").isTrue();
      assertThat(millis).as("metrics did not wait for the tick").isLessThan(1_000);
      assertThat(m.ticks()).as("figures as of the last closed tick").isZero();
      assertThat(m.arrangementBytes()).isEqualTo(bytes);
      e.wakeSources();
      ticker.join(20_000);
      assertThat(e.metrics().ticks()).as("published when the tick closed").isEqualTo(1);
    }
  }

  @Test
  void stopWakesASourceBlockedInATick() throws Exception {
    BlockingConnector blocking = new BlockingConnector();
    Engine e = Engine.builder().workers(1).connector(blocking).build();
    e.createSource(0, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
    e.start();
    assertThat(blocking.awaitInPoll(20)).as("the tick entered the source's poll").isTrue();
    long t0 = System.nanoTime();
    e.close();
    long millis = (System.nanoTime() - t0) / 1_000_000;
    assertThat(blocking.woken()).as("the source was woken up").isTrue();
    assertThat(millis).as("close returned without waiting for the poll's own minute").isLessThan(20_000);
  }
}
