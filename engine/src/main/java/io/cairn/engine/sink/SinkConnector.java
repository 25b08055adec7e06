package io.cairn.engine.sink;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Secrets;

/**
 * Creates {@link Sink}s of one kind ({@code CREATE SINK ... INTO KAFKA (...)}), found through
 * {@link java.util.ServiceLoader} as source connectors are; checks a definition before anything
 * is written to the catalog.
 */
public interface SinkConnector {
  /** The connector's name in SQL, e.g. {@code kafka}. */
  String name();

  /**
   * Checks {@code def} against the columns of what it reads, without connecting anywhere.
   *
   * @throws IllegalArgumentException naming the option or column that is wrong
   */
  void validate(SinkDefinition def, Schema schema);

  /**
   * Makes the sink's client (no I/O yet: {@link Sink#open} connects). {@code keyCols} are the
   * indices of the key columns in {@code schema}; {@code points} is told the named moments of a
   * commit ({@code sink.before-send}, {@code sink.before-commit}, {@code sink.after-commit}), for
   * the node's crash points in kill tests.
   */
  Sink create(SinkDefinition def, Schema schema, int[] keyCols, Secrets secrets, java.util.function.Consumer<String> points);
}
