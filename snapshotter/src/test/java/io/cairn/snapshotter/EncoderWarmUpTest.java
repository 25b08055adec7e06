package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.InMemoryObjectStore;
import org.junit.jupiter.api.Test;

/** {@link Snapshotter#warmUp} encodes without touching the store, and snapshots after it are as before. */
class EncoderWarmUpTest {
  @Test
  void warmingUpWritesNothingAndASnapshotAfterItLoadsBack() {
    try (InMemoryObjectStore store = new InMemoryObjectStore();
        Snapshotter s = Snapshotter.builder(store).prefix("p").build();
        SnapshotReader reader = new SnapshotReader(store, "p", Runnable::run, 1)) {
      assertThat(s.warmUp(20_000, 2)).isNotNegative();
      assertThat(store.list("")).as("objects written by the warm-up").isEmpty();
      s.snapshot(OneRowCountTest.state(5, OneRowCountTest.batch(0, 6, 0, 1, 1, 2, 1, 3, 1)), 1);
      EngineState loaded = reader.loadLatest().state().orElseThrow();
      assertThat(loaded.arrangements().get(0).batches().stream().mapToLong(b -> b.size()).sum()).isEqualTo(3);
    }
  }
}
