package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Kafka source against a real broker, checked against a naive oracle. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 4 s
class KafkaSourceTest {
  private static final Schema SCHEMA = Schema.parse("id BIGINT, name TEXT, amount DOUBLE, ts TIMESTAMP");
  private static final Secrets NO_SECRETS = ref -> {
    throw new IllegalArgumentException("Cannot resolve secret: '" + ref + "' is not set");
  };

  private final KafkaBroker broker = KafkaBroker.shared();

  private SourceDefinition def(String topic, Envelope envelope, Map<String, String> extra) {
    Map<String, String> o = new HashMap<>();
    o.put("brokers", broker.bootstrapServers());
    o.put("topic", topic);
    o.putAll(extra);
    return new SourceDefinition("src_" + topic.replace('-', '_'), "kafka", o, SCHEMA,
        envelope == Envelope.NONE ? List.of() : List.of("id"), envelope);
  }

  private static Source open(SourceDefinition d) {
    return new KafkaSourceConnector().open(d, NO_SECRETS);
  }

  /** Polls until the source reports caught up; returns the number of records delivered. */
  private static long drain(Source s, OracleOutput out) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    long n = 0;
    while (true) {
      int got = s.poll(out, 1000, Duration.ofMillis(50));
      n += got;
      if (got == 0 && s.caughtUp()) {
        return n;
      }
      assertThat(System.nanoTime()).as("caught up within 30 s").isLessThan(deadline);
    }
  }

  private static ProducerRecord<byte[], byte[]> rec(String topic, int partition, String key, String value) {
    return new ProducerRecord<>(topic, partition, bytes(key), bytes(value));
  }

  private static byte[] bytes(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private static String json(long id, String name, double amount, long ts) {
    return "{\"id\":" + id + ",\"name\":\"" + name + "\",\"amount\":" + amount + ",\"ts\":" + ts + "}";
  }

  /** Random upserts and tombstones over 40 keys; a key always goes to partition id % 3. */
  private static List<ProducerRecord<byte[], byte[]>> upserts(String topic, Random rnd, int n, int seq) {
    List<ProducerRecord<byte[], byte[]>> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long id = rnd.nextInt(40);
      String value = rnd.nextInt(10) == 0 ? null : json(id, "n" + (seq + i), rnd.nextInt(1000) / 4.0, 1_700_000_000_000_000L + i);
      out.add(rec(topic, (int) (id % 3), "{\"id\":" + id + "}", value));
    }
    return out;
  }

  /** The naive upsert state over every record ever produced, in produce order (per-key order is partition order). */
  private static Map<Row, Row> naiveUpserts(List<ProducerRecord<byte[], byte[]>> all) {
    Map<Row, Row> m = new HashMap<>();
    for (ProducerRecord<byte[], byte[]> r : all) {
      String k = new String(r.key(), StandardCharsets.UTF_8);
      long id = Long.parseLong(k.replaceAll("\\D", ""));
      if (r.value() == null) {
        m.remove(Row.of(id));
      } else {
        String v = new String(r.value(), StandardCharsets.UTF_8);
        String[] f = v.replaceAll("[{}\"]", "").split(",");
        m.put(Row.of(id), Row.of(id, f[1].split(":")[1], Double.parseDouble(f[2].split(":")[1]), Long.parseLong(f[3].split(":")[1])));
      }
    }
    return m;
  }

  @Test
  void resumingAtARecordedPositionReadsExactlyTheRecordsAfterIt() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("resume"), 3);
    Random rnd = new Random(42);
    List<ProducerRecord<byte[], byte[]>> all = new ArrayList<>(upserts(topic, rnd, 600, 0));
    broker.produceAll(all);

    OracleOutput state = new OracleOutput();
    SourceOffsets p;
    long firstDelivered = 0;
    try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      while (firstDelivered < 250) {
        firstDelivered += s.poll(state, 37, Duration.ofMillis(200));
      }
      p = s.position();
    }
    long atP = p.values().values().stream().mapToLong(Long::parseLong).sum();
    assertThat(atP).as("position counts exactly the delivered records").isEqualTo(firstDelivered);

    List<ProducerRecord<byte[], byte[]>> more = upserts(topic, rnd, 400, 600);
    broker.produceAll(more);
    all.addAll(more);

    try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
      s.seek(p);
      long delivered = drain(s, state);
      Map<String, Long> load = s.meter().read();
      long expected = all.size() - atP;
      assertThat(delivered).isEqualTo(expected);
      assertThat(load.get(LoadMeter.RECORDS)).as("records read from Kafka after P").isEqualTo(expected);
      double ratio = (double) load.get(LoadMeter.RECORDS) / expected;
      System.out.printf("resume: P=%s delivered-before=%d after=%d read=%d ratio=%.2f fetches=%d bytes=%d%n",
          p.values(), atP, expected, load.get(LoadMeter.RECORDS), ratio, load.get("fetch_requests"), load.get(LoadMeter.BYTES));
      assertThat(ratio).isEqualTo(1.00);
      assertThat(load.get("records_fetched")).isEqualTo(expected);
      assertThat(load.get("fetch_requests")).isPositive();
      assertThat(load.get("bytes_fetched")).isGreaterThanOrEqualTo(load.get(LoadMeter.BYTES));
      assertThat(s.position().values()).containsEntry("0", Long.toString(all.stream().filter(r -> r.partition() == 0).count()));
    }
    assertThat(state.upserts).isEqualTo(naiveUpserts(all));
    assertThat(state.upserts).isNotEmpty();
  }

  @Test
  void manyStopsAndResumesReadEveryRecordExactlyOnce() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("sessions"), 3);
    Random rnd = new Random(7);
    List<ProducerRecord<byte[], byte[]>> all = new ArrayList<>();
    OracleOutput state = new OracleOutput();
    SourceOffsets p = SourceOffsets.EMPTY;
    long read = 0;
    for (int session = 0; session < 5; session++) {
      List<ProducerRecord<byte[], byte[]>> batch = upserts(topic, rnd, 100 + rnd.nextInt(200), all.size());
      broker.produceAll(batch);
      all.addAll(batch);
      try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
        s.seek(p);
        int budget = session == 4 ? Integer.MAX_VALUE : rnd.nextInt(300);
        long delivered = 0;
        if (session == 4) {
          delivered = drain(s, state);
        } else {
          for (int i = 0; i < 50 && delivered < budget; i++) {
            delivered += s.poll(state, 1 + rnd.nextInt(40), Duration.ofMillis(20));
          }
        }
        p = s.position();
        read += s.meter().read().get(LoadMeter.RECORDS);
        assertThat(s.meter().read().get("records_delivered")).isEqualTo(delivered);
      }
    }
    assertThat(state.upserts).isEqualTo(naiveUpserts(all));
    assertThat(p.values().values().stream().mapToLong(Long::parseLong).sum()).isEqualTo(all.size());
    // Records fetched but not delivered before a stop are fetched again by the next session, so
    // reads can exceed the records; what was delivered is exactly the records.
    assertThat(state.deliveredUpserts).isEqualTo(all.size());
    assertThat(read).isGreaterThanOrEqualTo(all.size());
  }

  @Test
  void transactionMarkersAndAbortedRecordsAreSteppedOver() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("txn"), 1);
    Map<String, Object> props = new HashMap<>();
    props.put("bootstrap.servers", broker.bootstrapServers());
    props.put("transactional.id", topic + "-tx");
    props.put("key.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
    props.put("value.serializer", org.apache.kafka.common.serialization.ByteArraySerializer.class.getName());
    try (var producer = new org.apache.kafka.clients.producer.KafkaProducer<byte[], byte[]>(props)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < 5; i++) {
        producer.send(rec(topic, 0, null, json(i, "ok", 0, 0)));
      }
      producer.commitTransaction();
      producer.beginTransaction();
      for (int i = 5; i < 8; i++) {
        producer.send(rec(topic, 0, null, json(i, "aborted", 0, 0)));
      }
      producer.flush();
      producer.abortTransaction();
    }
    OracleOutput out = new OracleOutput();
    SourceOffsets p;
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(5);
      assertThat(s.caughtUp()).isTrue();
      p = s.position();
    }
    assertThat(out.appends.keySet()).extracting(r -> r.get(1)).containsOnly("ok");
    assertThat(p.values()).isEqualTo(Map.of("0", "10")); // 5 records, a commit marker, 3 aborted, an abort marker
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(p);
      assertThat(drain(s, out)).isZero();
      assertThat(s.meter().read().get(LoadMeter.RECORDS)).isZero();
    }
  }

  @Test
  void appendEnvelopeDeliversEveryValueOnce() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("append"), 2);
    List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    Map<Row, Long> naive = new HashMap<>();
    for (int i = 0; i < 300; i++) {
      long id = i % 50; // duplicates on purpose: a multiset
      recs.add(rec(topic, i % 2, null, json(id, "x", 1.5, 7)));
      naive.merge(Row.of(id, "x", 1.5, 7L), 1L, Long::sum);
    }
    broker.produceAll(recs);
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(300);
      assertThat(s.position().values()).isEqualTo(Map.of("0", "150", "1", "150"));
    }
    assertThat(out.appends).isEqualTo(naive);
  }

  @Test
  void debeziumEnvelopeAppliesCreatesUpdatesDeletesAndTombstones() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("dbz"), 1);
    String wrappedKey = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"id\",\"type\":\"int64\"}]},\"payload\":{\"id\":%d}}";
    String wrapped = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"after\",\"type\":\"struct\",\"fields\":["
        + "{\"field\":\"ts\",\"type\":\"int64\",\"name\":\"io.debezium.time.MicroTimestamp\"}]}]},\"payload\":%s}";
    List<ProducerRecord<byte[], byte[]>> recs = List.of(
        rec(topic, 0, "{\"id\":1}", "{\"before\":null,\"after\":" + json(1, "a", 1, 10) + ",\"op\":\"r\"}"),
        rec(topic, 0, "{\"id\":2}", "{\"before\":null,\"after\":" + json(2, "b", 2, 20) + ",\"op\":\"c\"}"),
        rec(topic, 0, "{\"id\":3}", "{\"before\":null,\"after\":" + json(3, "c", 3, 30) + ",\"op\":\"c\"}"),
        rec(topic, 0, String.format(wrappedKey, 1),
            String.format(wrapped, "{\"before\":" + json(1, "a", 1, 10) + ",\"after\":" + json(1, "a2", 1.5, 11) + ",\"op\":\"u\"}")),
        rec(topic, 0, "{\"id\":2}", "{\"before\":" + json(2, "b", 2, 20) + ",\"after\":null,\"op\":\"d\"}"),
        rec(topic, 0, "{\"id\":2}", null),
        rec(topic, 0, null, "{\"before\":{\"id\":3},\"after\":null,\"op\":\"d\"}"),
        rec(topic, 0, "{\"id\":4}", "{\"before\":null,\"after\":" + json(4, "d", 4, 40) + ",\"op\":\"c\"}"));
    broker.produceAll(recs);
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.DEBEZIUM, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(8);
      assertThat(s.meter().read().get("bad_records")).isZero();
    }
    assertThat(out.upserts).isEqualTo(Map.of(
        Row.of(1L), Row.of(1L, "a2", 1.5, 11L),
        Row.of(4L), Row.of(4L, "d", 4.0, 40L)));
  }

  @Test
  void upsertEnvelopeDeletesOnTombstones() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("tomb"), 1);
    broker.produceAll(List.of(
        rec(topic, 0, "1", json(1, "a", 1, 1)),
        rec(topic, 0, "2", json(2, "b", 2, 2)),
        rec(topic, 0, "1", null),
        rec(topic, 0, "2", json(2, "b2", 3, 3))));
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      drain(s, out);
    }
    assertThat(out.upserts).isEqualTo(Map.of(Row.of(2L), Row.of(2L, "b2", 3.0, 3L)));
  }

  private List<ProducerRecord<byte[], byte[]>> withBadRecords(String topic) {
    return List.of(
        rec(topic, 0, null, json(1, "a", 1, 1)),
        rec(topic, 0, null, json(2, "b", 2, 2)),
        rec(topic, 0, "k", "{not json"),
        rec(topic, 0, null, json(3, "c", 3, 3)),
        rec(topic, 0, null, "{\"id\":\"four\"}"),
        rec(topic, 0, null, json(5, "e", 5, 5)));
  }

  @Test
  void badRecordUnderFailPolicyFailsNamingTopicPartitionOffsetAndKeepsGoodRecordsBeforeIt() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("badfail"), 1);
    broker.produceAll(withBadRecords(topic));
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThatThrownBy(() -> drain(s, out))
          .isInstanceOf(KafkaSourceException.class)
          .hasMessageContaining("topic '" + topic + "' partition 0 offset 2")
          .hasMessageContaining("not valid JSON")
          .hasMessageContaining("bad-records = skip");
      assertThat(out.appends.keySet()).containsExactlyInAnyOrder(Row.of(1L, "a", 1.0, 1L), Row.of(2L, "b", 2.0, 2L));
      assertThat(s.position().values()).isEqualTo(Map.of("0", "2"));
      assertThatThrownBy(() -> s.poll(out, 10, Duration.ZERO)).hasMessageContaining("offset 2");
    }
  }

  @Test
  void aTopicOfBadRecordsUnderSkipIsLoggedInFullTenTimesThenThinned() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("badmany"), 1);
    List<ProducerRecord<byte[], byte[]>> records = new java.util.ArrayList<>();
    for (int i = 0; i < 200; i++) {
      records.add(rec(topic, 0, null, "{not json " + i));
    }
    records.add(rec(topic, 0, null, json(1, "a", 1, 1)));
    broker.produceAll(records);
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(KafkaSource.class);
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged =
        new ch.qos.logback.core.read.ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of("bad-records", "skip")))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(201);
      assertThat(s.meter().read().get("bad_records")).isEqualTo(200);
    } finally {
      logger.detachAppender(logged);
    }
    List<String> lines = logged.list.stream().map(e -> e.getFormattedMessage()).filter(m -> m.contains("skipped a bad record"))
        .toList();
    // the first ten in full; the rest within ten seconds of them: no line each
    assertThat(lines).hasSizeBetween(KafkaSource.BAD_RECORDS_LOGGED_IN_FULL, KafkaSource.BAD_RECORDS_LOGGED_IN_FULL + 1);
    assertThat(lines.get(0)).contains("offset 0").doesNotContain("more since");
    assertThat(out.appends.keySet()).containsExactly(Row.of(1L, "a", 1.0, 1L));
  }

  @Test
  void badRecordsUnderSkipPolicyAreCountedAndWrittenRawToTheDeadLetterTopic() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("badskip"), 1);
    String dlq = broker.createTopic(topic + "-dlq", 1);
    broker.produceAll(withBadRecords(topic));
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of("bad-records", "skip", "dead-letter-topic", dlq)))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(6);
      assertThat(s.position().values()).isEqualTo(Map.of("0", "6"));
      Map<String, Long> load = s.meter().read();
      assertThat(load.get("bad_records")).isEqualTo(2);
      assertThat(load.get("dead_letter_records")).isEqualTo(2);
    }
    assertThat(out.appends.keySet()).containsExactlyInAnyOrder(
        Row.of(1L, "a", 1.0, 1L), Row.of(2L, "b", 2.0, 2L), Row.of(3L, "c", 3.0, 3L), Row.of(5L, "e", 5.0, 5L));
    List<ConsumerRecord<byte[], byte[]>> dead = broker.readAll(dlq);
    assertThat(dead).hasSize(2);
    assertThat(dead.get(0).value()).isEqualTo(bytes("{not json"));
    assertThat(dead.get(0).key()).isEqualTo(bytes("k"));
    assertThat(new String(dead.get(0).headers().lastHeader("cairn.offset").value(), StandardCharsets.UTF_8)).isEqualTo("2");
    assertThat(new String(dead.get(1).headers().lastHeader("cairn.error").value(), StandardCharsets.UTF_8))
        .isEqualTo("column 'id' is BIGINT but the value holds a JSON string");
    assertThat(dead.get(1).value()).isEqualTo(bytes("{\"id\":\"four\"}"));
  }

  @Test
  void seekingBeforeTheLogStartFailsNamingThePartitionAndTheLostRange() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("range"), 2);
    List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      recs.add(rec(topic, 1, null, json(i, "x", 0, 0)));
    }
    broker.produceAll(recs);
    broker.deleteRecords(topic, 1, 6);
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      assertThatThrownBy(() -> s.seek(new SourceOffsets(Map.of("0", "0", "1", "3"))))
          .isInstanceOfSatisfying(OffsetsOutOfRangeException.class, e -> {
            assertThat(e.partition()).isEqualTo(1);
            assertThat(e.recordedOffset()).isEqualTo(3);
            assertThat(e.logStartOffset()).isEqualTo(6);
          })
          .hasMessageContaining("topic '" + topic + "' partition 1 no longer holds offsets 3..5 (3 records)")
          .hasMessageContaining("log start offset is 6");
      // From the beginning is fine: it starts at the log start offset.
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, new OracleOutput())).isEqualTo(4);
    }
  }

  @Test
  void recordsDeletedWhileTheSourceRunsFailThePollInsteadOfBeingSkipped() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("range-run"), 1);
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        recs.add(rec(topic, 0, null, json(i, "x", 0, 0)));
      }
      broker.produceAll(recs);
      broker.deleteRecords(topic, 0, 5);
      // Not drain(): caughtUp() may still hold the end offsets of seek time (0) for up to a second.
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      assertThatThrownBy(() -> {
            while (System.nanoTime() < deadline) {
              s.poll(new OracleOutput(), 100, Duration.ofMillis(50));
            }
          })
          .isInstanceOf(OffsetsOutOfRangeException.class)
          .hasMessageContaining("partition 0 no longer holds offsets 0..4");
    }
  }

  @Test
  void partitionsAddedWhileRunningAreReadFromTheirBeginning() throws Exception {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("grow"), 1);
    broker.produce(topic, 0, null, json(1, "a", 0, 0));
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of("partition-discovery-interval-ms", "100")))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(1);
      broker.addPartitions(topic, 3);
      broker.produce(topic, 2, null, json(3, "c", 0, 0));
      broker.produce(topic, 1, null, json(2, "b", 0, 0));
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (out.appends.size() < 3 && System.nanoTime() < deadline) {
        s.poll(out, 100, Duration.ofMillis(50));
      }
      assertThat(out.appends.keySet()).extracting(r -> r.get(0)).containsExactlyInAnyOrder(1L, 2L, 3L);
      assertThat(s.position().values()).isEqualTo(Map.of("0", "1", "1", "1", "2", "1"));
      assertThat(s.caughtUp()).isTrue();
    }
  }

  @Test
  void offsetsNamingAPartitionTheTopicDoesNotHaveAreAClearError() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("fewer"), 2);
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      assertThatThrownBy(() -> s.seek(new SourceOffsets(Map.of("0", "0", "5", "0"))))
          .isInstanceOf(KafkaSourceException.class)
          .hasMessageContaining("name partition 5")
          .hasMessageContaining("has only 2 partitions");
    }
  }

  @Test
  void aSeekToOffsetsOfAPartitionNewerThanTheConsumersMetadataAsksTheBrokers() {
    // the consumer caches the topic's metadata at the first seek; partitions added afterwards and
    // named by offsets given to a later seek must be found, not taken for a re-created topic
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("reseek"), 1);
    broker.produce(topic, 0, null, json(1, "a", 0, 0));
    OracleOutput out = new OracleOutput();
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(1);
      broker.addPartitions(topic, 2);
      broker.produce(topic, 1, null, json(2, "b", 0, 0));
      broker.produce(topic, 1, null, json(3, "c", 0, 0));
      s.seek(new SourceOffsets(Map.of("0", "1", "1", "1")));
      assertThat(drain(s, out)).isEqualTo(1);
      assertThat(s.position().values()).isEqualTo(Map.of("0", "1", "1", "2"));
    }
    assertThat(out.appends.keySet()).extracting(r -> r.get(0)).containsExactlyInAnyOrder(1L, 3L);
  }

  @Test
  void clientPropertiesPassThroughAndTheRateCapPacesReading() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("props"), 1);
    List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      recs.add(rec(topic, 0, null, json(i, "x", 0, 0)));
    }
    broker.produceAll(recs);
    try (Source s = open(def(topic, Envelope.NONE, Map.of("properties.max.poll.records", "7")))) {
      s.seek(SourceOffsets.EMPTY);
      OracleOutput out = new OracleOutput();
      int first = 0;
      for (int i = 0; i < 50 && first == 0; i++) {
        first = s.poll(out, 1000, Duration.ofMillis(100));
      }
      assertThat(first).as("max.poll.records=7 reached the consumer").isEqualTo(7);
      s.setReadRateLimit(500);
      long start = System.nanoTime();
      long n = first + drain(s, out);
      double seconds = (System.nanoTime() - start) / 1e9;
      assertThat(n).isEqualTo(300);
      assertThat(seconds).as("293 records at 500/s").isGreaterThan(0.45);
    }
  }

  @Test
  void caughtUpFollowsTheHeadOfTheTopic() throws InterruptedException {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("head"), 2);
    broker.produce(topic, 0, null, json(1, "a", 0, 0));
    try (Source s = open(def(topic, Envelope.NONE, Map.of()))) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(s.caughtUp()).isFalse();
      drain(s, new OracleOutput());
      assertThat(s.caughtUp()).isTrue();
      broker.produce(topic, 1, null, json(2, "b", 0, 0));
      Thread.sleep(1100); // end offsets are re-read at most once a second
      assertThat(s.caughtUp()).as("a new record at the head").isFalse();
      assertThat(drain(s, new OracleOutput())).isEqualTo(1);
      assertThat(s.caughtUp()).isTrue();
    }
  }

  @Test
  void retentionGuardReadsTheTopicsRetention() {
    String shortTopic = broker.createTopic(KafkaBroker.uniqueTopic("short"), 1, Map.of("retention.ms", "3600000"));
    String longTopic = broker.createTopic(KafkaBroker.uniqueTopic("long"), 1, Map.of("retention.ms", "-1"));
    assertThat(KafkaRetentionGuard.check(def(shortTopic, Envelope.NONE, Map.of()), NO_SECRETS, Duration.ofDays(1)))
        .get().asString().contains(shortTopic, "PT1H", "PT24H");
    assertThat(KafkaRetentionGuard.check(def(longTopic, Envelope.NONE, Map.of()), NO_SECRETS, Duration.ofDays(1))).isEmpty();
    assertThat(KafkaRetentionGuard.check(def(shortTopic, Envelope.NONE, Map.of()), NO_SECRETS, Duration.ofMinutes(30))).isEmpty();
  }

  @Test
  void credentialsComeFromSecretsAndBadOnesFailWithoutShowingThem() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("sasl"), 1);
    broker.produce(topic, 0, null, json(1, "a", 0, 0));
    Map<String, String> options = Map.of(
        "brokers", broker.saslBootstrapServers(),
        "properties.security.protocol", "SASL_PLAINTEXT",
        "properties.sasl.mechanism", "PLAIN",
        "properties.sasl.jaas.config", "SECRET 'KAFKA_JAAS'");
    SourceDefinition d = def(topic, Envelope.NONE, options);
    Secrets good = ref -> ref.equals("KAFKA_JAAS") ? KafkaBroker.saslJaasConfig(KafkaBroker.SASL_PASSWORD) : null;
    OracleOutput out = new OracleOutput();
    try (Source s = new KafkaSourceConnector().open(d, good)) {
      s.seek(SourceOffsets.EMPTY);
      assertThat(drain(s, out)).isEqualTo(1);
    }
    String wrongPassword = "not-the-password-" + System.nanoTime();
    Secrets bad = ref -> KafkaBroker.saslJaasConfig(wrongPassword);
    try (Source s = new KafkaSourceConnector().open(d, bad)) {
      assertThatThrownBy(() -> s.seek(SourceOffsets.EMPTY))
          .isInstanceOf(KafkaSourceException.class)
          .hasMessageContaining("Cannot read source '" + d.name() + "'")
          .hasMessageContaining("uthentication failed")
          .hasMessageNotContaining(wrongPassword)
          .hasMessageNotContaining(KafkaBroker.SASL_PASSWORD);
    }
  }

  @Test
  void aWarmUpLeavesTheSeekOnlyTheEndOffsetsToAskAndAddsNoRequest() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("warm"), 3);
    Random rnd = new Random(7);
    List<ProducerRecord<byte[], byte[]>> all = new ArrayList<>(upserts(topic, rnd, 300, 0));
    broker.produceAll(all);
    SourceOffsets p = new SourceOffsets(Map.of("0", "20", "1", "0", "2", "35"));
    long before = 20 + 35;
    Map<String, Long> cold;
    OracleOutput coldOut = new OracleOutput();
    try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
      s.seek(p);
      cold = s.meter().read();
      assertThat(drain(s, coldOut)).isEqualTo(all.size() - before);
    }
    try (Source s = open(def(topic, Envelope.UPSERT, Map.of()))) {
      s.warmUp(Duration.ofSeconds(10));
      Map<String, Long> warm = s.meter().read();
      assertThat(warm.get("metadata_requests")).isEqualTo(1);
      assertThat(warm.get("offset_requests")).isEqualTo(1);
      s.seek(p);
      Map<String, Long> seeked = s.meter().read();
      assertThat(seeked.get("metadata_requests") - warm.get("metadata_requests")).as("the seek used the warm-up's metadata").isZero();
      assertThat(seeked.get("offset_requests") - warm.get("offset_requests")).as("the seek asked only for end offsets").isEqualTo(1);
      assertThat(seeked.get("metadata_requests")).as("no request added").isEqualTo(cold.get("metadata_requests"));
      assertThat(seeked.get("offset_requests")).as("no request added").isEqualTo(cold.get("offset_requests"));
      OracleOutput out = new OracleOutput();
      assertThat(drain(s, out)).as("exactly the records after the offsets sought").isEqualTo(all.size() - before);
      assertThat(out.upserts).isEqualTo(coldOut.upserts);
    }
  }

  /** A source of topic 'orders' on a port nothing listens on, with a 60 s request timeout. */
  private static SourceDefinition atAClosedPort(String name) throws java.io.IOException {
    int port;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Map<String, String> o = new HashMap<>();
    o.put("brokers", "127.0.0.1:" + port);
    o.put("topic", "orders");
    o.put("request-timeout-ms", "60000");
    return new SourceDefinition(name, "kafka", o, SCHEMA, List.of(), Envelope.NONE);
  }

  @Test
  void aWarmUpAgainstABrokerThatIsDownEndsWithinItsBudgetWithoutFailing() throws Exception {
    try (Source s = open(atAClosedPort("src_down_warm"))) {
      long t0 = System.nanoTime();
      s.warmUp(Duration.ofMillis(800));
      long millis = (System.nanoTime() - t0) / 1_000_000;
      assertThat(millis).as("the warm-up kept to its 0.8 s budget, not the 60 s request timeout").isBetween(700L, 5_000L);
    }
  }

  @Test
  void wakeupEndsASeekWaitingForABrokerThatIsDown() throws Exception {
    // nothing listens on this port: the seek's metadata call would wait out its request timeout
    try (Source s = open(atAClosedPort("src_down"))) {
      Thread waker = new Thread(() -> {
        try {
          Thread.sleep(1500);
        } catch (InterruptedException e) {
          return;
        }
        s.wakeup();
      });
      waker.start();
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> s.seek(SourceOffsets.EMPTY)).isInstanceOf(KafkaSourceException.class)
          .hasMessageContaining("woken up");
      long millis = (System.nanoTime() - t0) / 1_000_000;
      assertThat(millis).as("the seek ended when woken up, not after its 60 s timeout").isLessThan(20_000);
      waker.join();
    }
  }

  @Test
  void missingTopicIsAClearError() {
    try (Source s = open(def("no-such-topic-" + System.nanoTime(), Envelope.NONE, Map.of()))) {
      assertThatThrownBy(() -> s.seek(SourceOffsets.EMPTY)).isInstanceOf(KafkaSourceException.class)
          .hasMessageContaining("does not exist");
    }
  }
}
