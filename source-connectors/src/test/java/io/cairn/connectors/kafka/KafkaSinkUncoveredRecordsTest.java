package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkDefinition;
import io.cairn.engine.sink.SinkEnvelope;
import io.cairn.engine.sink.SinkTrack;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

/**
 * A Kafka broker has committed a sink's data records without the progress record of the same
 * transaction (Kafka 4.3.1, transaction version 2: a COMMIT marker on the data partition only,
 * found in the log segments after a failed takeover test). These tests leave a sink's topics in
 * that state on a real broker — a committed transaction of the sink's own records, under its
 * transactional id, with no progress record — and assert what a reader relies on: every committed
 * record lies under a progress record of its own label, labels never go back, and the records
 * are read back (counted as written) once.
 */
class KafkaSinkUncoveredRecordsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Schema SCHEMA = Schema.of(Column.of("category", Type.BIGINT), Column.of("n", Type.BIGINT));
  private final KafkaBroker broker = KafkaBroker.shared();

  private SinkDefinition def(String topic) {
    return new SinkDefinition(7, "s", "v", "kafka", Map.of("brokers", broker.bootstrapServers(), "topic", topic), "JSON",
        SinkEnvelope.UPSERT, List.of("category"));
  }

  private KafkaSink sink(String topic) {
    return new KafkaSink(def(topic), SCHEMA, new int[] {0}, null, point -> {});
  }

  private static SinkTrack.Batch batch(long tick, Object... rowsAndDiffs) {
    List<Row> rows = new ArrayList<>();
    long[] diffs = new long[rowsAndDiffs.length / 2];
    for (int i = 0; i < rowsAndDiffs.length; i += 2) {
      rows.add((Row) rowsAndDiffs[i]);
      diffs[i / 2] = (Long) rowsAndDiffs[i + 1];
    }
    return new SinkTrack.Batch(tick, Map.of(), rows, diffs, 0, 0);
  }

  /** A sink's first writer: opens a new topic, commits each batch under its engine tick as label, closes. */
  private KafkaSink firstWriter(String topic, SinkTrack.Batch... batches) {
    KafkaSink a = sink(topic);
    try {
      a.open();
      a.readBack(null);
      for (SinkTrack.Batch b : batches) {
        a.commit(b.engineTick(), b);
      }
    } finally {
      a.close();
    }
    return a;
  }

  /** What the broker left: a committed transaction of this sink's records, labelled {@code label}, and no progress record. */
  private void commitWithoutProgress(KafkaSink like, String topic, long label, String... keyValueBefore) {
    Properties p = new Properties();
    p.put("bootstrap.servers", broker.bootstrapServers());
    p.put("transactional.id", like.transactionalId());
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      producer.beginTransaction();
      for (int i = 0; i < keyValueBefore.length; i += 3) {
        List<Header> headers = new ArrayList<>();
        headers.add(new RecordHeader(KafkaSink.H_SINK, "s/7".getBytes(StandardCharsets.UTF_8)));
        headers.add(new RecordHeader(KafkaSink.H_TICK, Long.toString(label).getBytes(StandardCharsets.US_ASCII)));
        if (keyValueBefore[i + 2] != null) {
          headers.add(new RecordHeader(KafkaSink.H_BEFORE, keyValueBefore[i + 2].getBytes(StandardCharsets.UTF_8)));
        }
        producer.send(new ProducerRecord<>(topic, null, keyValueBefore[i].getBytes(StandardCharsets.UTF_8),
            keyValueBefore[i + 1].getBytes(StandardCharsets.UTF_8), headers));
      }
      producer.commitTransaction();
    }
  }

  @Test
  void recordsCommittedWithoutTheirProgressRecordAreCoveredAndLabelledAbove() throws Exception {
    String topic = KafkaBroker.uniqueTopic("sink-uncovered");
    KafkaSink a = sink(topic);
    Map<String, String> afterFirst;
    try {
      assertThat(a.open().tick()).isEqualTo(-1);
      assertThat(a.readBack(null).records()).isZero();
      afterFirst = a.commit(5, batch(5, Row.of(1L, 10L), 1L, Row.of(2L, 20L), 1L));
    } finally {
      a.close();
    }
    commitWithoutProgress(a, topic, 9,
        "{\"category\":1}", "{\"category\":1,\"n\":11}", "{\"category\":1,\"n\":10}",
        "{\"category\":3}", "{\"category\":3,\"n\":30}", null);
    assertThat(attribution(topic).uncoveredOrMislabelled).as("the state the broker left: two records under no progress record of theirs").isEqualTo(2);

    KafkaSink b = sink(topic);
    try {
      Sink.Progress p = b.open();
      assertThat(p.tick()).as("the newest progress record is still the first commit's").isEqualTo(5);
      Sink.ReadBack back = b.readBack(afterFirst);
      assertThat(back.records()).as("the records past the known position are read back, whatever covers them").isEqualTo(2);
      assertThat(back.lastLabel()).as("their label").isEqualTo(9);
      Map<Row, Long> read = new HashMap<>();
      for (int i = 0; i < back.rows().size(); i++) {
        read.merge(back.rows().get(i), back.diffs()[i], Long::sum);
      }
      assertThat(read).containsExactlyInAnyOrderEntriesOf(Map.of(Row.of(1L, 10L), -1L, Row.of(1L, 11L), 1L, Row.of(3L, 30L), 1L));

      List<ConsumerRecord<byte[], byte[]>> progress = broker.readAll(topic + "-progress", true);
      JsonNode repair = JSON.readTree(progress.get(progress.size() - 1).value());
      assertThat(repair.path("tick").asLong()).as("a progress record of their label covers them: %s", repair).isEqualTo(9);
      assertThat(repair.path("complete").asBoolean()).isFalse();
      assertThat(repair.path("repair").asBoolean()).isTrue();
      assertThat(repair.path("positions").path("0").asText()).isEqualTo(back.to().get("0"));
      assertThat(progress).as("one repair, once").hasSize(2);

      b.commit(Math.max(10, back.lastLabel() + 1), batch(10, Row.of(2L, 20L), -1L, Row.of(2L, 21L), 1L));
    } finally {
      b.close();
    }
    Attribution after = attribution(topic);
    assertThat(after.uncoveredOrMislabelled).as("every committed record under a progress record of its label: %s", after.events).isZero();
    assertThat(after.labelsBack).as("labels never go back: %s", after.events).isZero();
    assertThat(after.records).isEqualTo(5);

    KafkaSink c = sink(topic);
    try {
      assertThat(c.open().tick()).isEqualTo(10);
      assertThat(c.readBack(null).records()).as("a reader from the beginning").isEqualTo(5);
      assertThat(broker.readAll(topic + "-progress", true)).as("nothing uncovered any more: no second repair").hasSize(3);
    } finally {
      c.close();
    }
  }

  /**
   * The known position (a snapshot's) can already be past such records: they are then not read
   * back as output (the bookkeeping holds them), but they are still past every progress record,
   * so they are covered and labelled above all the same.
   */
  @Test
  void uncoveredRecordsBeforeTheKnownPositionAreCoveredToo() throws Exception {
    String topic = KafkaBroker.uniqueTopic("sink-uncovered-known");
    KafkaSink a = firstWriter(topic, batch(5, Row.of(1L, 10L), 1L));
    commitWithoutProgress(a, topic, 8, "{\"category\":1}", "{\"category\":1,\"n\":12}", "{\"category\":1,\"n\":10}");
    List<ConsumerRecord<byte[], byte[]>> data = broker.readAll(topic, true);
    Map<String, String> past = Map.of("0", String.valueOf(data.get(data.size() - 1).offset() + 1));

    KafkaSink b = sink(topic);
    try {
      assertThat(b.open().tick()).isEqualTo(5);
      Sink.ReadBack back = b.readBack(past);
      assertThat(back.records()).as("nothing past the known position").isZero();
      assertThat(back.lastLabel()).as("the label of the records before it, past every progress record").isEqualTo(8);
      List<ConsumerRecord<byte[], byte[]>> progress = broker.readAll(topic + "-progress", true);
      JsonNode repair = JSON.readTree(progress.get(progress.size() - 1).value());
      assertThat(progress).as("a repair record: %s", repair).hasSize(2);
      assertThat(repair.path("tick").asLong()).isEqualTo(8);
      assertThat(repair.path("repair").asBoolean()).isTrue();
      b.commit(9, batch(9, Row.of(1L, 12L), -1L, Row.of(1L, 13L), 1L));
    } finally {
      b.close();
    }
    Attribution after = attribution(topic);
    assertThat(after.uncoveredOrMislabelled).as("every committed record under a progress record of its label: %s", after.events).isZero();
    assertThat(after.labelsBack).as("labels never go back: %s", after.events).isZero();
    assertThat(after.records).isEqualTo(3);
  }

  @Test
  void everyProgressRecordNamesTheWholePositionAndNothingIsRepairedWhenAllIsCovered() throws Exception {
    String topic = KafkaBroker.uniqueTopic("sink-covered");
    firstWriter(topic, batch(3, Row.of(1L, 1L), 1L), batch(4, Row.of(1L, 1L), -1L, Row.of(1L, 2L), 1L), batch(5)); // the last: progress only
    List<ConsumerRecord<byte[], byte[]>> progress = broker.readAll(topic + "-progress", true);
    assertThat(progress).hasSize(3);
    JsonNode progressOnly = JSON.readTree(progress.get(2).value());
    assertThat(progressOnly.path("positions").path("0").asLong()).as("a progress-only record names the position it covers: %s", progressOnly)
        .isEqualTo(JSON.readTree(progress.get(1).value()).path("positions").path("0").asLong());
    KafkaSink b = sink(topic);
    try {
      assertThat(b.open().tick()).isEqualTo(5);
      Sink.ReadBack back = b.readBack(null);
      assertThat(back.records()).isEqualTo(2);
      assertThat(back.lastLabel()).isEqualTo(4);
    } finally {
      b.close();
    }
    assertThat(broker.readAll(topic + "-progress", true)).as("no repair").hasSize(3);
    assertThat(attribution(topic).uncoveredOrMislabelled).isZero();
  }

  /** A reader's check of a sink topic: each data record under the first progress record whose position passes it. */
  private static final class Attribution {
    long records;
    long uncoveredOrMislabelled;
    long labelsBack;
    final List<String> events = new ArrayList<>();
  }

  private Attribution attribution(String topic) throws Exception {
    Attribution a = new Attribution();
    List<ConsumerRecord<byte[], byte[]>> data = broker.readAll(topic, true);
    int at = 0;
    long last = -1;
    boolean lastComplete = true;
    for (ConsumerRecord<byte[], byte[]> pr : broker.readAll(topic + "-progress", true)) {
      JsonNode p = JSON.readTree(pr.value());
      long label = p.path("tick").asLong();
      if (label < last || (label == last && lastComplete)) {
        a.labelsBack++;
        a.events.add("progress " + p + " after label " + last);
      }
      last = label;
      lastComplete = p.path("complete").asBoolean();
      long upTo = p.path("positions").path("0").asLong(-1);
      while (at < data.size() && data.get(at).offset() < upTo) {
        ConsumerRecord<byte[], byte[]> r = data.get(at++);
        a.records++;
        String tick = new String(r.headers().lastHeader(KafkaSink.H_TICK).value(), StandardCharsets.US_ASCII);
        if (Long.parseLong(tick) != label) {
          a.uncoveredOrMislabelled++;
          a.events.add("record@" + r.offset() + " tick " + tick + " under " + p);
        }
      }
    }
    while (at < data.size()) {
      a.records++;
      a.uncoveredOrMislabelled++;
      a.events.add("record@" + data.get(at++).offset() + " under no progress record");
    }
    return a;
  }
}
