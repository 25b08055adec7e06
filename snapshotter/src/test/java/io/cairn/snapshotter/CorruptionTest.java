package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CorruptionTest {
  InMemoryObjectStore store;
  EngineState older;
  EngineState newer;
  SnapshotResult first;
  SnapshotResult second;

  @BeforeEach
  void twoSnapshots() {
    store = new InMemoryObjectStore();
    try (Engine e = Fixtures.engine(2, 3000, 1_000_000, 1500); Snapshotter s = Snapshotter.builder(store).build()) {
      for (int i = 0; i < 3; i++) {
        e.tick();
      }
      older = e.capture();
      first = s.snapshot(older, 2);
      e.tick();
      newer = e.capture();
      second = s.snapshot(newer, 2);
    }
    assertThat(second.filesNew()).isPositive();
  }

  private void flipByte(String key, long seed) {
    byte[] b = store.readAllBytes(key);
    int at = new Random(seed).nextInt(b.length);
    b[at] ^= (byte) (1 << new Random(seed + 1).nextInt(8));
    store.put(key, b);
  }

  /** A file of the newer snapshot that the older one does not reference. */
  private String newFileOfSecond() {
    try (SnapshotReader r = new SnapshotReader(store, "", 1)) {
      Manifest m2 = r.read(r.list().get(0));
      Manifest m1 = r.read(r.list().get(1));
      var olderIds = m1.files().stream().map(Manifest.BatchFile::id).toList();
      return m2.files().stream().filter(f -> !olderIds.contains(f.id())).findFirst().orElseThrow().path();
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void aFlippedByteInABatchFileIsDetectedAndTheReaderFallsBackSayingWhy(long seed) {
    String path = newFileOfSecond();
    flipByte(path, seed);
    try (SnapshotReader r = new SnapshotReader(store, "", 2)) {
      RecoveryChoice c = r.loadLatest();
      assertThat(c.chosen().orElseThrow().key()).isEqualTo(first.manifestKey());
      Fixtures.assertSameState(c.state().orElseThrow(), older);
      assertThat(c.rejected()).singleElement().satisfies(rej -> {
        assertThat(rej.info().key()).isEqualTo(second.manifestKey());
        assertThat(rej.reason()).contains(path).contains("checksum mismatch");
      });
      // full verification finds it without loading; presence-only does not read contents
      assertThat(r.latestValid(SnapshotReader.Verification.FULL).chosen().orElseThrow().key()).isEqualTo(first.manifestKey());
      assertThat(r.latestValid(SnapshotReader.Verification.PRESENCE).chosen().orElseThrow().key()).isEqualTo(second.manifestKey());
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void aFlippedByteInAManifestIsDetectedAndTheReaderFallsBack(long seed) {
    flipByte(second.manifestKey(), seed);
    try (SnapshotReader r = new SnapshotReader(store, "", 2)) {
      RecoveryChoice c = r.loadLatest();
      assertThat(c.chosen().orElseThrow().key()).isEqualTo(first.manifestKey());
      Fixtures.assertSameState(c.state().orElseThrow(), older);
      assertThat(c.rejected()).singleElement().satisfies(rej -> assertThat(rej.reason()).contains(second.manifestKey()));
    }
  }

  @Test
  void everySingleByteFlipOfAManifestIsDetected() {
    byte[] good = store.readAllBytes(second.manifestKey());
    for (int i = 0; i < good.length; i++) {
      byte[] b = good.clone();
      b[i] ^= 0x01;
      int at = i;
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> ManifestCodec.decode("m", b))
          .as("flip at byte %d", at).isInstanceOf(CorruptSnapshotException.class);
    }
    assertThat(ManifestCodec.decode("m", good).snapshotId()).isEqualTo(second.snapshotId());
  }

  @Test
  void aMissingOrTruncatedFileIsReportedByName() {
    String path = newFileOfSecond();
    byte[] b = store.readAllBytes(path);
    store.put(path, java.util.Arrays.copyOf(b, b.length - 1));
    try (SnapshotReader r = new SnapshotReader(store, "", 2)) {
      RecoveryChoice c = r.latestValid(SnapshotReader.Verification.PRESENCE);
      assertThat(c.chosen().orElseThrow().key()).isEqualTo(first.manifestKey());
      assertThat(c.rejected().get(0).reason()).contains(path).contains("bytes");
      store.delete(path);
      assertThat(r.verify(r.read(r.list().get(0)), SnapshotReader.Verification.PRESENCE)).singleElement()
          .satisfies(p -> assertThat(p).contains(path).contains("missing"));
    }
  }

  @Test
  void noValidSnapshotMeansNoneChosenWithEveryReason() {
    flipByte(first.manifestKey(), 3);
    flipByte(second.manifestKey(), 3);
    try (SnapshotReader r = new SnapshotReader(store, "", 2)) {
      RecoveryChoice c = r.loadLatest();
      assertThat(c.isEmpty()).isTrue();
      assertThat(c.rejected()).hasSize(2);
    }
  }
}
