package io.cairn.connectors.kafka;

import io.cairn.engine.row.Schema;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkConnector;
import io.cairn.engine.sink.SinkDefinition;
import io.cairn.engine.source.Secrets;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;

/**
 * {@code CREATE SINK name FROM view INTO KAFKA (BROKERS '...', TOPIC '...') FORMAT JSON ENVELOPE
 * UPSERT | DEBEZIUM}: a view's changes written to a Kafka topic exactly once ({@link KafkaSink}).
 *
 * <table>
 *   <caption>Options</caption>
 *   <tr><th>option</th><th>meaning</th><th>default</th></tr>
 *   <tr><td>{@code brokers}</td><td>bootstrap servers</td><td>required</td></tr>
 *   <tr><td>{@code topic}</td><td>the topic the changes go to</td><td>required</td></tr>
 *   <tr><td>{@code progress-topic}</td><td>where the progress records go (one partition)</td><td>{@code <topic>-progress}</td></tr>
 *   <tr><td>{@code create-topic}</td><td>create missing topics ({@code false}: a missing topic is an error)</td><td>{@code true}</td></tr>
 *   <tr><td>{@code partitions}, {@code replication-factor}</td><td>for a topic cairn creates</td><td>1, 1</td></tr>
 *   <tr><td>{@code transactional-id}</td><td>the producer's identity, stable across restarts and nodes</td>
 *       <td>{@code cairn-sink-<topic>-<name>-<catalog position>}</td></tr>
 *   <tr><td>{@code max-records-per-transaction}</td><td>a larger set of changes is split (see {@link KafkaSink})</td><td>50000</td></tr>
 *   <tr><td>{@code transaction-timeout-ms}</td><td>Kafka's {@code transaction.timeout.ms}</td><td>60000</td></tr>
 *   <tr><td>{@code properties.*}</td><td>other Kafka client settings, e.g. {@code properties.security.protocol}</td><td></td></tr>
 * </table>
 */
public final class KafkaSinkConnector implements SinkConnector {
  static final Set<String> OPTIONS = Set.of("brokers", "topic", "progress-topic", "create-topic", "partitions", "replication-factor",
      "transactional-id", "max-records-per-transaction", "transaction-timeout-ms");
  /** Settings the sink owns: a {@code properties.*} value for them would break exactly-once. */
  static final Set<String> OWNED = Set.of("transactional.id", "enable.idempotence", "acks", "isolation.level", "key.serializer",
      "value.serializer", "key.deserializer", "value.deserializer", "bootstrap.servers", "enable.auto.commit", "group.id");

  @Override
  public String name() {
    return "kafka";
  }

  @Override
  public void validate(SinkDefinition def, Schema schema) {
    String what = "Cannot create sink '" + def.name() + "'";
    if (!def.format().equals("json")) {
      throw new IllegalArgumentException(what + ": FORMAT " + def.format().toUpperCase(java.util.Locale.ROOT) + " is not supported (supported: JSON)");
    }
    for (Map.Entry<String, String> e : def.options().entrySet()) {
      String k = e.getKey();
      if (k.startsWith("properties.")) {
        String setting = k.substring("properties.".length());
        if (OWNED.contains(setting)) {
          throw new IllegalArgumentException(what + ": option '" + k + "': cairn sets " + setting + " itself (exactly-once depends on it)");
        }
      } else if (!OPTIONS.contains(k)) {
        throw new IllegalArgumentException(what + ": unknown option '" + k + "' (supported: " + new java.util.TreeSet<>(OPTIONS)
            + ", properties.<kafka setting>)");
      }
    }
    for (String required : new String[] {"brokers", "topic"}) {
      String v = def.options().get(required);
      if (v == null || v.isBlank()) {
        throw new IllegalArgumentException(what + ": option '" + required + "' is required, e.g. INTO KAFKA (BROKERS 'host:9092', TOPIC 'orders-out')");
      }
    }
    String topic = def.options().get("topic");
    if (!topic.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException(what + ": topic '" + topic + "' is not a valid Kafka topic name (letters, digits, '.', '_', '-')");
    }
    positive(def, "partitions", 1, what);
    positive(def, "replication-factor", 1, what);
    positive(def, "max-records-per-transaction", 50_000, what);
    positive(def, "transaction-timeout-ms", 60_000, what);
    String create = def.options().getOrDefault("create-topic", "true").toLowerCase(java.util.Locale.ROOT);
    if (!create.equals("true") && !create.equals("false")) {
      throw new IllegalArgumentException(what + ": option 'create-topic' must be true or false, not '" + create + "'");
    }
    if (def.key().isEmpty() && def.envelope() == io.cairn.engine.sink.SinkEnvelope.UPSERT) {
      throw new IllegalArgumentException(what + ": ENVELOPE UPSERT needs key columns");
    }
  }

  static long positive(SinkDefinition def, String option, long dflt, String what) {
    String v = def.options().get(option);
    if (v == null) {
      return dflt;
    }
    try {
      long n = Long.parseLong(v.strip());
      if (n < 1) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + ": option '" + option + "' must be a positive whole number, not '" + v + "'");
    }
  }

  /** The option's value, a secret reference resolved. */
  static String resolve(SinkDefinition def, String option, String value, Secrets secrets) {
    Matcher m = Secrets.REFERENCE.matcher(value);
    if (!m.matches() || secrets == null) {
      return value;
    }
    String v = secrets.resolve(m.group(1));
    if (v == null) {
      throw new IllegalArgumentException("Cannot open sink '" + def.name() + "': option '" + option + "': secret '" + m.group(1) + "' has no value");
    }
    return v;
  }

  @Override
  public Sink create(SinkDefinition def, Schema schema, int[] keyCols, Secrets secrets, java.util.function.Consumer<String> points) {
    return new KafkaSink(def, schema, keyCols, secrets, points);
  }
}
