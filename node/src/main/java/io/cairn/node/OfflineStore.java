package io.cairn.node;

import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectStores;
import io.cairn.node.config.CairnConfig;
import io.cairn.snapshotter.VerifyReport;
import java.nio.file.Path;
import java.time.Clock;

/**
 * The snapshot store without an engine: what {@code cairn snapshots list|verify|gc|export} do
 * (verify and export are the snapshotter's {@link io.cairn.snapshotter.StoreVerifier} and {@link
 * io.cairn.snapshotter.ViewExporter}). Reads and (for gc) deletes; takes no epoch, so it never
 * fences a running node.
 */
public final class OfflineStore implements AutoCloseable {
  private final ObjectStore store;
  private final SnapshotStore snapshots;

  private OfflineStore(CairnConfig config) {
    this.store = ObjectStores.open(config.storeUri(), config.storeProperties());
    this.snapshots = SnapshotStore.open(store, config, Clock.systemUTC());
  }

  /** Opens the store {@code config} names. */
  public static OfflineStore open(CairnConfig config) {
    return new OfflineStore(config);
  }

  /** The snapshots, newest first, a line each. */
  public String list() {
    return snapshots.listText();
  }

  /** The catalog's chain and every snapshot checked (see {@link VerifyReport}). */
  public VerifyReport verify() {
    return snapshots.verify();
  }

  /** Retention applied and garbage collected; a summary. */
  public String gc() {
    return snapshots.gcText();
  }

  /** Writes a view as of a snapshot (null: the newest) to a Parquet file; returns a summary line. */
  public String export(String view, String snapshotId, Path to) {
    return snapshots.export(view, snapshotId, to);
  }

  @Override
  public void close() {
    snapshots.close();
    store.close();
  }
}
