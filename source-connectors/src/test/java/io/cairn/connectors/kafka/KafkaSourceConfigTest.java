package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class KafkaSourceConfigTest {
  private static SourceDefinition def(Map<String, String> extra, Envelope envelope, List<String> pk) {
    Map<String, String> o = new HashMap<>(Map.of("brokers", "127.0.0.1:1", "topic", "orders"));
    o.putAll(extra);
    return new SourceDefinition("orders_src", "kafka", o, Schema.parse("id BIGINT, v TEXT"), pk, envelope);
  }

  @Test
  void connectorIsFoundByServiceLoaderUnderItsName() {
    assertThat(ServiceLoader.load(SourceConnector.class).stream().map(p -> p.get().name()))
        .contains("kafka");
  }

  @Test
  void validatesOptionsNamingTheOptionAtFault() {
    KafkaSourceConnector c = new KafkaSourceConnector();
    assertThat(c.validate(def(Map.of(), Envelope.NONE, List.of()))).isNotNull();
    assertThatThrownBy(() -> c.validate(new SourceDefinition("s", "kafka", Map.of("topic", "t"), Schema.parse("a BIGINT"), List.of(), Envelope.NONE)))
        .hasMessageContaining("option 'brokers' is required");
    assertThatThrownBy(() -> c.validate(def(Map.of("bad-records", "ignore"), Envelope.NONE, List.of())))
        .hasMessageContaining("option 'bad-records' 'ignore' is not one of fail, skip, dead-letter");
    assertThatThrownBy(() -> c.validate(def(Map.of("dead-letter-topic", "dlq"), Envelope.NONE, List.of())))
        .hasMessageContaining("option 'dead-letter-topic' requires bad-records = dead-letter (or skip)");
    assertThatThrownBy(() -> c.validate(def(Map.of("bad-records", "dead-letter"), Envelope.NONE, List.of())))
        .hasMessageContaining("option 'bad-records' 'dead-letter' requires option 'dead-letter-topic'");
    assertThat(KafkaSourceConfig.parse(c.validate(def(Map.of("bad-records", "dead-letter", "dead-letter-topic", "dlq"),
        Envelope.NONE, List.of()))).badRecords()).isEqualTo(KafkaSourceConfig.BadRecordPolicy.DEAD_LETTER);
    assertThatThrownBy(() -> c.validate(def(Map.of("topci", "x"), Envelope.NONE, List.of())))
        .hasMessageContaining("option 'topci' unknown option");
    assertThatThrownBy(() -> c.validate(def(Map.of("properties.group.id", "g"), Envelope.NONE, List.of())))
        .hasMessageContaining("properties.group.id");
    assertThatThrownBy(() -> c.validate(def(Map.of(), Envelope.UPSERT, List.of())))
        .hasMessageContaining("ENVELOPE UPSERT needs a PRIMARY KEY");
    assertThatThrownBy(() -> c.validate(def(Map.of(), Envelope.UPSERT, List.of("nope"))))
        .hasMessageContaining("primary key column 'nope' is not in the schema");
    assertThatThrownBy(() -> c.validate(def(Map.of("format", "avro"), Envelope.NONE, List.of())))
        .hasMessageContaining("option 'format' 'avro' is not supported");
  }

  @Test
  void credentialsMustBeSecretReferencesAndResolveOnlyAtOpen() {
    String literal = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\";";
    assertThatThrownBy(() -> KafkaSourceConfig.parse(def(Map.of("properties.sasl.jaas.config", literal), Envelope.NONE, List.of())))
        .hasMessageContaining("SECRET 'ENV_VARIABLE'")
        .hasMessageNotContaining("hunter2");

    SourceDefinition d = def(Map.of("properties.sasl.jaas.config", "SECRET 'KAFKA_JAAS'", "properties.security.protocol", "SASL_PLAINTEXT"),
        Envelope.NONE, List.of());
    assertThat(KafkaSourceConfig.parse(d).clientProperties()).containsEntry("sasl.jaas.config", "SECRET 'KAFKA_JAAS'");
    Secrets secrets = ref -> {
      if (ref.equals("KAFKA_JAAS")) {
        return literal;
      }
      throw new IllegalArgumentException("Cannot resolve secret: '" + ref + "' is not set");
    };
    KafkaSourceConfig resolved = KafkaSourceConfig.parse(d, secrets);
    assertThat(resolved.clientProperties())
        .containsEntry("sasl.jaas.config", literal)
        .containsEntry("security.protocol", "SASL_PLAINTEXT");
    assertThat(KafkaSource.consumerProperties(resolved)).containsEntry("security.protocol", "SASL_PLAINTEXT")
        .containsEntry("auto.offset.reset", "none").containsEntry("enable.auto.commit", "false")
        .doesNotContainKey("group.id");
    assertThat(resolved.toString()).contains("sasl.jaas.config").doesNotContain("hunter2");

    SourceDefinition missing = def(Map.of("properties.sasl.jaas.config", "SECRET 'NOT_SET'"), Envelope.NONE, List.of());
    assertThatThrownBy(() -> KafkaSourceConfig.parse(missing, secrets))
        .hasMessageContaining("option 'properties.sasl.jaas.config'")
        .hasMessageContaining("NOT_SET");
  }

  @Test
  void cairnsClientDefaultsGiveWayToTheSourcesProperties() {
    KafkaSourceConfig plain = KafkaSourceConfig.parse(def(Map.of(), Envelope.NONE, List.of()));
    assertThat(KafkaSource.consumerProperties(plain))
        .containsEntry("max.partition.fetch.bytes", Integer.toString(8 << 20))
        .containsEntry("isolation.level", "read_committed");
    KafkaSourceConfig own = KafkaSourceConfig.parse(
        def(Map.of("properties.max.partition.fetch.bytes", "1048576", "properties.isolation.level", "read_uncommitted"),
            Envelope.NONE, List.of()));
    assertThat(KafkaSource.consumerProperties(own))
        .containsEntry("max.partition.fetch.bytes", "1048576")
        .containsEntry("isolation.level", "read_uncommitted");
  }

  @Test
  void invalidKafkaClientSettingsFailAtOpenNamingTheSetting() {
    assertThatThrownBy(() -> new KafkaSourceConnector().open(
            def(Map.of("properties.max.poll.records", "many"), Envelope.NONE, List.of()), ref -> null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Cannot open source 'orders_src'")
        .hasMessageContaining("max.poll.records");
  }

  @Test
  void retentionGuardWarnsOnlyWhenTimeRetentionIsShorterThanTheInterval() {
    var day = java.time.Duration.ofDays(1);
    assertThat(KafkaRetentionGuard.evaluate("s", "t", "3600000", "delete", day)).get().asString()
        .contains("Topic 't'", "retention.ms=3600000", "PT24H");
    assertThat(KafkaRetentionGuard.evaluate("s", "t", "-1", "delete", day)).isEmpty();
    assertThat(KafkaRetentionGuard.evaluate("s", "t", "3600000", "compact", day)).isEmpty();
    assertThat(KafkaRetentionGuard.evaluate("s", "t", "172800000", "delete", day)).isEmpty();
  }
}
