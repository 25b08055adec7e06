package io.cairn.engine.catalog;

import java.time.Instant;
import java.util.Objects;

/**
 * One catalog command: the DDL statement's SQL text as written (secrets appear only as
 * references), the schema version of the entry and the SQL dialect it is written in, and the
 * wall-clock time it was appended. {@code position} is its place in the log; the dataflow a
 * {@code CREATE} entry makes has that position as its id.
 */
public record CatalogEntry(long position, String sql, int schemaVersion, Instant wallClock) {
  /** The schema version this build writes and reads. */
  public static final int SCHEMA_VERSION = 1;

  public CatalogEntry {
    if (position < 0) {
      throw new IllegalArgumentException("Cannot create catalog entry: position must be >= 0, got " + position);
    }
    Objects.requireNonNull(sql, "sql");
    Objects.requireNonNull(wallClock, "wallClock");
    if (sql.isBlank()) {
      throw new IllegalArgumentException("Cannot create catalog entry " + position + ": SQL text is blank");
    }
    if (schemaVersion < 1) {
      throw new IllegalArgumentException("Cannot create catalog entry " + position + ": schema version must be >= 1, got " + schemaVersion);
    }
  }

  /** An entry of the current schema version. */
  public static CatalogEntry of(long position, String sql, Instant wallClock) {
    return new CatalogEntry(position, sql, SCHEMA_VERSION, wallClock);
  }
}
