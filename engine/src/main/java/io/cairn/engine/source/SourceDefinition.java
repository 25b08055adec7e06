package io.cairn.engine.source;

import io.cairn.engine.row.Schema;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * What a {@code CREATE SOURCE} statement says: the source's name, the connector that reads it,
 * the connector's options (secrets are references: the name of an environment variable, never
 * the value), the declared schema (empty when the connector supplies it), the primary key
 * columns (required for UPSERT and DEBEZIUM envelopes) and the envelope.
 */
public record SourceDefinition(
    String name,
    String connector,
    Map<String, String> options,
    Schema schema,
    List<String> primaryKey,
    Envelope envelope) {
  public SourceDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(connector, "connector");
    options = java.util.Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(options, "options")));
    schema = schema == null ? Schema.EMPTY : schema;
    primaryKey = List.copyOf(primaryKey == null ? List.of() : primaryKey);
    envelope = envelope == null ? Envelope.NONE : envelope;
  }

  /** An option's value, or {@code defaultValue}. */
  public String option(String key, String defaultValue) {
    return options.getOrDefault(key, defaultValue);
  }

  /** A required option; throws naming the source and the key when absent. */
  public String requireOption(String key) {
    String v = options.get(key);
    if (v == null || v.isBlank()) {
      throw new IllegalArgumentException(
          "Cannot create source '" + name + "': option '" + key + "' is required by connector '" + connector + "'");
    }
    return v;
  }
}
