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
import java.util.ArrayList;

/**
 * Two writers on one store, as during an overlapping deploy before fencing stops the old one:
 * each takes snapshots and runs its own garbage collection with the most aggressive retention
 * (keep 1, no daily), and neither knows the other's pins. GC must never delete a file that any
 * manifest in the store references, whichever writer wrote it: it re-lists the manifests right
 * before deleting, and the grace period covers the other writer's files uploaded but not yet
 * referenced by a manifest. After every step every manifest in the store verifies.
 *
 * <p>The grace period is what protects the other writer's files in flight: run with {@code
 * -Dcairn.test.grace-seconds=0} and this property fails within a few tries (a manifest commits
 * referencing a file the other writer's GC deleted). Fencing keeps two writers from overlapping
 * in the first place; the grace period ({@code snapshots.retention.gc-grace}, 1 h) must exceed the
 * longest upload.
 */
class TwoWriterGcRaceTest {

  /** {@code ops}: writer (0/1) × (0 tick, 1 start a snapshot, 2 collect garbage, 3 wait for its snapshot). */
  record Case(List<Integer> ops, int latencyMs) {}

  @Test
  void noManifestOfEitherWriterLosesAFile() {
    Gen<List<Integer>> opLists = Gen.ints(0, 7).list(8, 20);
    Gen<Integer> latencies = Gen.ints(0, 3);
    Property.tries(10).forAll((r, size) -> new Case(opLists.next(r, size), latencies.next(r, size)), c -> race(c.ops(), c.latencyMs()));
  }

  private static void race(List<Integer> ops, int latencyMs) {
    InMemoryObjectStore base = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(base)
        .addLatency(c -> c.kind() == FaultInjectingObjectStore.Kind.PUT, Duration.ofMillis(latencyMs));
    RetentionPolicy aggressive = new RetentionPolicy(1, 0, Duration.ofSeconds(Long.getLong("cairn.test.grace-seconds", 30))); // grace: far above any upload here
    try (Engine e0 = Fixtures.engine(2, 3000, 1_000_000, 700);
        Engine e1 = Fixtures.engine(1, 3000, 1_000_000, 500);
        Snapshotter s0 = Snapshotter.builder(store).parallelism(2).build();
        Snapshotter s1 = Snapshotter.builder(store).parallelism(2).build();
        SnapshotReader reader = new SnapshotReader(base, "", 2)) {
      Engine[] engines = {e0, e1};
      Snapshotter[] writers = {s0, s1};
      GarbageCollector[] gcs = {
          new GarbageCollector(store, "", aggressive, ZoneOffset.UTC, Clock.systemUTC(), s0::pinnedKeys),
          new GarbageCollector(store, "", aggressive, ZoneOffset.UTC, Clock.systemUTC(), s1::pinnedKeys)};
      List<CompletableFuture<SnapshotResult>> running = new ArrayList<>(java.util.Arrays.asList(null, null));
      e0.tick();
      e1.tick();
      int started = 0;
      for (int op : ops) {
        int w = op / 4;
        switch (op % 4) {
          case 0 -> engines[w].tick();
          case 1 -> {
            if (running.get(w) == null) {
              running.set(w, writers[w].snapshotAsync(engines[w].capture(), 2, Duration.ZERO));
              started++;
            }
          }
          case 2 -> gcs[w].collect();
          default -> {
            if (running.get(w) != null) {
              running.get(w).join();
              running.set(w, null);
            }
          }
        }
        assertEveryManifestVerifies(reader);
      }
      for (CompletableFuture<SnapshotResult> r : running) {
        if (r != null) {
          r.join();
        }
      }
      gcs[0].collect();
      gcs[1].collect();
      assertEveryManifestVerifies(reader);
      if (started > 0) {
        assertThat(reader.list()).as("a committed snapshot is kept").isNotEmpty();
      }
    }
  }

  private static void assertEveryManifestVerifies(SnapshotReader reader) {
    for (ManifestInfo i : reader.list()) {
      Manifest m;
      try {
        m = reader.read(i);
      } catch (RuntimeException deletedMeanwhile) {
        continue; // retention removed it between list and read: not a loss
      }
      assertThat(reader.verify(m, SnapshotReader.Verification.FULL)).as("problems of %s", i.key()).isEmpty();
    }
  }
}
