package io.cairn.engine.dataflow;

import io.cairn.engine.row.Schema;

/** A readable collection (a source's or a view's output): its schema, contents and this tick's changes. */
public interface Collection {
  String name();

  Schema schema();

  /** Rows of {@code shard} as of the last sealed tick. */
  Rows contents(int shard);

  /** Changes of {@code shard} in the current tick (valid after the owner has run this tick). */
  Rows changes(int shard);

  /** The arrangement holding the collection. */
  Arrangement arrangement();

  Layout layout();
}
