package io.cairn.engine.source;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A source's position: opaque string pairs chosen by the connector (Kafka: partition → next
 * offset; Postgres: LSN fields; load generator: {@code offset}). Immutable, sorted by key so it
 * serializes stably into the manifest. {@link #EMPTY} means "from the beginning".
 */
public record SourceOffsets(Map<String, String> values) {
  public static final SourceOffsets EMPTY = new SourceOffsets(Map.of());

  public SourceOffsets {
    values = java.util.Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(values, "values")));
  }

  public static SourceOffsets of(String key, String value) {
    return new SourceOffsets(Map.of(key, value));
  }

  public boolean isEmpty() {
    return values.isEmpty();
  }

  public String get(String key) {
    return values.get(key);
  }

  /** The value of {@code key} as a long, or {@code defaultValue} when absent. */
  public long getLong(String key, long defaultValue) {
    String v = values.get(key);
    return v == null ? defaultValue : Long.parseLong(v);
  }
}
