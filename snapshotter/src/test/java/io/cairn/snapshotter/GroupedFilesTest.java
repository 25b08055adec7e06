package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.Manifest.BatchFile;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Small batches of an arrangement shard stored together as one file (issue 14: "small batches are
 * grouped so tiny files do not dominate request counts"), and files reused when the engine's
 * batches and the last snapshot's files are cut differently but hold the same updates.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 4.4 s
class GroupedFilesTest {

  private static long nonEmptyBatches(EngineState st) {
    return st.arrangements().stream().flatMap(a -> a.batches().stream()).filter(b -> !b.isEmpty()).count();
  }

  @Test
  void smallBatchesAreStoredAsFewerFilesThatLoadAsTheSameCollections() {
    ObjectStore grouped = new InMemoryObjectStore();
    ObjectStore single = new InMemoryObjectStore();
    EngineState captured;
    SnapshotResult g;
    SnapshotResult one;
    try (Engine e = Fixtures.engine(2, 50_000, 100_000, 5000);
        Snapshotter s = Snapshotter.builder(grouped).build();
        Snapshotter t = Snapshotter.builder(single).groupRows(0).build()) {
      for (int i = 0; i < 9; i++) {
        e.tick();
      }
      captured = e.capture();
      g = s.snapshot(captured, 2);
      one = t.snapshot(captured, 2);
    }
    long batches = nonEmptyBatches(captured);
    assertThat(one.files()).as("one file per batch without grouping").isEqualTo((int) batches);
    // every batch here is small: at most one file per arrangement shard
    assertThat(g.files()).isLessThanOrEqualTo(captured.arrangements().size()).isLessThan(one.files());
    assertThat(g.rows()).as("grouping merges no update away (their times differ)").isEqualTo(one.rows());
    try (SnapshotReader reader = new SnapshotReader(grouped, "", 2)) {
      RecoveryChoice c = reader.loadLatest();
      assertThat(c.rejected()).isEmpty();
      EngineState loaded = c.state().orElseThrow();
      Fixtures.assertSameCollections(loaded, captured);
      // restored and run on, the view equals one computed from scratch
      try (Engine fresh = Fixtures.engine(2, 50_000, 100_000, 5000); Engine oracle = Fixtures.engine(1, 50_000, 100_000, 5000)) {
        fresh.restore(loaded);
        fresh.tickUntilCaughtUp(1000);
        oracle.tickUntilCaughtUp(1000);
        assertThat(fresh.peek("by_cat")).isEqualTo(oracle.peek("by_cat"));
      }
    }
  }

  @Test
  void anUnchangedStateUploadsNoFileAgainEvenFromAFreshSnapshotter() {
    ObjectStore store = new InMemoryObjectStore();
    try (Engine e = Fixtures.engine(2, 50_000, 100_000, 5000); Snapshotter s = Snapshotter.builder(store).build()) {
      for (int i = 0; i < 9; i++) {
        e.tick();
      }
      SnapshotResult first = s.snapshot(e.capture(), 2);
      assertThat(first.files()).isLessThan((int) nonEmptyBatches(e.capture()));
      SnapshotResult same = s.snapshot(e.capture(), 2);
      assertThat(same.filesNew()).as("the grouped files are referenced: the batches they hold have not changed").isZero();
      assertThat(same.filesReused()).isEqualTo(first.files());
      try (Snapshotter other = Snapshotter.builder(store).build()) {
        SnapshotResult again = other.snapshot(e.capture(), 2);
        assertThat(again.filesNew()).isZero();
        assertThat(again.filesReused()).isEqualTo(first.files());
      }
    }
  }

  @Test
  void snapshotsBetweenTicksHoldTheCollectionsAndReferenceGroupedFilesWhileTheirBatchesLast() {
    ObjectStore store = new InMemoryObjectStore();
    int groupsReferenced = 0;
    try (Engine e = Fixtures.engine(2, 200_000, 400_000, 4000);
        // groups of at most 16k rows: the older batches outgrow them, the newer ones are grouped
        Snapshotter s = Snapshotter.builder(store).groupRows(16_384).build();
        SnapshotReader reader = new SnapshotReader(store, "", 2)) {
      for (int i = 0; i < 12; i++) {
        e.tick();
      }
      // a grouped file has an id of its own: no batch of the engine ever had it (a batch stored
      // alone keeps its id, and so do the files a later merge is referenced through)
      Set<String> everBatch = new HashSet<>();
      EngineState first = e.capture();
      first.arrangements().forEach(a -> a.batches().forEach(b -> everBatch.add(b.id())));
      s.snapshot(first, 2);
      for (int round = 0; round < 12; round++) {
        e.tick();
        if (round % 3 == 0) {
          e.tick();
        }
        EngineState next = e.capture();
        next.arrangements().forEach(a -> a.batches().forEach(b -> everBatch.add(b.id())));
        Manifest before = reader.read(reader.list().get(0));
        Set<String> groupsBefore = new HashSet<>();
        for (BatchFile f : before.files()) {
          if (f.path() != null && !everBatch.contains(f.id())) {
            groupsBefore.add(f.id());
          }
        }
        SnapshotResult r = s.snapshot(next, 2);
        Manifest m = reader.read(reader.list().get(0));
        assertThat(m.snapshotId()).isEqualTo(r.snapshotId());
        for (BatchFile f : m.files()) {
          if (groupsBefore.contains(f.id())) {
            groupsReferenced++;
          }
        }
        // whatever was grouped or referenced, the snapshot holds the same collections as of T
        Fixtures.assertSameCollections(reader.load(m), next);
        assertThat(r.filesNew()).isLessThanOrEqualTo((int) nonEmptyBatches(next));
      }
    }
    assertThat(groupsReferenced).as("a file holding several batches referenced again by a later snapshot").isPositive();
  }

  @Test
  void aBatchStartingBeforeTheGroupsLastTimeStartsAnotherGroupAndTheFilesKeepTheSpinesOrder() {
    // [0, 5) compacted to since 14: its update now has time 14, as has the one of [10, 15);
    // merged, the two would consolidate into one row and the file would hold fewer rows than planned
    Batch compacted = OneRowCountTest.batch(0, 5, 14, 1, 1);
    Batch young = OneRowCountTest.batch(10, 15, 14, 1, 1);
    Batch y1 = OneRowCountTest.batch(20, 21, 20, 2, 1);
    // too large to join (groups of 6 rows take batches of at most 3), though the group has room for
    // its rows: it goes after the pending group
    Batch big = OneRowCountTest.batch(22, 24, 23, 3, 1, 5, 1, 6, 1, 7, 1);
    // compacted past its upper, but after every time before it: it may join (here, a group of its own)
    Batch late = OneRowCountTest.batch(24, 25, 30, 4, 1);
    try (InMemoryObjectStore store = new InMemoryObjectStore();
        Snapshotter s = Snapshotter.builder(store).encodeExecutor(Runnable::run).groupRows(6).build();
        SnapshotReader reader = new SnapshotReader(store, "", Runnable::run, 1)) {
      SnapshotResult r = s.snapshot(OneRowCountTest.state(31, compacted, young, y1, big, late), 1);
      Manifest m = reader.read(reader.list().get(0));
      List<Long> lowers = m.arrangements().get(0).batches().stream().map(BatchFile::lower).toList();
      assertThat(lowers).as("compacted | young+y1 | big | late, in the spine's order").containsExactly(0L, 10L, 22L, 24L);
      assertThat(r.files()).isEqualTo(4);
      assertThat(m.rows()).isEqualTo(r.rows()).isEqualTo(8);
      assertThat(Fixtures.collection(reader.load(m).arrangements().get(0))).containsExactly(
          java.util.Map.entry("[1]|[0]", 2L), java.util.Map.entry("[2]|[0]", 1L), java.util.Map.entry("[3]|[0]", 1L),
          java.util.Map.entry("[4]|[0]", 1L), java.util.Map.entry("[5]|[0]", 1L), java.util.Map.entry("[6]|[0]", 1L),
          java.util.Map.entry("[7]|[0]", 1L));
    }
    // a compacted batch whose times end before the next one starts is grouped with it
    Batch old = OneRowCountTest.batch(0, 5, 8, 1, 1);
    Batch next = OneRowCountTest.batch(10, 11, 10, 1, 1);
    try (InMemoryObjectStore store = new InMemoryObjectStore(); Snapshotter s = Snapshotter.builder(store).encodeExecutor(Runnable::run).build()) {
      SnapshotResult r = s.snapshot(OneRowCountTest.state(12, old, next), 1);
      assertThat(r.files()).isEqualTo(1);
      assertThat(r.rows()).isEqualTo(2);
    }
  }

  @Test
  void aManifestListingAShardsFilesOutOfTimeOrderDoesNotLoad() {
    try (InMemoryObjectStore store = new InMemoryObjectStore();
        Snapshotter s = Snapshotter.builder(store).encodeExecutor(Runnable::run).groupRows(0).build();
        SnapshotReader reader = new SnapshotReader(store, "", Runnable::run, 1)) {
      s.snapshot(OneRowCountTest.state(9, OneRowCountTest.batch(0, 5, 0, 1, 1), OneRowCountTest.batch(5, 9, 5, 2, 1)), 1);
      Manifest m = reader.read(reader.list().get(0));
      assertThat(reader.load(m).rows()).isEqualTo(2);
      Manifest.ArrangementEntry a = m.arrangements().get(0);
      Manifest swapped = new Manifest(m.formatVersion(), m.snapshotId(), m.tick(), m.createdAt(), m.catalogPosition(), m.shards(),
          m.offsets(), List.of(new Manifest.ArrangementEntry(a.name(), a.shard(), a.upper(), a.keySchema(), a.valSchema(),
              a.schemaFingerprint(), List.of(a.batches().get(1), a.batches().get(0)))), m.catalogHash(), m.epoch(), m.views());
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> reader.load(swapped))
          .isInstanceOf(io.cairn.snapshotter.exceptions.CorruptSnapshotException.class)
          .hasMessageContaining("arrangement arr shard 0").hasMessageContaining("not in time order");
    }
  }

  private static BatchFile file(long lower, long upper, long rows) {
    return new BatchFile("f" + lower + "-" + upper, "batches/a/f" + lower + ".parquet", rows, 100, "crc32c:00000000", lower, upper, 0);
  }

  private static Batch batch(long lower, long upper) {
    return OneRowCountTest.batch(lower, upper, lower, lower, 1, lower + 1000, 1);
  }

  @Test
  void theSameUpdatesAreRunsWithTheSameOuterBoundsHoweverTheyAreCut() {
    List<BatchFile> twoFiles = List.of(file(10, 13, 2), file(13, 16, 2));
    List<BatchFile> oneGroup = List.of(file(10, 16, 4));
    // one merged batch, two files
    Snapshotter.Segment s = Snapshotter.sameUpdates(twoFiles, List.of(batch(10, 16)), 0);
    assertThat(s.files()).isEqualTo(twoFiles);
    assertThat(s.batches()).isEqualTo(1);
    // two batches, one grouped file; the run starts at the second engine batch
    s = Snapshotter.sameUpdates(oneGroup, List.of(batch(5, 10), batch(10, 13), batch(13, 16), batch(16, 19)), 1);
    assertThat(s.files()).isEqualTo(oneGroup);
    assertThat(s.batches()).isEqualTo(2);
    // cut differently inside, the same outer bounds
    s = Snapshotter.sameUpdates(List.of(file(10, 14, 2), file(14, 16, 2)), List.of(batch(10, 13), batch(13, 16)), 0);
    assertThat(s.files()).hasSize(2);
    assertThat(s.batches()).isEqualTo(2);
    // no run ends where the batches end, or none starts where they start
    assertThat(Snapshotter.sameUpdates(List.of(file(10, 14, 2)), List.of(batch(10, 13), batch(13, 16)), 0)).isNull();
    assertThat(Snapshotter.sameUpdates(twoFiles, List.of(batch(11, 13)), 0)).isNull();
    assertThat(Snapshotter.sameUpdates(null, List.of(batch(10, 13)), 0)).isNull();
    // files much larger than the batches (a merge that cancelled most updates) are not referenced
    assertThat(Snapshotter.sameUpdates(List.of(file(10, 16, 5000)), List.of(batch(10, 16)), 0)).isNull();
  }
}
