package io.cairn.recovery.node;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.runtime.EngineState;
import io.cairn.objectstore.ObjectStore;
import io.cairn.recovery.config.CairnConfig;
import io.cairn.snapshotter.GarbageCollector;
import io.cairn.snapshotter.GcResult;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.ManifestInfo;
import io.cairn.snapshotter.RecoveryChoice;
import io.cairn.snapshotter.RetentionPolicy;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.SnapshotSchedule;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
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

  VerifyReport verify() {
    List<VerifyReport.Line> lines = new ArrayList<>();
    List<io.cairn.engine.catalog.CatalogEntry> entries = List.of();
    String catalogProblem = null;
    try {
      java.util.Optional<CatalogTail.Witness> witness = CatalogTail.highest(store); // before the catalog: see CatalogTail
      entries = catalog().read(io.cairn.engine.catalog.CatalogLog.FIRST_POSITION);
      io.cairn.engine.catalog.CatalogIntegrityException.verifyChain(entries, "", catalog().describe());
      CatalogTail.checkWitness(witness, entries, catalog().describe());
    } catch (RuntimeException e) {
      catalogProblem = e.getMessage();
    }
    // a catalog that does not read (a gap) is counted by listing: "0 entries" would hide what is there
    long present = catalogProblem == null ? entries.size() : store.list(ObjectStoreCatalogLog.PREFIX).stream()
        .filter(o -> o.key().substring(o.key().lastIndexOf('/') + 1).matches("\\d{20}\\.json")).count();
    lines.add(new VerifyReport.Line("catalog (" + present + " entries)",
        catalogProblem == null ? VerifyReport.Status.OK : VerifyReport.Status.INVALID, catalogProblem == null ? "" : catalogProblem));
    for (ManifestInfo i : reader.list()) {
      List<String> problems;
      try {
        Manifest m = reader.read(i);
        problems = new ArrayList<>(reader.verify(m, SnapshotReader.Verification.FULL));
        if (catalogProblem == null) {
          long p = m.catalogPosition();
          if (p > entries.size()) {
            problems.add("it includes catalog entries up to " + (p - 1) + " but the catalog ends at entry " + (entries.size() - 1));
          } else if (m.catalogHash() != null && !m.catalogHash().equals(p == 0 ? "" : entries.get((int) p - 1).hash())) {
            problems.add("catalog entry " + (p - 1) + " is not the one this snapshot was taken with (changed or replaced)");
          }
        }
      } catch (RuntimeException e) {
        problems = List.of(e.getMessage());
      }
      if (!problems.isEmpty() && store.head(i.key()).isEmpty()) {
        lines.add(new VerifyReport.Line(i.key(), VerifyReport.Status.GONE, "deleted while it was being verified (garbage collection)"));
      } else {
        lines.add(new VerifyReport.Line(i.key(), problems.isEmpty() ? VerifyReport.Status.OK : VerifyReport.Status.INVALID,
            String.join("; ", problems)));
      }
    }
    return new VerifyReport(lines);
  }

  /**
   * Writes view {@code view} as of snapshot {@code snapshotId} (null: the newest that reads) to
   * {@code to} as one Parquet file whose columns are the view's, in the view's order, plus {@code
   * _time} (the snapshot's tick) and {@code _diff} (the row's multiplicity: 1 unless the view holds
   * duplicate rows). Only the view's arrangement is read, its files verified as at recovery.
   *
   * @return a one-line summary
   */
  String export(String view, String snapshotId, java.nio.file.Path to) {
    Manifest m = null;
    for (ManifestInfo i : reader.list()) {
      if (snapshotId != null && !i.snapshotId().equals(snapshotId)) {
        continue;
      }
      try {
        m = reader.read(i);
        break;
      } catch (io.cairn.snapshotter.exceptions.CorruptSnapshotException e) {
        if (snapshotId != null) {
          throw e;
        }
        org.slf4j.LoggerFactory.getLogger(SnapshotStore.class).warn("Skipping snapshot {}: {}", i.key(), e.getMessage());
      }
    }
    if (m == null) {
      throw new IllegalArgumentException(snapshotId == null ? "Cannot export: no snapshot in " + store.describe()
          : "Cannot export: no snapshot with id " + snapshotId + " in " + store.describe() + " (cairn snapshots list shows them)");
    }
    Manifest snap = m;
    Manifest.ViewEntry v = m.view(view).orElseThrow(() -> new IllegalArgumentException(snap.views().isEmpty()
        ? "Cannot export view '" + view + "': snapshot " + snap.snapshotId() + " has no view metadata (written in manifest format "
            + snap.formatVersion() + " by an older cairn); take a new snapshot with `cairn snapshot`"
        : "Cannot export view '" + view + "': snapshot " + snap.snapshotId() + " has no such view (its views: "
            + snap.views().stream().map(Manifest.ViewEntry::name).toList() + ")"));
    Manifest only = new Manifest(m.formatVersion(), m.snapshotId(), m.tick(), m.createdAt(), m.catalogPosition(), m.shards(),
        m.offsets(), m.arrangements().stream().filter(a -> a.name().equals(v.arrangement())).toList(), m.catalogHash(), m.epoch(),
        m.views());
    EngineState st = reader.load(only);
    io.cairn.engine.row.Schema cols = io.cairn.engine.row.Schema.parse(v.columns());
    Map<io.cairn.engine.row.Row, Long> counts = new java.util.HashMap<>();
    for (io.cairn.engine.runtime.ArrangementState a : st.arrangements()) {
      int[] fromKey = new int[cols.size()];
      int[] fromVal = new int[cols.size()];
      for (int c = 0; c < cols.size(); c++) {
        fromKey[c] = a.keySchema().indexOf(cols.column(c).name());
        fromVal[c] = a.valSchema().indexOf(cols.column(c).name());
        if (fromKey[c] < 0 && fromVal[c] < 0) {
          throw new IllegalStateException("Cannot export view '" + view + "': column '" + cols.column(c).name()
              + "' is not in arrangement " + v.arrangement());
        }
      }
      for (io.cairn.engine.trace.Batch b : a.batches()) {
        for (int i = 0; i < b.size(); i++) {
          Object[] row = new Object[cols.size()];
          for (int c = 0; c < row.length; c++) {
            row[c] = fromKey[c] >= 0 ? b.keyColumn(fromKey[c]).get(i) : b.valColumn(fromVal[c]).get(i);
          }
          counts.merge(io.cairn.engine.row.Row.wrap(row), b.diff(i), Long::sum);
        }
      }
    }
    List<io.cairn.engine.trace.Update> rows = new ArrayList<>();
    long total = 0;
    for (Map.Entry<io.cairn.engine.row.Row, Long> e : counts.entrySet()) {
      if (e.getValue() < 0) {
        throw new IllegalStateException("Cannot export view '" + view + "': row " + e.getKey() + " has multiplicity " + e.getValue()
            + " in snapshot " + m.snapshotId());
      }
      if (e.getValue() > 0) {
        rows.add(new io.cairn.engine.trace.Update(e.getKey(), io.cairn.engine.row.Row.EMPTY, m.tick(), e.getValue()));
        total += e.getValue();
      }
    }
    io.cairn.engine.trace.Batch out = io.cairn.engine.trace.Batch.fromUpdates(cols, io.cairn.engine.row.Schema.of(), rows,
        new io.cairn.engine.trace.Description(m.tick(), m.tick() + 1, m.tick()));
    java.nio.file.Path tmp = to.resolveSibling(to.getFileName() + ".part");
    try (java.io.OutputStream os = new java.io.BufferedOutputStream(java.nio.file.Files.newOutputStream(tmp))) {
      io.cairn.snapshotter.format.ParquetBatchFiles.write(view, 0, out, os);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("Cannot export view '" + view + "' to " + to + ": " + e.getMessage(), e);
    }
    try {
      java.nio.file.Files.move(tmp, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("Cannot export view '" + view + "' to " + to + ": " + e.getMessage(), e);
    }
    return String.format(Locale.ROOT, "exported view %s as of snapshot %s (tick %d): %,d rows (%,d distinct) to %s%n", view,
        m.snapshotId(), m.tick(), total, rows.size(), to);
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
