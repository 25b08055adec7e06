package io.cairn.recovery.node;

import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.RecoveryChoice;
import io.cairn.snapshotter.SnapshotReader;
import java.util.concurrent.CompletableFuture;

/**
 * The load of the newest snapshot that verifies, started as soon as a node has opened its store:
 * before the catalog's chain check and before the node takes the store ({@link StoreFence}),
 * since it only reads. Recovery then finds it running or done ({@link Recovery}).
 *
 * <p>Reading before taking the store is safe: whatever the previous owner does meanwhile, a
 * committed snapshot stays valid (newer ones only mean more to catch up), and garbage collection
 * never deletes the newest snapshot or a file one references.
 *
 * <p>Runs on its own thread and a pool of {@value #PARALLELISM} readers, which stops once the
 * load has ended, whether anyone waits for it or not.
 */
final class SnapshotPrefetch {
  static final int PARALLELISM = 4;

  /** The newest manifest that reads, before its files load; null when none reads. */
  final CompletableFuture<Manifest> first = new CompletableFuture<>();
  /** The outcome: the snapshot loaded, or none, with every one rejected on the way. */
  final CompletableFuture<RecoveryChoice> loading = new CompletableFuture<>();
  private volatile long loadMillis;

  private SnapshotPrefetch() {}

  /** Starts loading from {@code store} (snapshots under the default prefix, as {@link SnapshotStore} writes them). */
  static SnapshotPrefetch start(ObjectStore store) {
    SnapshotPrefetch p = new SnapshotPrefetch();
    SnapshotReader reader = new SnapshotReader(store, "", PARALLELISM);
    Thread t = new Thread(() -> {
      long t0 = System.nanoTime();
      try {
        RecoveryChoice c = reader.loadLatest(p.first::complete);
        p.loadMillis = (System.nanoTime() - t0) / 1_000_000;
        p.loading.complete(c);
      } catch (Throwable e) {
        p.loading.completeExceptionally(e);
      } finally {
        p.first.complete(null);
        reader.close();
      }
    }, "cairn-recovery-load");
    t.setDaemon(true);
    t.start();
    return p;
  }

  /** How long the load took (valid once {@link #loading} is done). */
  long loadMillis() {
    return loadMillis;
  }
}
