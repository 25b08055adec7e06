package io.cairn.engine.sink;

/** How a sink writes a view's changes ({@code ENVELOPE ...} of {@code CREATE SINK}). */
public enum SinkEnvelope {
  /**
   * Keyed by the sink's key columns: an insert or update is the new row, a delete is a tombstone
   * (a null value). The view must have exactly one row per key.
   */
  UPSERT,
  /**
   * Debezium's change event: {@code before} and {@code after} (null for an insert or a delete),
   * {@code op} ({@code c}, {@code u}, {@code d}), so that Kafka Connect consumers read it unchanged.
   * Keyed views get one event per changed key; a view without a key gets one event per unit of a
   * row's change.
   */
  DEBEZIUM
}
