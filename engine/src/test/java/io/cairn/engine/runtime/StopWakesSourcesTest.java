package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceException;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Stopping the engine while a tick is blocked inside a source (a Kafka call waiting out its
 * request timeout with the broker gone) wakes the source up, so the stop does not wait for the
 * call's own timeout; and the wake-up comes from another thread while the tick holds the engine
 * lock, so it must not need that lock.
 */
class StopWakesSourcesTest {

  /** A source whose polls block until woken up (or a minute passes). */
  static final class Blocking implements SourceConnector {
    final CountDownLatch inPoll = new CountDownLatch(1);
    final CountDownLatch woken = new CountDownLatch(1);

    @Override
    public String name() {
      return "blocking";
    }

    @Override
    public SourceDefinition validate(SourceDefinition d) {
      return new SourceDefinition(d.name(), d.connector(), d.options(), Schema.parse("k BIGINT"), List.of(), d.envelope());
    }

    @Override
    public Source open(SourceDefinition d, Secrets secrets) {
      return new Source() {
        @Override
        public Schema schema() {
          return Schema.parse("k BIGINT");
        }

        @Override
        public List<String> primaryKey() {
          return List.of();
        }

        @Override
        public void seek(SourceOffsets offsets) {}

        @Override
        public int poll(SourceOutput out, int maxRecords, Duration timeout) {
          inPoll.countDown();
          try {
            if (woken.await(60, TimeUnit.SECONDS)) {
              throw new SourceException("woken up", true);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return 0;
        }

        @Override
        public SourceOffsets position() {
          return SourceOffsets.EMPTY;
        }

        @Override
        public boolean caughtUp() {
          return false;
        }

        @Override
        public LoadMeter meter() {
          return Map::of;
        }

        @Override
        public void wakeup() {
          woken.countDown();
        }

        @Override
        public void close() {}
      };
    }
  }

  @Test
  void wakingTheSourcesEndsABlockedTickAndTheSourceRestarts() throws Exception {
    Blocking blocking = new Blocking();
    try (Engine e = Engine.builder().workers(1).connector(blocking).build()) {
      e.createSource(0, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
      Thread ticker = new Thread(e::tick, "test-ticker");
      ticker.start();
      assertThat(blocking.inPoll.await(20, TimeUnit.SECONDS)).as("the tick entered the source's poll").isTrue();
      e.wakeSources();
      ticker.join(20_000);
      assertThat(ticker.isAlive()).as("the tick ended once the source was woken up").isFalse();
      assertThat(e.sourceStatus("b").orElseThrow().state()).isEqualTo(SourceStatus.State.RESTARTING);
      assertThat(e.sourceStatus("b").orElseThrow().error()).contains("woken up");
    }
  }

  @Test
  void stopWakesASourceBlockedInATick() throws Exception {
    Blocking blocking = new Blocking();
    Engine e = Engine.builder().workers(1).connector(blocking).build();
    e.createSource(0, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
    e.start();
    assertThat(blocking.inPoll.await(20, TimeUnit.SECONDS)).as("the tick entered the source's poll").isTrue();
    long t0 = System.nanoTime();
    e.close();
    long millis = (System.nanoTime() - t0) / 1_000_000;
    assertThat(blocking.woken.getCount()).as("the source was woken up").isZero();
    assertThat(millis).as("close returned without waiting for the poll's own minute").isLessThan(20_000);
  }
}
