package io.cairn.snapshotter.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogIntegrityException;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
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
 *       It refuses (with {@link CatalogIntegrityException} naming the missing entries and the
 *       witness) a catalog that ends before the highest witness, or whose entry there has another
 *       hash. The witnesses are listed before the catalog is read: each was written after its
 *       entry, so an owner that keeps appending while a node starts cannot make that start refuse.
 *   <li>Why witnesses and not the manifests, which also record the catalog's position and hash:
 *       the node lists the snapshots only after it has taken the store (a snapshot chosen before
 *       the fence may be superseded), and every entry a manifest of this build
 *       includes was witnessed when it was appended. Recovery still checks the catalog against
 *       the snapshot it loads, after the fence.
 *   <li>What it cannot detect before the fence, and what the operator sees then: a removed tail
 *       whose witnesses were removed too; the newest entry when the node died between writing it
 *       and its witness, or the witness write failed (logged at WARN; the statement still
 *       succeeds: the entry is committed); entries removed before the first start of a build that
 *       writes witnesses. If a manifest includes the removed entries, recovery refuses after the
 *       fence (the start has then written its epoch object, and fenced a running owner). If none
 *       does, the start succeeds with the shorter catalog, and the recovery report lists the views
 *       that exist, without the removed ones.
 *   <li>To accept losing a removed tail on purpose, delete the witnesses at and above the first
 *       missing position (the error names them); manifests that include the lost entries must go
 *       too, as before.
 * </ul>
 */
public final class CatalogTail {
  private static final Logger LOG = LoggerFactory.getLogger(CatalogTail.class);
  public static final String PREFIX = "catalog-heads/";
  private static final ObjectMapper JSON = new ObjectMapper();

  private CatalogTail() {}

  public static String key(long position) {
    return io.cairn.objectstore.NumberedObjects.key(PREFIX, position);
  }

  /** The highest witness in {@code store}, if any: its position and the hash it records ("" if unreadable). */
  public record Witness(long position, String hash, long epoch, String wallClock) {}

  public static Optional<Witness> highest(ObjectStore store) {
    java.util.OptionalLong highest = io.cairn.objectstore.NumberedObjects.highest(store, PREFIX);
    if (highest.isEmpty()) {
      return Optional.empty();
    }
    long max = highest.getAsLong();
    try {
      JsonNode n = JSON.readTree(store.readAllBytes(key(max)));
      return Optional.of(new Witness(max, n.path("hash").asText(""), n.path("epoch").asLong(0), n.path("wallClock").asText("?")));
    } catch (IOException | RuntimeException e) {
      LOG.warn("Cannot read catalog head witness {}: {}", key(max), e.getMessage());
      return Optional.of(new Witness(max, "", 0, "?"));
    }
  }

  /**
   * Refuses a catalog ({@code entries}, contiguous from position 0, chain already checked, read
   * after {@code witness}) that is shorter than, or different at its end from, what the highest
   * witness says was written. Writes nothing.
   *
   * @return whether the catalog's head is witnessed (false: the caller, once it owns the store,
   *     writes the witness)
   * @throws CatalogIntegrityException naming the missing or changed entry
   */
  public static boolean check(Optional<Witness> witness, List<CatalogEntry> entries, String where) {
    long end = entries.size();
    checkWitness(witness, entries, where);
    return end == 0 || witness.map(x -> x.position() >= end - 1).orElse(false);
  }

  /** The highest witness against the catalog's end. */
  public static void checkWitness(Optional<Witness> witness, List<CatalogEntry> entries, String where) {
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
          + " is not the entry that was written there (it was changed or replaced): " + by + " records another hash. "
          + "Restore the original entries; cairn will not replay a different history. Nothing was written");
    }
  }

  /** Writes the witness of {@code head}; one that exists already is kept; a failure is logged, not thrown. */
  public static void witness(ObjectStore store, CatalogEntry head) {
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
  public static CatalogLog witnessing(CatalogLog log, ObjectStore store) {
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
