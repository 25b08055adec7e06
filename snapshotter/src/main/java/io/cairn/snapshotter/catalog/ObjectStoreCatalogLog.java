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
 *   <li>Reads remember every entry they decoded (and appends every entry they wrote): an entry
 *       never changes, so a later read, here or on a log sharing them ({@link #on}), asks only
 *       for positions beyond them. A recovery reads the catalog several times (the start's chain
 *       check, the replay up to the snapshot, the rest, init); each entry is fetched once. A read
 *       that has to fetch GETs several positions at once, in windows that double up to {@value
 *       #READ_WINDOW} (so a long catalog on S3 costs a few round trips, not one per entry, and a
 *       read at the end costs one GET): its ending probe may also GET up to {@value #READ_WINDOW}
 *       - 1 absent positions. A hand-edited entry is therefore seen by a new process (a restart,
 *       {@code cairn snapshots verify}), not by a node that had read it already.
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

  /** The most positions one read GETs at once. */
  public static final int READ_WINDOW = 16;

  private static final ObjectMapper JSON = new ObjectMapper();
  /** GETs of a read window beyond its first; daemon threads that end when idle. */
  private static final java.util.concurrent.ExecutorService READS = java.util.concurrent.Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "cairn-catalog-read");
    t.setDaemon(true);
    return t;
  });

  private final ObjectStore store;
  /** Positions below this are known to hold entries (entries are never removed): no request needed to check for a gap. */
  private final java.util.concurrent.atomic.AtomicLong knownEnd;
  /** Entries decoded or appended here or by a log sharing them: an entry never changes. */
  private final java.util.Map<Long, CatalogEntry> known;

  /** A catalog in {@code store} (which already carries the deployment's prefix). Does not own the store. */
  public ObjectStoreCatalogLog(ObjectStore store) {
    this(store, new java.util.concurrent.atomic.AtomicLong(FIRST_POSITION), new java.util.concurrent.ConcurrentHashMap<>());
  }

  private ObjectStoreCatalogLog(ObjectStore store, java.util.concurrent.atomic.AtomicLong knownEnd, java.util.Map<Long, CatalogEntry> known) {
    this.store = Objects.requireNonNull(store, "store");
    this.knownEnd = knownEnd;
    this.known = known;
  }

  /**
   * This catalog through {@code view}, another view of the same store (one that fences writes,
   * say), sharing the entries read so far, so that they are not fetched again.
   */
  public ObjectStoreCatalogLog on(ObjectStore view) {
    return new ObjectStoreCatalogLog(view, knownEnd, known);
  }

  /** The key of entry {@code position}. */
  public static String key(long position) {
    return io.cairn.objectstore.NumberedObjects.key(PREFIX, position);
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
      known.put(p, entry);
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
    long p = from;
    int window = 1;
    while (true) {
      CatalogEntry cached = known.get(p);
      if (cached != null) {
        out.add(cached);
        p++;
        continue;
      }
      byte[][] got = fetch(p, window);
      int i = 0;
      while (i < got.length && got[i] != null) {
        out.add(remember(p + i, got[i]));
        i++;
      }
      if (i == got.length) {
        p += got.length;
        window = Math.min(2 * window, READ_WINDOW);
        continue;
      }
      long missing = p + i;
      boolean laterInWindow = false;
      for (int j = i + 1; j < got.length; j++) {
        laterInWindow |= got[j] != null;
      }
      if (!laterInWindow && !laterEntryExists(missing)) {
        knownEnd.accumulateAndGet(missing, Math::max);
        return out;
      }
      // an entry after `missing` exists, so `missing` existed when it was written (appends check their
      // predecessor): either it was written after our GET (a racing writer) or it was removed (a gap)
      byte[] again = getOrNull(missing);
      if (again == null) {
        throw new io.cairn.engine.catalog.CatalogIntegrityException(missing, "Catalog entry " + missing + " (" + key(missing)
            + ") is missing from " + store.describe() + " but later entries exist: a gap in the catalog. "
            + "Restore that object (from a backup or an object version) before starting; cairn will not replay a "
            + "history with a hole in it");
      }
      out.add(remember(missing, again));
      p = missing + 1;
      window = 1;
    }
  }

  private CatalogEntry remember(long position, byte[] bytes) {
    CatalogEntry e = decode(position, bytes);
    known.put(position, e);
    return e;
  }

  /** Positions {@code from .. from + n - 1}, each null when absent; all GETs at once. */
  private byte[][] fetch(long from, int n) {
    byte[][] out = new byte[n][];
    if (n == 1) {
      out[0] = getOrNull(from);
      return out;
    }
    List<java.util.concurrent.CompletableFuture<byte[]>> gets = new ArrayList<>(n - 1);
    for (int i = 1; i < n; i++) {
      long q = from + i;
      gets.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> getOrNull(q), READS));
    }
    out[0] = getOrNull(from);
    for (int i = 1; i < n; i++) {
      try {
        out[i] = gets.get(i - 1).join();
      } catch (java.util.concurrent.CompletionException e) {
        if (e.getCause() instanceof RuntimeException re) {
          throw re;
        }
        throw e;
      }
    }
    return out;
  }

  private byte[] getOrNull(long position) {
    try {
      return store.readAllBytes(key(position));
    } catch (ObjectNotFoundException e) {
      return null;
    }
  }

  /** Whether the catalog holds an entry after position {@code missing}. */
  private boolean laterEntryExists(long missing) {
    for (var o : store.list(PREFIX)) {
      String name = o.key().substring(o.key().lastIndexOf('/') + 1);
      if (io.cairn.objectstore.NumberedObjects.number(name) > missing) {
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
