package io.cairn.snapshotter.catalog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cairn.engine.catalog.CatalogConflictException;
import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The catalog on an {@link ObjectStore}: entry N is the object {@code catalog/<N, 20 digits>.json},
 * written with {@link ObjectStore#putIfAbsent}.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Total order without a coordinator: the store's create-if-absent is linearizable (S3
 *       {@code If-None-Match: *}, a hard link locally), so of the writers racing for position N
 *       exactly one creates the object and the others get {@link CatalogConflictException}. Every
 *       object is written once and never replaced, so every reader sees the same entry at N.
 *   <li>Reads probe positions {@code from, from+1, ...} with GETs until one is absent, rather than
 *       listing: a GET after a completed PUT sees it (read-after-write), while a listing may lag.
 *       A writer appends at N only after reading N-1, so there are no gaps; an append checks
 *       (with a HEAD, unless this instance has already seen N-1) that N-1 exists.
 *   <li>Format (JSON): {@code {"schemaVersion":2,"position":N,"wallClock":"<ISO-8601>","sql":"...",
 *       "prevHash":"<SHA-256 of entry N-1>","epoch":E}} (version 1, from older builds, has no
 *       {@code prevHash} or {@code epoch}).
 *   <li>No silent gaps: a read that finds entry N missing lists the catalog; if a later entry
 *       exists, it throws {@link io.cairn.engine.catalog.CatalogIntegrityException} naming N. The
 *       hash chain itself is checked by whoever applies the entries (the SQL session) and by
 *       {@code snapshots verify}.
 *       An entry of a newer schema version than {@link CatalogEntry#SCHEMA_VERSION} is refused
 *       with an error naming it; the SQL text holds secret references only, never values.
 * </ul>
 */
public final class ObjectStoreCatalogLog implements CatalogLog {
  /** The key prefix of catalog entries. */
  public static final String PREFIX = "catalog/";

  private static final ObjectMapper JSON = new ObjectMapper();
  private final ObjectStore store;
  /** Positions below this are known to hold entries (entries are never removed): no request needed to check for a gap. */
  private final java.util.concurrent.atomic.AtomicLong knownEnd = new java.util.concurrent.atomic.AtomicLong(FIRST_POSITION);

  /** A catalog in {@code store} (which already carries the deployment's prefix). Does not own the store. */
  public ObjectStoreCatalogLog(ObjectStore store) {
    this.store = Objects.requireNonNull(store, "store");
  }

  /** The key of entry {@code position}. */
  public static String key(long position) {
    return String.format(Locale.ROOT, "%s%020d.json", PREFIX, position);
  }

  @Override
  public void append(CatalogEntry entry) {
    long p = entry.position();
    if (p > knownEnd.get() && store.head(key(p - 1)).isEmpty()) {
      throw new IllegalArgumentException(
          "Cannot append catalog entry " + p + " to " + describe() + ": entry " + (p - 1) + " does not exist (no gaps)");
    }
    try {
      store.putIfAbsent(key(p), encode(entry));
      knownEnd.accumulateAndGet(p + 1, Math::max);
    } catch (ObjectAlreadyExistsException e) {
      knownEnd.accumulateAndGet(p + 1, Math::max);
      throw new CatalogConflictException(p, describe());
    }
  }

  @Override
  public List<CatalogEntry> read(long from) {
    if (from < FIRST_POSITION) {
      throw new IllegalArgumentException("Cannot read catalog from " + from + ": positions start at " + FIRST_POSITION);
    }
    List<CatalogEntry> out = new ArrayList<>();
    for (long p = from; ; p++) {
      byte[] bytes;
      try {
        bytes = store.readAllBytes(key(p));
      } catch (ObjectNotFoundException e) {
        if (laterEntryExists(p)) {
          // an entry after p exists, so p existed when it was written (appends check their predecessor):
          // either p was written after our GET (a racing writer) or it was removed (a gap)
          try {
            bytes = store.readAllBytes(key(p));
          } catch (ObjectNotFoundException gone) {
            throw new io.cairn.engine.catalog.CatalogIntegrityException(p, "Catalog entry " + p + " (" + key(p)
                + ") is missing from " + store.describe() + " but later entries exist: a gap in the catalog. "
                + "Restore that object (from a backup or an object version) before starting; cairn will not replay a "
                + "history with a hole in it");
          }
          out.add(decode(p, bytes));
          continue;
        }
        knownEnd.accumulateAndGet(p, Math::max);
        return out;
      }
      out.add(decode(p, bytes));
    }
  }

  /** Whether the catalog holds an entry after position {@code missing}. */
  private boolean laterEntryExists(long missing) {
    for (var o : store.list(PREFIX)) {
      String name = o.key().substring(o.key().lastIndexOf('/') + 1);
      if (name.matches("\\d{20}\\.json") && Long.parseLong(name.substring(0, 20)) > missing) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String describe() {
    return store.describe() + " " + PREFIX;
  }

  static byte[] encode(CatalogEntry e) {
    ObjectNode n = JSON.createObjectNode();
    n.put("schemaVersion", e.schemaVersion());
    n.put("position", e.position());
    n.put("wallClock", e.wallClock().toString());
    n.put("sql", e.sql());
    if (e.chained()) {
      n.put("prevHash", e.prevHash());
      n.put("epoch", e.epoch());
    }
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(n);
    } catch (IOException ex) {
      throw new UncheckedIOException("Cannot encode catalog entry " + e.position() + ": " + ex.getMessage(), ex);
    }
  }

  CatalogEntry decode(long position, byte[] bytes) {
    String where = key(position) + " in " + store.describe();
    JsonNode n;
    try {
      n = JSON.readTree(bytes);
    } catch (IOException ex) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": not JSON (" + ex.getMessage() + ")", ex);
    }
    if (n == null || !n.isObject()) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": not a JSON object");
    }
    int version = n.path("schemaVersion").asInt(-1);
    if (version < 1) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": missing or bad 'schemaVersion'");
    }
    if (version > CatalogEntry.SCHEMA_VERSION) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": schema version " + version
          + " is newer than this build's " + CatalogEntry.SCHEMA_VERSION + "; upgrade cairn");
    }
    long stored = n.path("position").asLong(-1);
    if (stored != position) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": it says position " + stored);
    }
    JsonNode sql = n.get("sql");
    JsonNode time = n.get("wallClock");
    if (sql == null || !sql.isTextual() || time == null || !time.isTextual()) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": missing 'sql' or 'wallClock'");
    }
    try {
      return new CatalogEntry(position, sql.asText(), version, Instant.parse(time.asText()), n.path("prevHash").asText(""),
          n.path("epoch").asLong(0));
    } catch (DateTimeParseException ex) {
      throw new IllegalStateException("Cannot read catalog entry " + where + ": bad 'wallClock' " + time.asText(), ex);
    }
  }
}
