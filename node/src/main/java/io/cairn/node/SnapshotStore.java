package io.cairn.node;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.ObjectStore;
import io.cairn.node.config.CairnConfig;
import io.cairn.snapshotter.GarbageCollector;
import io.cairn.snapshotter.GcResult;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.ManifestInfo;
import io.cairn.snapshotter.RecoveryChoice;
import io.cairn.snapshotter.RetentionPolicy;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.SnapshotSchedule;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.StoreVerifier;
import io.cairn.snapshotter.VerifyReport;
import io.cairn.snapshotter.ViewExporter;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.snapshotter.catalog.CatalogTail;
import io.cairn.snapshotter.catalog.ObjectStoreCatalogLog;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The node's view of one object store: its catalog log, snapshot writer and reader, schedule and
 * retention, all under the store's root (the store URI's prefix).
 */
final class SnapshotStore implements AutoCloseable {
  private final ObjectStore store;
  private final CairnConfig config;
  private final Clock clock;
  private final Snapshotter snapshotter;
  private final SnapshotReader reader;
  private final CatalogLog sessionCatalog;

  private SnapshotStore(ObjectStore store, CairnConfig config, Clock clock, ObjectStoreCatalogLog read) {
    this.store = store;
    this.sessionCatalog = CatalogTail.witnessing(read == null ? new ObjectStoreCatalogLog(store) : read.on(store), store);
    this.config = config;
    this.clock = clock;
    this.snapshotter = Snapshotter.builder(store).clock(clock).build();
    this.reader = new SnapshotReader(store, snapshotter.prefix(), 4);
  }

  /**
   * Compiles the snapshot encoder before the first snapshot needs it ({@link Snapshotter#warmUp}):
   * 200,000 rows in three shapes, 4 times: 1.1–1.4 s of one core on the 2-core machine, once per
   * start (100,000 rows 3 times compiled too little: the first snapshot was as slow as without;
   * without the third shape, every integer branch, the first snapshot threw the compiled encoder
   * away and took 273–1,001 ms for 3.19M rows, with it 158–186 ms).
   * Returns the milliseconds it took.
   */
  long warmUpEncoder() {
    return snapshotter.warmUp(200_000, 4);
  }

  static SnapshotStore open(ObjectStore store, CairnConfig config, Clock clock) {
    return new SnapshotStore(store, config, clock, null);
  }

  /**
   * A store whose SQL session's catalog ({@link #sessionCatalog()}) shares the entries {@code read}
   * (the same catalog through another view of the same store) has read already.
   */
  static SnapshotStore open(ObjectStore store, CairnConfig config, Clock clock, ObjectStoreCatalogLog read) {
    return new SnapshotStore(store, config, clock, read);
  }

  /** The catalog as it is now in the store, read afresh (for checks that must see hand edits). */
  CatalogLog catalog() {
    return new ObjectStoreCatalogLog(store);
  }

  /**
   * The catalog log of the node's SQL session: one instance, each entry fetched once; each append
   * is followed by its head witness ({@link CatalogTail}).
   */
  CatalogLog sessionCatalog() {
    return sessionCatalog;
  }

  /** The outcome of loading the newest snapshot that loads completely. */
  record Recovered(
      ManifestInfo info, Manifest manifest, EngineState state, Map<String, String> rejected, long bytes, long loadMillis) {
    boolean found() {
      return manifest != null;
    }
  }

  /**
   * Loads the newest snapshot that verifies while loading, falling back past bad ones, telling
   * {@code onFirstManifest} the newest manifest that reads before its files load (see {@link
   * SnapshotReader#loadLatest(java.util.function.Consumer)}).
   */
  Recovered loadLatest(java.util.function.Consumer<Manifest> onFirstManifest) {
    long t0 = System.nanoTime();
    RecoveryChoice c = reader.loadLatest(onFirstManifest);
    long millis = (System.nanoTime() - t0) / 1_000_000;
    Map<String, String> rejected = new LinkedHashMap<>();
    for (RecoveryChoice.Rejected r : c.rejected()) {
      rejected.put(r.info().key(), r.reason());
    }
    if (c.manifest().isEmpty()) {
      return new Recovered(null, null, null, rejected, 0, millis);
    }
    Manifest m = c.manifest().get();
    long bytes = m.arrangements().stream().flatMap(a -> a.batches().stream()).mapToLong(b -> b.bytes()).sum();
    snapshotter.seed(m);
    return new Recovered(c.chosen().get(), m, c.state().get(), rejected, bytes, millis);
  }

