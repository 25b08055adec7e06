package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 3.5 s
class RoundTripTest {
  @TempDir Path dir;

  @ParameterizedTest(name = "{0} workers, restored into {1}")
  @CsvSource({"1, 1", "2, 2", "3, 2"})
  void snapshotThenLoadIntoFreshEngineEqualsStateAsOfT(int workers, int restoreWorkers) {
    ObjectStore store = LocalObjectStore.createDirectories(dir.resolve("store"));
    EngineState captured;
    List<io.cairn.engine.row.Row> genAtT;
    List<io.cairn.engine.row.Row> viewAtT;
    SnapshotResult r;
    try (Engine e = Fixtures.engine(workers, 2000, 30_000, 2500);
        Snapshotter s = Snapshotter.builder(store).prefix("node-a").parallelism(3).spillThresholdBytes(32 * 1024).build()) {
      for (int i = 0; i < 6; i++) {
        e.tick();
      }
      genAtT = e.peek("gen");
      viewAtT = e.peek("by_cat");
      var future = s.snapshotAsync(e, () -> 2);
      // the engine keeps running while the upload proceeds
      e.tick();
      e.tick();
      r = future.join();
      captured = null;
      assertThat(r.tick()).isEqualTo(6);
      assertThat(r.catalogPosition()).isEqualTo(2);
      assertThat(r.filesNew()).isEqualTo(r.files()).isPositive();
      assertThat(r.filesReused()).isZero();
      assertThat(r.rows()).isPositive();
      assertThat(r.offsets().get("gen").get("offset")).isEqualTo("15000");
      assertThat(r.capturePause()).isPositive().isLessThan(Duration.ofSeconds(1));
    }
    try (SnapshotReader reader = new SnapshotReader(store, "node-a", 2)) {
      assertThat(reader.list()).singleElement().satisfies(i -> assertThat(i.tick()).isEqualTo(6));
      RecoveryChoice c = reader.loadLatest();
      assertThat(c.rejected()).isEmpty();
      EngineState loaded = c.state().orElseThrow();
      assertThat(loaded.rows()).isEqualTo(r.rows());
      assertThat(c.manifest().orElseThrow().catalogPosition()).isEqualTo(2);
      try (Engine fresh = Fixtures.engine(restoreWorkers, 2000, 30_000, 2500)) {
        fresh.restore(loaded);
        assertThat(fresh.peek("gen")).isEqualTo(genAtT);
        assertThat(fresh.peek("by_cat")).isEqualTo(viewAtT);
        if (restoreWorkers == workers) {
          // every arrangement equal as of T, batch by batch, ids kept
          Fixtures.assertSameState(fresh.capture(), loaded);
        }
        fresh.tickUntilCaughtUp(1000);
        try (Engine oracle = Fixtures.engine(1, 2000, 30_000, 2500)) {
          oracle.tickUntilCaughtUp(1000);
          assertThat(fresh.peek("by_cat")).isEqualTo(oracle.peek("by_cat"));
        }
      }
    }
  }

  @Test
  void loadedStateEqualsCapturedStateBatchByBatch() {
    ObjectStore store = new InMemoryObjectStore();
    try (Engine e = Fixtures.engine(2, 500, 10_000, 1000);
        Snapshotter s = Snapshotter.builder(store).groupRows(0).build();
        SnapshotReader reader = new SnapshotReader(store, "", 4)) {
      for (int i = 0; i < 5; i++) {
        e.tick();
      }
      EngineState captured = e.capture();
      s.snapshot(captured, 2);
      RecoveryChoice c = reader.loadLatest();
      Fixtures.assertSameState(c.state().orElseThrow(), captured);
    }
  }

  @Test
  void secondSnapshotUploadsExactlyTheBatchesTheFirstDidNotHave() {
    ObjectStore store = new InMemoryObjectStore();
    try (Engine e = Fixtures.engine(2, 50_000, 100_000, 5000);
        Snapshotter s = Snapshotter.builder(store).groupRows(0).build()) {
      for (int i = 0; i < 8; i++) {
        e.tick();
      }
      EngineState one = e.capture();
      SnapshotResult first = s.snapshot(one, 2);
      SnapshotResult same = s.snapshot(e.capture(), 2);
      assertThat(same.filesNew()).isZero();
      assertThat(same.filesReused()).isEqualTo(first.files());
      assertThat(same.bytesUploaded()).isLessThan(first.bytesUploaded() / 5);
      java.util.Set<String> before = new java.util.HashSet<>();
      one.arrangements().forEach(a -> a.batches().forEach(b -> before.add(b.id())));
      int covered = 0;
      try (SnapshotReader reader = new SnapshotReader(store, "", 2)) {
        for (int round = 0; round < 4; round++) {
          e.tick();
          EngineState next = e.capture();
          long old = next.arrangements().stream().flatMap(a -> a.batches().stream()).filter(b -> !b.isEmpty() && before.contains(b.id())).count();
          List<io.cairn.engine.trace.Batch> fresh = next.arrangements().stream().flatMap(a -> a.batches().stream())
              .filter(b -> !b.isEmpty() && !before.contains(b.id())).toList();
          SnapshotResult r = s.snapshot(next, 2);
          // unchanged batches are referenced; a new batch is uploaded unless it is a merge of files the last snapshot holds
          assertThat(r.filesReused()).isGreaterThanOrEqualTo((int) old);
          assertThat(r.filesNew()).isLessThanOrEqualTo(fresh.size());
          covered += fresh.size() - r.filesNew();
          long sealedThisTick = fresh.stream().filter(b -> b.description().lower() >= next.tick()).count();
          assertThat(r.filesNew()).isGreaterThanOrEqualTo((int) sealedThisTick);
          // whatever was referenced, the snapshot holds the same collections as of T
          Fixtures.assertSameCollections(reader.load(reader.read(reader.list().get(0))), next);
          next.arrangements().forEach(a -> a.batches().forEach(b -> before.add(b.id())));
        }
      }
      assertThat(covered).as("merged batches referenced through their inputs' files").isPositive();
      // a fresh snapshotter on the same store starts from the newest manifest's files
      try (Snapshotter other = Snapshotter.builder(store).groupRows(0).build()) {
        SnapshotResult again = other.snapshot(e.capture(), 2);
        assertThat(again.filesNew()).isZero();
        assertThat(again.filesReused()).isEqualTo(again.files()).isPositive();
      }
    }
  }

  @Test
  void aLoadedBatchKeepsItsIdSoTheNextSnapshotReferencesItsFile() {
    ObjectStore store = new InMemoryObjectStore();
    EngineState loaded;
    try (Engine e = Fixtures.engine(2, 500, 100_000, 1000); Snapshotter s = Snapshotter.builder(store).build()) {
      for (int i = 0; i < 4; i++) {
        e.tick();
      }
      s.snapshot(e.capture(), 2);
    }
    try (SnapshotReader reader = new SnapshotReader(store, "", 2);
        Engine fresh = Fixtures.engine(2, 500, 100_000, 1000);
        Snapshotter s = Snapshotter.builder(store).build()) {
      RecoveryChoice c = reader.loadLatest();
      fresh.restore(c.state().orElseThrow());
      s.seed(c.manifest().orElseThrow());
      SnapshotResult again = s.snapshot(fresh.capture(), 2);
      assertThat(again.filesNew()).isZero();
      assertThat(again.filesReused()).isEqualTo(again.files()).isPositive();
    }
  }
}
