package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.ObjectInfo;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class GarbageCollectorTest {
  static final class MutableClock extends Clock {
    final AtomicReference<Instant> now;

    MutableClock(Instant start) {
      now = new AtomicReference<>(start);
    }

    void advance(Duration d) {
      now.updateAndGet(t -> t.plus(d));
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now.get();
    }
  }

  @Test
  void retentionKeepsLastNAndOnePerDayAndDeletesOnlyUnreferencedOldFiles() {
    MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
    InMemoryObjectStore store = new InMemoryObjectStore(clock);
    List<SnapshotResult> taken = new ArrayList<>();
    List<EngineState> states = new ArrayList<>();
    try (Engine e = Fixtures.engine(1, 2000, 1_000_000, 800); Snapshotter s = Snapshotter.builder(store).clock(clock).build()) {
      // 5 days, 3 snapshots a day, 8 hours apart
      for (int day = 0; day < 5; day++) {
        for (int k = 0; k < 3; k++) {
          e.tick();
          EngineState st = e.capture();
          states.add(st);
          taken.add(s.snapshot(st, 2));
          clock.advance(Duration.ofHours(8));
        }
      }
      // an orphan from a failed upload, old enough
      store.put("batches/x/orphan.parquet", new byte[] {1, 2, 3});
    }
    clock.advance(Duration.ofHours(2));
    GarbageCollector gc = new GarbageCollector(store, "", new RetentionPolicy(2, 3, Duration.ofHours(1)), ZoneOffset.UTC, clock, Set::of);
    GcResult r = gc.collect();
    // snapshot i was taken at 03-01 10:00 + 8h * i; now is 03-06 12:00.
    // kept: the last 2 (i = 14 on 03-06 02:00, i = 13 on 03-05 18:00) and the newest of 03-04, 03-05, 03-06 (10, 13, 14)
    List<String> expected = List.of(taken.get(14).manifestKey(), taken.get(13).manifestKey(), taken.get(10).manifestKey());
    assertThat(r.kept()).containsExactlyInAnyOrderElementsOf(expected);
    assertThat(r.deletedManifests()).hasSize(15 - 3);
    assertThat(r.deletedFiles()).contains("batches/x/orphan.parquet");
    assertThat(r.invalid()).isEmpty();
    // every kept snapshot still loads completely and equals what was captured
    try (SnapshotReader reader = new SnapshotReader(store, "", 2)) {
      assertThat(reader.list()).extracting(ManifestInfo::key).containsExactlyInAnyOrderElementsOf(expected);
      for (int i : new int[] {14, 13, 10}) {
        ManifestInfo info = reader.list().stream().filter(m -> m.key().equals(taken.get(i).manifestKey())).findFirst().orElseThrow();
        Fixtures.assertSameCollections(reader.load(reader.read(info)), states.get(i));
      }
      // and no batch file is left that no kept manifest references
      Set<String> referenced = new HashSet<>();
      for (ManifestInfo info : reader.list()) {
        reader.read(info).files().forEach(f -> referenced.add(f.path()));
      }
      assertThat(store.list("batches/")).extracting(ObjectInfo::key).containsExactlyInAnyOrderElementsOf(referenced);
    }
    // a second run has nothing left to do
    GcResult again = gc.collect();
    assertThat(again.deletedManifests()).isEmpty();
    assertThat(again.deletedFiles()).isEmpty();
  }

  @Test
  void filesYoungerThanTheGracePeriodAndPinnedFilesAreKept() {
    MutableClock clock = new MutableClock(Instant.parse("2026-03-01T10:00:00Z"));
    InMemoryObjectStore store = new InMemoryObjectStore(clock);
    store.put("batches/a/young.parquet", new byte[] {1});
    store.put("batches/a/pinned.parquet", new byte[] {1});
    clock.advance(Duration.ofMinutes(30));
    store.put("batches/a/younger.parquet", new byte[] {1});
    clock.advance(Duration.ofMinutes(40));
    GcResult r = new GarbageCollector(store, "", new RetentionPolicy(1, 0, Duration.ofHours(1)), ZoneOffset.UTC, clock,
        () -> Set.of("batches/a/pinned.parquet")).collect();
    assertThat(r.deletedFiles()).containsExactly("batches/a/young.parquet");
    assertThat(r.keptUnreferencedFiles()).isEqualTo(2);
  }
}
