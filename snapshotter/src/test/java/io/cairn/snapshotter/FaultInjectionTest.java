package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.snapshotter.exceptions.SnapshotFailedException;
import io.cairn.snapshotter.exceptions.SnapshotInProgressException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class FaultInjectionTest {

  private static Set<String> keys(InMemoryObjectStore s, String prefix) {
    return s.list(prefix).stream().map(ObjectInfo::key).collect(Collectors.toSet());
  }

  @Test
  void aFailureAtEverySingleRequestLeavesNoNewSnapshotThePreviousIntactAndTheEngineRunning() {
    InMemoryObjectStore base = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(base);
    try (Engine e = Fixtures.engine(2, 5000, 1_000_000, 2000);
        Snapshotter s = Snapshotter.builder(store).prefix("p").parallelism(2).build();
        SnapshotReader reader = new SnapshotReader(base, "p", 2)) {
      for (int i = 0; i < 4; i++) {
        e.tick();
      }
      EngineState first = e.capture();
      SnapshotResult previous = s.snapshot(first, 2);
      e.tick();
      // count the requests of a clean second snapshot (as a dry run on a copy of the state)
      EngineState second = e.capture();
      long before = store.calls();
      Set<String> batchesBefore = keys(base, "p/batches/");
      SnapshotResult probe;
      try (Snapshotter dry = Snapshotter.builder(FaultInjectingObjectStore.wrap(new InMemoryObjectStore())).build()) {
        dry.seed(reader.read(reader.list().get(0)));
        probe = dry.snapshot(second, 2);
      }
      int requests = probe.filesNew() + 1; // one PUT per new file, one PUT_IF_ABSENT for the manifest
      assertThat(store.calls()).isEqualTo(before);
      assertThat(probe.filesNew()).isPositive();
      int failures = 0;
      for (int n = 1; n <= requests; n++) {
        long target = store.calls() + n;
        store.clearFaults().failNthCall(target);
        assertThatThrownBy(() -> s.snapshot(second, 2)).isInstanceOf(SnapshotFailedException.class);
        failures++;
        store.clearFaults();
        // no new snapshot is visible; the previous one is intact and is what recovery picks
        assertThat(reader.list()).singleElement().satisfies(i -> assertThat(i.key()).isEqualTo(previous.manifestKey()));
        RecoveryChoice c = reader.loadLatest();
        assertThat(c.rejected()).isEmpty();
        Fixtures.assertSameState(c.state().orElseThrow(), first);
        // files of the failed attempt were removed (the failure was known), none of the previous snapshot's
        assertThat(keys(base, "p/batches/")).containsAll(batchesBefore);
        if (n < requests) {
          assertThat(keys(base, "p/batches/")).isEqualTo(batchesBefore);
        }
        // the engine keeps running
        long t = e.tick();
        assertThat(e.lastClosedTick()).isEqualTo(t);
      }
      assertThat(failures).isEqualTo(requests);
      assertThat(store.injectedFailures()).isEqualTo(requests);
      // with no fault the same snapshot commits
      SnapshotResult ok = s.snapshot(second, 2);
      assertThat(reader.list().get(0).key()).isEqualTo(ok.manifestKey());
      Fixtures.assertSameCollections(reader.loadLatest().state().orElseThrow(), second);
    }
  }

  @Test
  void aManifestWriteThatFailsAfterTheObjectLandedStillCommits() {
    InMemoryObjectStore base = new InMemoryObjectStore();
    // the manifest write "times out" after the store kept it
    try (Engine e = Fixtures.engine(1, 100, 1000, 500);
        Snapshotter s = Snapshotter.builder(new LandThenFail(base)).build();
        SnapshotReader reader = new SnapshotReader(base, "", 1)) {
      e.tick();
      SnapshotResult r = s.snapshot(e.capture(), 2);
      assertThat(reader.latestValid(SnapshotReader.Verification.FULL).chosen().orElseThrow().key()).isEqualTo(r.manifestKey());
    }
  }

  /** A store whose putIfAbsent stores the object and then throws, as a lost response would. */
  static final class LandThenFail extends DelegatingStore {
    LandThenFail(InMemoryObjectStore d) {
      super(d);
    }

    @Override
    public void putIfAbsent(String key, byte[] bytes) {
      super.putIfAbsent(key, bytes);
      throw new io.cairn.objectstore.exceptions.StoreUnavailableException("Cannot create " + key + ": response lost");
    }
  }

  @Test
  void noTwoSnapshotsAtOnce() throws Exception {
    InMemoryObjectStore base = new InMemoryObjectStore();
    FaultInjectingObjectStore slow = FaultInjectingObjectStore.wrap(base).addLatency(c -> true, Duration.ofMillis(150));
    try (Engine e = Fixtures.engine(1, 1000, 10_000, 1000); Snapshotter s = Snapshotter.builder(slow).parallelism(1).build()) {
      e.tick();
      var running = s.snapshotAsync(e, () -> 2);
      assertThat(s.isRunning()).isTrue();
      assertThatThrownBy(() -> s.snapshotAsync(e, () -> 2)).isInstanceOf(SnapshotInProgressException.class)
          .hasMessageContaining("still running");
      assertThatThrownBy(() -> s.snapshot(e.capture(), 2)).isInstanceOf(SnapshotInProgressException.class);
      SnapshotResult r = running.get();
      assertThat(s.isRunning()).isFalse();
      assertThat(s.pinnedKeys()).isEmpty();
      assertThat(s.lastResult()).contains(r);
      assertThat(List.of(r.uploadDuration())).allSatisfy(d -> assertThat(d).isGreaterThan(Duration.ofMillis(150)));
    }
  }
}
