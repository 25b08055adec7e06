package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Read throughput of the Kafka source (UPSERT, JSON) on the in-process broker. Not part of the
 * default build; run with:
 * {@code mvn -B -o -q -pl source-connectors -am verify -Dtest=KafkaSourceThroughputTest -Dcairn.bench=true -Dsurefire.failIfNoSpecifiedTests=false}
 */
@EnabledIfSystemProperty(named = "cairn.bench", matches = "true")
class KafkaSourceThroughputTest {
  /** The source's options; {@code -Dcairn.bench.kafka.<client property>=value} adds client properties. */
  private static Map<String, String> options(String brokers, String topic) {
    Map<String, String> o = new java.util.HashMap<>(Map.of("brokers", brokers, "topic", topic));
    System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("cairn.bench.kafka."))
        .forEach(k -> o.put("properties." + k.substring("cairn.bench.kafka.".length()), System.getProperty(k)));
    return o;
  }

  @Test
  void upsertThroughput() {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("bench"), 3);
    int n = Integer.getInteger("cairn.bench.records", 300_000);
    for (int start = 0; start < n; start += 50_000) {
      List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>();
      for (int i = start; i < Math.min(n, start + 50_000); i++) {
        long id = i % 10_000;
        batch.add(new ProducerRecord<>(topic, (int) (id % 3), ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8),
            ("{\"id\":" + id + ",\"name\":\"name-" + i + "\",\"amount\":" + (i * 0.25) + ",\"ts\":" + (1_700_000_000_000_000L + i) + "}")
                .getBytes(StandardCharsets.UTF_8)));
      }
      broker.produceAll(batch);
    }
    SourceDefinition def = new SourceDefinition("bench", "kafka",
        options(broker.bootstrapServers(), topic),
        Schema.parse("id BIGINT, name TEXT, amount DOUBLE, ts TIMESTAMP"), List.of("id"), Envelope.UPSERT);
    OracleOutput out = new OracleOutput();
    try (Source s = new KafkaSourceConnector().open(def, ref -> null)) {
      long t0 = System.nanoTime();
      s.seek(SourceOffsets.EMPTY);
      long delivered = 0;
      while (!(delivered >= n && s.caughtUp())) {
        delivered += s.poll(out, 10_000, Duration.ofMillis(100));
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      Map<String, Long> load = s.meter().read();
      System.out.printf("kafka upsert throughput: %d records in %.2f s = %.0f records/s; meter %s%n",
          delivered, secs, delivered / secs, load);
      assertThat(load.get(LoadMeter.RECORDS)).isEqualTo(n);
      assertThat(out.upserts).hasSize(Math.min(n, 10_000));
    }
  }
}
