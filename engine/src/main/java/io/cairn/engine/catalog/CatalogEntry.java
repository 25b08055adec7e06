package io.cairn.engine.catalog;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Objects;

/**
 * One catalog command: the DDL statement's SQL text as written (secrets appear only as
 * references), the schema version of the entry, and the wall-clock time it was appended. {@code
 * position} is its place in the log; the dataflow a {@code CREATE} entry makes has that position
 * as its id.
 *
 * <p>Integrity (schema version 2): {@code prevHash} is the {@link #hash()} of entry {@code
 * position - 1} ("" for entry 0), so the log is a hash chain: an entry removed from the middle, or
 * edited, breaks the chain at the next entry; {@code epoch} is the epoch of the node that wrote it
 * (0 when unknown). Entries of schema version 1 (older builds) carry neither; the chain is
 * checked from the first version-2 entry on.
 */
public record CatalogEntry(long position, String sql, int schemaVersion, Instant wallClock, String prevHash, long epoch) {
  /** The schema version this build writes; it reads versions 1 and 2. */
  public static final int SCHEMA_VERSION = 2;

  public CatalogEntry {
    if (position < 0) {
      throw new IllegalArgumentException("Cannot create catalog entry: position must be >= 0, got " + position);
    }
    Objects.requireNonNull(sql, "sql");
    Objects.requireNonNull(wallClock, "wallClock");
    prevHash = prevHash == null ? "" : prevHash;
    if (sql.isBlank()) {
      throw new IllegalArgumentException("Cannot create catalog entry " + position + ": SQL text is blank");
    }
    if (schemaVersion < 1) {
      throw new IllegalArgumentException("Cannot create catalog entry " + position + ": schema version must be >= 1, got " + schemaVersion);
    }
  }

  /** A version-1 entry (no chain): as older builds wrote them. */
  public CatalogEntry(long position, String sql, int schemaVersion, Instant wallClock) {
    this(position, sql, schemaVersion, wallClock, "", 0);
  }

  /** An entry of the current schema version with no predecessor hash (tests). */
  public static CatalogEntry of(long position, String sql, Instant wallClock) {
    return new CatalogEntry(position, sql, SCHEMA_VERSION, wallClock, "", 0);
  }

  /** An entry of the current schema version chained to {@code prevHash}, written by {@code epoch}. */
  public static CatalogEntry of(long position, String sql, Instant wallClock, String prevHash, long epoch) {
    return new CatalogEntry(position, sql, SCHEMA_VERSION, wallClock, prevHash, epoch);
  }

  /** Whether this entry carries the hash of its predecessor (schema version 2 or later). */
  public boolean chained() {
    return schemaVersion >= 2;
  }

  /** SHA-256 (hex) of every field of this entry: what entry {@code position + 1} records as its {@code prevHash}. */
  public String hash() {
    String canonical = position + "\n" + schemaVersion + "\n" + wallClock + "\n" + prevHash + "\n" + epoch + "\n" + sql;
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
