package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.RestartStrategy;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Regression tests for issue 30 (items 2 and 8): bad records in an engine, against a real broker.
 * A record that cannot be dead-lettered restarted its source forever; under {@code fail} the good
 * records read in the same tick as the bad one never reached the views.
 */
class KafkaBadRecordsEngineTest {
  private static final Schema SCHEMA = Schema.parse("id BIGINT, name TEXT");
  private static final RestartStrategy FAST = new RestartStrategy(Duration.ofMillis(20), Duration.ofMillis(200), 2, 0.2, 0);

  private final KafkaBroker broker = KafkaBroker.shared();

  private Engine engine(TickPolicy policy) {
    return Engine.builder().workers(2).tickPolicy(policy).restartStrategy(FAST).secrets(ref -> {
      throw new IllegalArgumentException("no secrets here");
    }).connector(new KafkaSourceConnector()).build();
  }

  private SourceDefinition def(String name, String topic, Map<String, String> extra) {
    Map<String, String> o = new HashMap<>();
    o.put("brokers", broker.bootstrapServers());
    o.put("topic", topic);
    o.putAll(extra);
    return new SourceDefinition(name, "kafka", o, SCHEMA, List.of(), Envelope.NONE);
  }

  private static byte[] good(long id) {
    return ("{\"id\":" + id + ",\"name\":\"n" + id + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  private static List<Row> rows(long... ids) {
    List<Row> out = new ArrayList<>();
    for (long id : ids) {
      out.add(Row.of(id, "n" + id));
    }
    return out;
  }

  private static long[] range(long from, long to) {
    return java.util.stream.LongStream.range(from, to).toArray();
  }

  /** Produces values in order to partition 0 with a producer that may send records up to 8 MiB. */
  private void produce(String topic, List<byte[]> values) {
    Map<String, Object> p = new HashMap<>();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(8 << 20));
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      for (byte[] v : values) {
        producer.send(new ProducerRecord<>(topic, 0, "k".getBytes(StandardCharsets.UTF_8), v)).get(30, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Ticks until {@code done} or the deadline; returns the states seen. */
  private static List<SourceStatus.State> tickUntil(Engine e, String source, Duration limit, java.util.function.BooleanSupplier done) {
    List<SourceStatus.State> seen = new ArrayList<>();
    long deadline = System.nanoTime() + limit.toNanos();
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      e.tick();
      e.sourceStatus(source).ifPresent(st -> seen.add(st.state()));
    }
    return seen;
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
    return new String(r.headers().lastHeader(name).value(), StandardCharsets.UTF_8);
  }

  /** Item 8: the records before a bad one under {@code fail} are applied, once, and the offsets stop right before it. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void underFailTheViewsHoldEveryRecordBeforeTheBadOneAndRecoveryResumesExactly() {
    // one tick reads everything; then ticks of 3 records, where the bad one may be met while reading ahead
    for (TickPolicy policy : List.of(new TickPolicy(100_000, Duration.ofMillis(200)), new TickPolicy(3, Duration.ofMillis(50)))) {
      String topic = broker.createTopic(KafkaBroker.uniqueTopic("failkeep"), 1);
      List<byte[]> values = new ArrayList<>();
      for (long id = 0; id < 10; id++) {
        values.add(good(id));
      }
      values.add("{not json".getBytes(StandardCharsets.UTF_8)); // offset 10
      for (long id = 11; id < 15; id++) {
        values.add(good(id));
      }
      produce(topic, values);
      EngineState snapshot;
      try (Engine e = engine(policy)) {
        e.createSource(1, def("src", topic, Map.of("bad-records", "fail")));
        tickUntil(e, "src", Duration.ofSeconds(30),
            () -> e.sourceStatus("src").map(st -> st.state() == SourceStatus.State.FAILED).orElse(false));
        SourceStatus st = e.sourceStatus("src").orElseThrow();
        assertThat(st.state()).as("tick policy %s", policy).isEqualTo(SourceStatus.State.FAILED);
        assertThat(st.error()).contains("topic '" + topic + "' partition 0 offset 10");
        assertThat(e.offsets().get("src").values()).as("offsets right after the last good record").isEqualTo(Map.of("0", "10"));
        assertThat(e.peek("src")).as("tick policy %s: every record before the bad one, once", policy)
            .containsExactlyInAnyOrderElementsOf(rows(range(0, 10)));
        snapshot = e.capture();
      }
      // recovery with the policy changed to skip: nothing lost, nothing twice
      try (Engine e = engine(policy)) {
        e.createSource(1, def("src", topic, Map.of("bad-records", "skip")));
        e.restore(snapshot);
        tickUntil(e, "src", Duration.ofSeconds(30), () -> e.offsets().get("src").values().equals(Map.of("0", "15")));
        long[] expected = java.util.stream.LongStream.concat(java.util.stream.LongStream.range(0, 10),
            java.util.stream.LongStream.range(11, 15)).toArray();
        assertThat(e.peek("src")).containsExactlyInAnyOrderElementsOf(rows(expected));
      }
    }
  }

  /** Item 2: a 5 MB bad record is larger than the dead-letter producer's 1 MiB request limit. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBadRecordTooLargeForTheDeadLetterTopicIsWrittenCutAndTheSourceMovesOn() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("bigbad"), 1, Map.of("max.message.bytes", Integer.toString(8 << 20)));
    String dlq = broker.createTopic(topic + "-dlq", 1);
    byte[] big = new byte[5 * 1024 * 1024];
    Arrays.fill(big, (byte) 'x');
    big[0] = '{'; // not JSON
    produce(topic, List.of(good(0), good(1), big, good(3), good(4)));
    try (Engine e = engine(new TickPolicy(100_000, Duration.ofMillis(100)))) {
      e.createSource(1, def("src", topic, Map.of("bad-records", "dead-letter", "dead-letter-topic", dlq)));
      List<SourceStatus.State> seen = tickUntil(e, "src", Duration.ofSeconds(30),
          () -> e.caughtUp() && e.offsets().get("src").values().equals(Map.of("0", "5")));
      SourceStatus st = e.sourceStatus("src").orElseThrow();
      assertThat(seen).as("never restarted").doesNotContain(SourceStatus.State.RESTARTING, SourceStatus.State.FAILED);
      assertThat(st.state()).isEqualTo(SourceStatus.State.RUNNING);
      assertThat(e.offsets().get("src").values()).isEqualTo(Map.of("0", "5"));
      assertThat(e.caughtUp()).isTrue();
      assertThat(e.peek("src")).containsExactlyInAnyOrderElementsOf(rows(0, 1, 3, 4));
      assertThat(st.load().get("dead_letter_records")).isEqualTo(1);
    }
    List<ConsumerRecord<byte[], byte[]>> dead = broker.readAll(dlq);
    assertThat(dead).hasSize(1);
    ConsumerRecord<byte[], byte[]> d = dead.get(0);
    assertThat(header(d, "cairn.topic")).isEqualTo(topic);
    assertThat(header(d, "cairn.partition")).isEqualTo("0");
    assertThat(header(d, "cairn.offset")).isEqualTo("2");
    assertThat(header(d, "cairn.size")).isEqualTo(Integer.toString(big.length));
    assertThat(header(d, "cairn.error")).contains("JSON");
    assertThat(header(d, "cairn.truncated")).contains("of " + big.length + " bytes");
    assertThat(d.value().length).as("as much of the value as fits").isBetween(512 * 1024, 1024 * 1024);
    assertThat(d.value()).isEqualTo(Arrays.copyOf(big, d.value().length));
  }

  /** Item 2, last resort: a dead-letter topic that refuses even the coordinates fails the source at the record. */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aBadRecordThatCannotBeDeadLetteredAtAllFailsTheSourceAtThatRecord() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("nodlq"), 1);
    String dlq = broker.createTopic(topic + "-dlq", 1, Map.of("max.message.bytes", "64"));
    produce(topic, List.of(good(0), good(1), "{not json".getBytes(StandardCharsets.UTF_8), good(3)));
    try (Engine e = engine(new TickPolicy(100_000, Duration.ofMillis(100)))) {
      e.createSource(1, def("src", topic, Map.of("bad-records", "dead-letter", "dead-letter-topic", dlq)));
      tickUntil(e, "src", Duration.ofSeconds(30),
          () -> e.sourceStatus("src").map(st -> st.state() == SourceStatus.State.FAILED).orElse(false));
      SourceStatus st = e.sourceStatus("src").orElseThrow();
      assertThat(st.state()).isEqualTo(SourceStatus.State.FAILED);
      assertThat(st.error()).contains("topic '" + topic + "' partition 0 offset 2").contains("dead-letter topic '" + dlq + "'");
      assertThat(e.offsets().get("src").values()).isEqualTo(Map.of("0", "2"));
      assertThat(e.peek("src")).containsExactlyInAnyOrderElementsOf(rows(0, 1));
    }
    assertThat(broker.readAll(dlq)).isEmpty();
  }
}
