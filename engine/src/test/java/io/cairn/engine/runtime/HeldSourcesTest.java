package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.testkit.BlockingConnector;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A hot standby's engine: sources whose connector does not allow shared reads are held — never
 * sought or read while the others tick, their offsets kept — until released at takeover; the
 * driver pauses without waking the sources and starts again.
 */
class HeldSourcesTest {

  @Test
  void aHeldSourceIsNotTouchedWhileTheSharedOnesTickAndResumesWhenReleased() throws Exception {
    BlockingConnector blocking = new BlockingConnector(); // not shared: like a Postgres slot
    try (Engine e = Engine.builder().workers(1).connector(blocking).build()) {
      e.createSource(0, new SourceDefinition("gen", "load-generator", Map.of("keys", "50", "limit", "200"), null, List.of(), null));
      e.createSource(1, new SourceDefinition("b", "blocking", Map.of(), null, List.of(), null));
      assertThat(e.holdSources(Engine.Hold.UNSHARED)).containsExactly("b");
      e.createSource(2, new SourceDefinition("b2", "blocking", Map.of(), null, List.of(), null));
      assertThat(e.heldSources()).as("a source created while held is held").containsExactly("b", "b2");

      for (int i = 0; i < 20 && !e.caughtUpExceptHeld(); i++) {
        e.catchUpTick();
      }
      assertThat(e.caughtUpExceptHeld()).as("the shared source read to its end").isTrue();
      assertThat(e.caughtUp()).as("a held source is not caught up").isFalse();
      assertThat(e.offsets().get("gen").values()).containsEntry("offset", "200");
      assertThat(blocking.awaitInPoll(1)).as("the held source was never polled").isFalse();

      e.start();
      assertThat(e.ticking()).isTrue();
      e.pause();
      assertThat(e.ticking()).isFalse();
      assertThat(blocking.woken()).as("pausing wakes no source").isFalse();
      assertThat(e.sourceStatus("gen").orElseThrow().state()).isEqualTo(SourceStatus.State.RUNNING);

      e.releaseHeldSources();
      Thread ticker = new Thread(e::tick, "test-ticker");
      ticker.start();
      assertThat(blocking.awaitInPoll(20)).as("released, the source is sought and polled").isTrue();
      e.wakeSources();
      ticker.join(20_000);
      assertThat(ticker.isAlive()).isFalse();
    }
  }
}
