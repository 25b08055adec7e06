package io.cairn.engine.sink;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A sink as {@code CREATE SINK} declares it, stored in the catalog like a source or a view.
 *
 * @param id the catalog position of its CREATE statement (a sink dropped and created again under
 *     the same name is another sink: another id, another identity in the destination)
 * @param name the sink's name
 * @param from the source or view whose changes it writes
 * @param connector the {@link SinkConnector} name, e.g. {@code kafka}
 * @param options the connector's options (secrets stay references)
 * @param format the record format ({@code json})
 * @param envelope how changes become records
 * @param key the key columns (names of {@code from}'s columns); empty for a DEBEZIUM sink of a
 *     view without a key
 */
public record SinkDefinition(
    long id, String name, String from, String connector, Map<String, String> options, String format, SinkEnvelope envelope,
    List<String> key) {
  public SinkDefinition {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(connector, "connector");
    options = Map.copyOf(options);
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(envelope, "envelope");
    key = List.copyOf(key);
  }
}
