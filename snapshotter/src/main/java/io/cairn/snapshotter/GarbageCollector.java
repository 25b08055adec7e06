package io.cairn.snapshotter;

import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.Manifest.BatchFile;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a {@link RetentionPolicy}: deletes expired manifests, then batch files that no kept
 * manifest references.
 *
 * <p>Invariants, and the order that keeps them against a snapshot running concurrently:
 *
 * <ol>
 *   <li>List the batch files first. A file uploaded later is not a candidate at all.
 *   <li>Read the pinned keys (the running snapshots' files, see {@link Snapshotter#pinnedKeys()}).
 *       A snapshot pins its files before uploading them and unpins them only after its manifest
 *       committed, so a listed file of a running snapshot is either pinned now or referenced by a
 *       manifest that the next step lists.
 *   <li>List and read the manifests. A manifest is valid when its checksum verifies and every file
 *       it references exists with the recorded size. Kept: the newest {@code keepLast} valid
 *       ones, the newest valid one of each of the last {@code dailyDays} days, and every manifest
 *       younger than the grace period. The newest valid snapshot is therefore always kept.
 *       Invalid manifests older than the grace period and older than the newest valid one are
 *       deleted; those newer are kept and reported.
 *   <li>Delete expired manifests. Then list the manifests <em>again</em> and add the files of
 *       every manifest not seen in step 3 to the referenced set — a manifest another writer
 *       committed meanwhile may reference old files (an incremental snapshot reuses them) — and
 *       only then delete the listed files that no manifest references, that are not pinned and
 *       that are older than the grace period (this includes orphans of failed uploads).
 * </ol>
 *
 * Across processes, one writer owns the store (the node's epoch fence refuses the deletes of a
 * fenced node); the re-listing and the grace period cover the moment of a hand-over.
 */
public final class GarbageCollector {
  private static final Logger LOG = LoggerFactory.getLogger(GarbageCollector.class);

  private final ObjectStore store;
  private final SnapshotPaths paths;
  private final RetentionPolicy policy;
  private final ZoneId zone;
  private final Clock clock;
  private final Supplier<Set<String>> pinned;

  /**
   * @param zone the zone whose calendar days the daily retention counts
   * @param pinned keys that must not be deleted (e.g. {@code snapshotter::pinnedKeys}); may return an empty set
   */
  public GarbageCollector(ObjectStore store, String prefix, RetentionPolicy policy, ZoneId zone, Clock clock, Supplier<Set<String>> pinned) {
    this.store = Objects.requireNonNull(store, "store");
    this.paths = new SnapshotPaths(prefix);
    this.policy = Objects.requireNonNull(policy, "policy");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.pinned = Objects.requireNonNull(pinned, "pinned");
  }

  /** Runs one collection. */
  public GcResult collect() {
    Instant now = clock.instant();
    Instant graceLimit = now.minus(policy.grace());
    // 1. batch files, before anything else
    Map<String, ObjectInfo> files = new LinkedHashMap<>();
    for (ObjectInfo o : store.list(paths.batchesPrefix())) {
      files.put(o.key(), o);
    }
    // 2. pins
    Set<String> pins = Set.copyOf(pinned.get());
    // 3. manifests
    SnapshotReader reader = new SnapshotReader(store, paths.prefix(), Runnable::run, 1);
    List<ManifestInfo> infos = reader.list();
    record Read(ManifestInfo info, Manifest manifest) {}
    List<Read> valid = new ArrayList<>();
    Map<ManifestInfo, String> invalid = new LinkedHashMap<>();
    for (ManifestInfo info : infos) {
      try {
        Manifest m = reader.read(info);
        String problem = missingFile(m, files);
        if (problem == null) {
          valid.add(new Read(info, m));
        } else {
          invalid.put(info, problem);
        }
      } catch (CorruptSnapshotException e) {
        invalid.put(info, e.getMessage());
      }
    }
    Set<ManifestInfo> keep = new HashSet<>();
    for (int i = 0; i < valid.size() && i < policy.keepLast(); i++) {
      keep.add(valid.get(i).info());
    }
    if (policy.dailyDays() > 0) {
      LocalDate today = LocalDate.ofInstant(now, zone);
      LocalDate first = today.minusDays(policy.dailyDays() - 1L);
      Map<LocalDate, ManifestInfo> perDay = new HashMap<>();
      for (Read r : valid) { // newest first: the first seen of a day is its newest
        LocalDate day = LocalDate.ofInstant(r.manifest().createdAtInstant(), zone);
        if (!day.isBefore(first) && !day.isAfter(today)) {
          perDay.putIfAbsent(day, r.info());
        }
      }
      keep.addAll(perDay.values());
    }
    long newestValidTick = valid.isEmpty() ? Long.MIN_VALUE : valid.get(0).info().tick();
    List<String> deleteManifests = new ArrayList<>();
    List<String> kept = new ArrayList<>();
    Set<String> referenced = new HashSet<>();
    for (Read r : valid) {
      if (keep.contains(r.info()) || !r.info().lastModified().isBefore(graceLimit)) {
        kept.add(r.info().key());
        for (BatchFile f : r.manifest().files()) {
          referenced.add(paths.key(f.path()));
        }
      } else {
        deleteManifests.add(r.info().key());
      }
    }
    List<RecoveryChoice.Rejected> rejected = new ArrayList<>();
    for (Map.Entry<ManifestInfo, String> e : invalid.entrySet()) {
      ManifestInfo info = e.getKey();
      rejected.add(new RecoveryChoice.Rejected(info, e.getValue()));
      if (info.lastModified().isBefore(graceLimit) && info.tick() < newestValidTick) {
        deleteManifests.add(info.key());
      } else {
        kept.add(info.key());
        // an invalid manifest that is kept keeps what it references: it may be read by a person
        try {
          for (BatchFile f : reader.read(info).files()) {
            referenced.add(paths.key(f.path()));
          }
        } catch (CorruptSnapshotException ignored) {
          // unreadable: references nothing
        }
      }
    }
    // 4. delete
    if (!deleteManifests.isEmpty()) {
      store.delete(deleteManifests);
    }
    Set<String> seen = new HashSet<>();
    infos.forEach(i -> seen.add(i.key()));
    for (ManifestInfo info : reader.list()) {
      if (seen.contains(info.key())) {
        continue;
      }
      try {
        for (BatchFile f : reader.read(info).files()) {
          referenced.add(paths.key(f.path()));
        }
        kept.add(info.key());
      } catch (CorruptSnapshotException e) {
        LOG.warn("Manifest {} appeared during garbage collection and does not read: {}", info.key(), e.getMessage());
      }
    }
    List<String> deleteFiles = new ArrayList<>();
    long bytes = 0;
    int young = 0;
    for (ObjectInfo o : files.values()) {
      if (referenced.contains(o.key())) {
        continue;
      }
      if (pins.contains(o.key()) || !o.lastModified().isBefore(graceLimit)) {
        young++;
        continue;
      }
      deleteFiles.add(o.key());
      bytes += o.size();
    }
    if (!deleteFiles.isEmpty()) {
      store.delete(deleteFiles);
    }
    GcResult r = new GcResult(kept, deleteManifests, deleteFiles, bytes, young, rejected);
    LOG.info("Garbage collection: kept {} manifests, deleted {} manifests and {} batch files ({} bytes), {} unreferenced files kept (grace or pinned), {} invalid manifests",
        kept.size(), deleteManifests.size(), deleteFiles.size(), bytes, young, rejected.size());
    return r;
  }

  private String missingFile(Manifest m, Map<String, ObjectInfo> listed) {
    for (BatchFile f : m.files()) {
      String key = paths.key(f.path());
      ObjectInfo o = listed.get(key);
      if (o == null) {
        // possibly uploaded after the listing: ask
        Optional<ObjectInfo> h = store.head(key);
        if (h.isEmpty()) {
          return "batch file " + key + " is missing";
        }
        o = h.get();
      }
      if (o.size() != f.bytes()) {
        return "batch file " + key + " has " + o.size() + " bytes, the manifest says " + f.bytes();
      }
    }
    return null;
  }
}
