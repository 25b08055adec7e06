package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.objectstore.InMemoryObjectStore;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Garbage collection racing snapshots, with the most aggressive policy (keep 1, no daily, no grace):
 * only the pin protocol and the order of GC's listings protect a running snapshot.
 */
class GcRaceTest {

  /** {@code ops}: 0 tick, 1 start a snapshot, 2 collect garbage and load the newest, 3 wait for the running snapshot. */
  record Case(List<Integer> ops, int latencyMs) {}

  @Test
  void gcNeverDeletesWhatTheNewestValidOrARunningSnapshotNeeds() {
    Gen<List<Integer>> opLists = Gen.ints(0, 3).list(6, 14);
    Gen<Integer> latencies = Gen.ints(0, 4);
    Property.tries(12).seed(20261201L)
        .forAll((r, size) -> new Case(opLists.next(r, size), latencies.next(r, size)), c -> gcRace(c.ops(), c.latencyMs()));
  }

  private static void gcRace(List<Integer> ops, int latencyMs) {
    InMemoryObjectStore base = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(base)
        .addLatency(c -> c.kind() == FaultInjectingObjectStore.Kind.PUT, Duration.ofMillis(latencyMs));
    Map<String, EngineState> captured = new HashMap<>();
    try (Engine e = Fixtures.engine(2, 3000, 1_000_000, 700);
        Snapshotter s = Snapshotter.builder(store).parallelism(2).build();
        SnapshotReader reader = new SnapshotReader(base, "", 2)) {
      GarbageCollector gc = new GarbageCollector(store, "", new RetentionPolicy(1, 0, Duration.ZERO), ZoneOffset.UTC, Clock.systemUTC(),
          s::pinnedKeys);
      e.tick();
      CompletableFuture<SnapshotResult> running = null;
      EngineState runningState = null;
      for (int op : ops) {
        switch (op) {
          case 0 -> e.tick();
          case 1 -> {
            if (running == null) {
              runningState = e.capture();
              running = s.snapshotAsync(runningState, 2, Duration.ZERO);
            }
          }
          case 2 -> {
            gc.collect();
            // the newest snapshot always loads completely
            RecoveryChoice c = reader.loadLatest();
            assertThat(c.rejected()).as("rejected after GC").isEmpty();
            EngineState inFlight = runningState;
            // the chosen one is a committed snapshot, or the running one that just committed
            c.chosen().ifPresent(info -> Fixtures.assertSameCollections(c.state().orElseThrow(), captured.getOrDefault(info.key(), inFlight)));
          }
          default -> {
            if (running != null) {
              SnapshotResult r = running.join(); // a snapshot whose files GC deleted would not load below
              captured.put(r.manifestKey(), runningState);
              running = null;
            }
          }
        }
        if (running != null && running.isDone()) {
          SnapshotResult r = running.join();
          captured.put(r.manifestKey(), runningState);
          running = null;
        }
      }
      if (running != null) {
        SnapshotResult r = running.join();
        captured.put(r.manifestKey(), runningState);
      }
      // every snapshot that committed was complete when it committed; the newest still is
      gc.collect();
      RecoveryChoice c = reader.loadLatest();
      assertThat(c.rejected()).isEmpty();
      if (!captured.isEmpty()) {
        Fixtures.assertSameCollections(c.state().orElseThrow(), captured.get(c.chosen().orElseThrow().key()));
        assertThat(reader.list()).hasSize(1);
      }
    }
  }
}