  /** The newest manifest in the store (by tick), from one listing; empty when there is none. */
  java.util.Optional<ManifestInfo> newest() {
    List<ManifestInfo> all = reader.list();
    return all.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(all.get(0));
  }

  /** Writes and commits a snapshot of {@code state}; returns its figures. */
  SnapshotResult write(EngineState state, long catalogPosition, String catalogHash, long epoch, long pauseNanos) {
    return snapshotter.snapshot(state, catalogPosition, catalogHash, epoch, Duration.ofNanos(pauseNanos));
  }

  /** Applies retention and garbage collection; never touches what an in-progress snapshot pins. */
  GcResult applyRetention() {
    RetentionPolicy policy = new RetentionPolicy(config.keepLast(), config.keepDailyDays(), config.gcGrace());
    return new GarbageCollector(store, snapshotter.prefix(), policy, config.snapshotZone(), clock, snapshotter::pinnedKeys)
        .collect();
  }

  /**
   * Starts the snapshot schedule (Quartz): one snapshot per cron slot, one at once if the node
   * was down at the last slot. Closing the result stops it.
   */
  AutoCloseable schedule(CairnConfig config, Runnable snapshot) {
    Instant last = reader.list().stream().map(ManifestInfo::lastModified).max(Instant::compareTo).orElse(null);
    SnapshotSchedule s =
        new SnapshotSchedule(config.snapshotCron(), config.snapshotZone(), clock, last, reason -> snapshot.run());
    s.start();
    return s;
  }

  /** The time between two consecutive slots of the snapshot schedule (for retention guards). */
  Duration interval(CairnConfig config) {
    SnapshotSchedule s =
        new SnapshotSchedule(config.snapshotCron(), config.snapshotZone(), clock, null, reason -> { });
    Instant now = Instant.now(clock);
    Instant a = s.nextSlotAfter(now).orElse(now);
    Instant b = s.nextSlotAfter(a).orElse(a.plus(Duration.ofDays(1)));
    return Duration.between(a, b);
  }

  /**
   * The gaps between the schedule's consecutive slots over the next {@code horizon} (at most 5,000
   * slots), for advice on the schedule; empty when it fires fewer than twice in that time.
   */
  List<Duration> gaps(CairnConfig config, Duration horizon) {
    SnapshotSchedule s =
        new SnapshotSchedule(config.snapshotCron(), config.snapshotZone(), clock, null, reason -> { });
    Instant now = Instant.now(clock);
    Instant end = now.plus(horizon);
    List<Duration> out = new ArrayList<>();
    Instant a = s.nextSlotAfter(now).orElse(null);
    while (a != null && a.isBefore(end) && out.size() < 5000) {
      Instant b = s.nextSlotAfter(a).orElse(null);
      if (b == null) {
        break;
      }
      out.add(Duration.between(a, b));
      a = b;
    }
    return out;
  }

  String listText() {
    StringBuilder sb = new StringBuilder();
    List<ManifestInfo> all = new ArrayList<>(reader.list());
    if (all.isEmpty()) {
      return "no snapshots in " + store.describe() + "\n";
    }
    for (ManifestInfo i : all) {
      sb.append(String.format(Locale.ROOT, "%-60s tick %-10d %s%n", i.key(), i.tick(), i.lastModified()));
    }
    return sb.toString();
  }

  /** The catalog's chain and every snapshot checked ({@link StoreVerifier}). */
  VerifyReport verify() {
    return StoreVerifier.verify(store, reader);
  }

  /** View {@code view} as of snapshot {@code snapshotId} (null: the newest that reads) to a Parquet file ({@link ViewExporter}). */
  String export(String view, String snapshotId, java.nio.file.Path to) {
    return ViewExporter.export(store, reader, view, snapshotId, to);
  }

  String gcText() {
    GcResult r = applyRetention();
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "kept %d snapshots, deleted %d manifests and %d batch files (%,d bytes); %d unreferenced files kept (grace period or in use)%n",
        r.kept().size(), r.deletedManifests().size(), r.deletedFiles().size(), r.bytesFreed(), r.keptUnreferencedFiles()));
    for (RecoveryChoice.Rejected bad : r.invalid()) {
      sb.append("invalid: ").append(bad.info().key()).append(": ").append(bad.reason()).append('\n');
    }
    return sb.toString();
  }

  @Override
  public void close() {
    snapshotter.close();
    reader.close();
  }
}
