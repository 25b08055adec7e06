package io.cairn.engine.source;

import io.cairn.engine.row.Row;

/**
 * Where a {@link Source} delivers records during {@link Source#poll}. Rows must conform to the
 * source's schema ({@link Source#schema()}).
 */
public interface SourceOutput {
  /** Adds {@code row} with multiplicity {@code diff} (+1 insert, -1 retract); for envelope NONE. */
  void append(Row row, long diff);

  /**
   * Replaces the row whose primary key is {@code key} by {@code row}, or deletes it when {@code
   * row} is null; for envelopes UPSERT and DEBEZIUM. The engine holds the previous row per key
   * (the upsert state, part of every snapshot) and emits the retraction itself.
   */
  void upsert(Row key, Row row);

  /**
   * Empties the source's collection: every row it holds is retracted, and records delivered
   * after this call (in the same poll or later) start from an empty collection; records
   * delivered earlier in the same tick are discarded. For a source that must read its table
   * again from scratch (Postgres after a lost replication slot, or a restart inside an
   * unfinished initial load), so that rows deleted meanwhile do not linger in the views.
   */
  default void reset() {
    throw new UnsupportedOperationException("Cannot reset: this output does not support it");
  }
}
