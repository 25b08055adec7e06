package io.cairn.engine.sink;

import java.util.Map;

/**
 * Creates {@link Sink}s of one kind ({@code CREATE SINK ... INTO KAFKA (...)}), found through
 * {@link java.util.ServiceLoader} as source connectors are; validates its options before anything
 * is written to the catalog.
 */
public interface SinkConnector {
  /** The connector's name in SQL, e.g. {@code kafka}. */
  String name();

  /**
   * Checks {@code options} without connecting anywhere.
   *
   * @throws IllegalArgumentException naming the option that is wrong
   */
  void validate(Map<String, String> options);

  /** Opens the sink named {@code name} for the view whose feed is {@code feed}. */
  Sink open(String name, ChangeFeed feed, Map<String, String> options);
}
