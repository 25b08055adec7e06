package io.cairn.recovery.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogIntegrityException;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.ManifestInfo;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The catalog's tail: what makes a removed or replaced tail detectable, and the check a start
 * makes before it takes the store.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>The hash chain shows a gap or an edited entry, but not a removed tail: the last entry has
 *       no successor to vouch for it. Two kinds of object outside {@code catalog/} vouch for it.
 *       A manifest records the position and hash of the last entry it includes. A <em>head
 *       witness</em> {@code catalog-heads/<N, 20 digits>.json} (position, hash, epoch, time)
 *       records that entry N existed: a node writes one after each catalog append, before the
 *       statement is acknowledged, and one for the head it found when it takes the store (if that
 *       head has none yet: a store written by an older build). Witnesses are write-once,
 *       create-if-absent, one small object per DDL statement; nothing deletes them.
 *   <li>{@link #check} runs on every start, after the chain check and <em>before</em> the epoch is
 *       taken, and only reads: a start that refuses a catalog writes nothing and fences no one.
 *       It refuses (with {@link CatalogIntegrityException} naming the missing entries and what
 *       vouched for them) a catalog that ends before the newest readable manifest's position or
 *       the highest witness, or whose entry there has another hash.
 *   <li>What it cannot detect, and what the operator sees then: a removed tail whose witnesses
 *       were removed too (and that no manifest includes); the newest entry when the node died
 *       between writing it and its witness, or the witness write failed (logged at WARN, the
 *       statement still succeeds: the entry is committed). In those cases the start succeeds
 *       with the shorter catalog, and the recovery report lists the views that exist, without
 *       the removed ones. Entries removed before the first start of a build that writes
 *       witnesses are not detected either.
 *   <li>To accept losing a removed tail on purpose, delete the witnesses at and above the first
 *       missing position (the error names them); manifests that include the lost entries must go
 *       too, as before.
 * </ul>
 */
final class CatalogTail {
  private static final Logger LOG = LoggerFactory.getLogger(CatalogTail.class);
  static final String PREFIX = "catalog-heads/";
  private static final ObjectMapper JSON = new ObjectMapper();

  private CatalogTail() {}

  static String key(long position) {
    return String.format(Locale.ROOT, "%s%020d.json", PREFIX, position);
  }

  /** The highest witness in {@code store}, if any: its position and the hash it records ("" if unreadable). */
  record Witness(long position, String hash, long epoch, String wallClock) {}

  static Optional<Witness> highest(ObjectStore store) {
    long max = -1;
    for (ObjectInfo o : store.list(PREFIX)) {
      String name = o.key().substring(o.key().lastIndexOf('/') + 1);
      if (name.matches("\\d{20}\\.json")) {
        max = Math.max(max, Long.parseLong(name.substring(0, 20)));
      }
    }
    if (max < 0) {
      return Optional.empty();
    }
    try {
      JsonNode n = JSON.readTree(store.readAllBytes(key(max)));
      return Optional.of(new Witness(max, n.path("hash").asText(""), n.path("epoch").asLong(0), n.path("wallClock").asText("?")));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot read catalog head witness {}: {}", key(max), e.getMessage());
      return Optional.of(new Witness(max, "", 0, "?"));
    }
  }

  /**
   * Refuses a catalog ({@code entries}, contiguous from position 0, chain already checked) that is
   * shorter than, or different at its end from, what the newest readable manifest or the highest
   * witness says existed. Reads only.
   *
   * @return whether the catalog's head is witnessed (false: the caller, once it owns the store,
   *     writes the witness)
   * @throws CatalogIntegrityException naming the missing or changed entry
   */
  static boolean check(ObjectStore store, List<CatalogEntry> entries, String where) {
    long end = entries.size();
    checkManifest(store, entries, where);
    Optional<Witness> w = highest(store);
    checkWitness(w, entries, where);
    return end == 0 || w.map(x -> x.position() >= end - 1).orElse(false);
  }

  /** The newest manifest that reads: its catalog position and hash against the catalog's. */
  static void checkManifest(ObjectStore store, List<CatalogEntry> entries, String where) {
    long end = entries.size();
    try (SnapshotReader reader = new SnapshotReader(store, "", Runnable::run, 1)) {
      for (ManifestInfo info : reader.list()) {
        Manifest m;
        try {
          m = reader.read(info);
        } catch (CorruptSnapshotException e) {
          continue; // recovery reports it and falls back; an older manifest vouches for less
        }
        long want = m.catalogPosition();
        if (want > end) {
          throw new CatalogIntegrityException(end, "Cannot recover: snapshot " + info.key() + " includes catalog entries up to "
              + (want - 1) + ", but the catalog in " + where + " ends at entry " + (end - 1) + ": entries " + end + ".." + (want - 1)
              + " are missing. Restore them (from a backup or object versions); cairn will not replay a shorter history. "
              + "Nothing was written");
        }
        String hash = m.catalogHash();
        if (hash != null && want > 0 && !hash.equals(entries.get((int) want - 1).hash())) {
          throw new CatalogIntegrityException(want - 1, "Cannot recover: catalog entry " + (want - 1) + " in " + where
              + " is not the entry snapshot " + info.key() + " was taken with (it was changed or replaced). Restore the "
              + "original entry; cairn will not replay a different history. Nothing was written");
        }
        return;
      }
    }
  }

  /** The highest witness against the catalog's end. */
  static void checkWitness(Optional<Witness> witness, List<CatalogEntry> entries, String where) {
    if (witness.isEmpty()) {
      return;
    }
    Witness w = witness.get();
    long end = entries.size();
    String by = key(w.position()) + " (written " + w.wallClock() + " by epoch " + w.epoch() + ")";
    if (w.position() >= end) {
      throw new CatalogIntegrityException(end, "Cannot recover: catalog entries " + end + ".." + w.position()
          + " are missing from " + where + ": " + by + " records that entry " + w.position() + " was written, and the catalog ends "
          + (end == 0 ? "before entry 0 (it is empty)" : "at entry " + (end - 1)) + ". The catalog's tail was removed. Restore "
          + "the entries (from a backup or object versions); cairn will not replay a shorter history. To accept losing them, "
          + "delete the objects " + PREFIX + " from " + key(end) + " on. Nothing was written");
    }
    String have = entries.get((int) w.position()).hash();
    if (!w.hash().isEmpty() && !w.hash().equals(have)) {
      throw new CatalogIntegrityException(w.position(), "Cannot recover: catalog entry " + w.position() + " in " + where
          + " is not the entry that was written there: " + by + " records another hash (the tail was removed and "
          + "written again, or the entry was replaced). Restore the original entries; cairn will not replay a different "
          + "history. Nothing was written");
    }
  }

  /** Writes the witness of {@code head}; one that exists already is kept; a failure is logged, not thrown. */
  static void witness(ObjectStore store, CatalogEntry head) {
    ObjectNode n = JSON.createObjectNode();
    n.put("position", head.position());
    n.put("hash", head.hash());
    n.put("epoch", head.epoch());
    n.put("wallClock", head.wallClock().toString());
    try {
      store.putIfAbsent(key(head.position()), JSON.writeValueAsBytes(n));
    } catch (ObjectAlreadyExistsException e) {
      LOG.debug("Catalog head witness {} exists", key(head.position()));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot write the catalog head witness {} (entry {} is committed; a removal of it alone would go "
          + "unnoticed until the next append or start): {}", key(head.position()), head.position(), e.getMessage());
    }
  }

  /** {@code log}, writing a witness after each append it makes. */
  static CatalogLog witnessing(CatalogLog log, ObjectStore store) {
    return new CatalogLog() {
      @Override
      public void append(CatalogEntry entry) {
        log.append(entry);
        witness(store, entry);
      }

      @Override
      public List<CatalogEntry> read(long from) {
        return log.read(from);
      }

      @Override
      public long end() {
        return log.end();
      }

      @Override
      public String describe() {
        return log.describe();
      }

      @Override
      public void close() {
        log.close();
      }
    };
  }
}
