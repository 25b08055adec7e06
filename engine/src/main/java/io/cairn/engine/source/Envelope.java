package io.cairn.engine.source;

/** How a source's records become updates. */
public enum Envelope {
  /** Append-only: every record is an insert (a connector may also emit retractions). */
  NONE,
  /** Keyed: a record replaces the previous row with the same primary key; a null value deletes it. */
  UPSERT,
  /** Debezium before/after change events; applied by primary key like UPSERT. */
  DEBEZIUM
}
