package io.cairn.connectors.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkDefinition;
import io.cairn.engine.sink.SinkEnvelope;
import io.cairn.engine.sink.SinkTrack;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.SourceOffsets;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Kafka sink's client: a transactional producer and the consumers that read its progress and
 * its own records back (the exactly-once bookkeeping is the engine's {@link SinkTrack}; this class
 * does the I/O of {@link Sink}'s contract).
 *
 * <p>Design:
 *
 * <ul>
 *   <li>Identity. One {@code transactional.id} per sink, the same on every node and after every
 *       restart ({@code cairn-sink-<topic>-<name>-<catalog position>}, or the option). {@link
 *       #open} calls {@code initTransactions}, which aborts whatever an older producer of that id
 *       had open and fences it: from then on nothing it sent can commit. One id per sink, never
 *       one per commit or per checkpoint (a new id per checkpoint is what left Flink jobs with
 *       thousands of producer ids on the broker).
 *   <li>Records. Data records are JSON; each carries the headers {@code cairn-sink} (the identity)
 *       and {@code cairn-tick} (the label). UPSERT: key = the key columns, value = the row or null
 *       (a tombstone), and header {@code cairn-before} = the row it replaces, so that what a
 *       commit added can be read back exactly. DEBEZIUM: value {@code {before, after, op, ts_ms,
 *       source}}. Every commit ends with one progress record (key = the identity) in the progress
 *       topic, in the same transaction: {@code {tick, engine_tick, complete, records, positions,
 *       offsets}}, where {@code positions} is the data topic's offset, per partition, after the
 *       last record it covers (every partition this sink has written, not only this commit's).
 *   <li>Reading progress and records back, and the isolation level. Both read with {@code
 *       read_committed}, up to the end offsets asked for <em>after</em> {@code initTransactions}
 *       returned. Why that is complete: once it returns, this id's older transaction is aborted
 *       and its markers written, and only this sink writes its topics, so no transaction is open
 *       on them and the last stable offset equals the high watermark — read_committed sees every
 *       committed record up to the end. Why not read_uncommitted: it would also return the
 *       records and the progress record of an aborted transaction, and a progress record that
 *       never committed would claim output that no consumer ever saw (lost changes). End offsets
 *       asked for before fencing would be stale: a transaction of the old producer could commit
 *       between them and the fence, and its records would then be missed and written again
 *       (duplicates) — the mistake behind the stale-progress duplicates Materialize once had.
 *   <li>Records committed without their progress record. A transaction is atomic only as far as
 *       the broker keeps it so: on Kafka 4.3.1 (transaction version 2) a sink's data records were
 *       seen committed — a COMMIT marker 10 ms after them, on the data partition only — while the
 *       same transaction's progress record never reached its partition (found by dumping both
 *       partitions' log segments after a failed takeover test). In a second case the writer's
 *       {@code commitTransaction} returned, so its bookkeeping moved past those records and the
 *       next snapshot's known position was past them; the writer's next transaction then hung on
 *       its progress send until the node was killed. Nothing is lost or repeated by it: {@link
 *       #readBack} reads the records after the known position whatever progress covers them, and
 *       the bookkeeping subtracts them. What it breaks is the reader's view: records no progress record of their label
 *       covers. So every progress record names the whole position it covers ({@code positions},
 *       every partition), and {@link #readBack} counts the records past the newest progress
 *       record's position, reading from there when the known position (a snapshot's) is already
 *       past it; if there are any, it writes a progress record of their label ({@code
 *       complete: false}, {@code repair: true}) that covers them before anything else is written,
 *       and returns their highest label, so the next label is above it.
 *   <li>Large sets of changes. More than {@code max-records-per-transaction} records are split
 *       into several transactions, each with a progress record, only the last one {@code complete}.
 *       Exactly-once holds across a failure between them because the bookkeeping reads back what
 *       did commit (a prefix) and writes only the rest; a consumer that wants whole ticks applies
 *       records up to a {@code complete} progress record. Each transaction is then bounded in
 *       records and in time, well inside {@code transaction.timeout.ms}, so a slow commit cannot
 *       be aborted by the broker halfway and restart times do not race the timeout (Flink's
 *       two-phase-commit sink loses data when a restart takes longer than the timeout; here an
 *       aborted transaction is just not read back, and its changes stay pending).
 * </ul>
 */
final class KafkaSink implements Sink {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaSink.class);
  private static final ObjectMapper JSON = new ObjectMapper()
      .enable(com.fasterxml.jackson.databind.DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS); // a NUMERIC read back exactly
  static final String H_SINK = "cairn-sink";
  static final String H_TICK = "cairn-tick";
  static final String H_BEFORE = "cairn-before";
  private static final Duration POLL = Duration.ofMillis(200);
  private static final Duration READ_DEADLINE = Duration.ofSeconds(60);

  private final SinkDefinition def;
  private final Schema schema;
  private final int[] keyCols;
  private final Consumer<String> points;
  private final String topic;
  private final String progressTopic;
  private final String identity;
  private final byte[] identityBytes;
  private final long maxRecords;
  private final Properties common = new Properties();
  private final Properties producerProps = new Properties();
  private final boolean createTopic;
  private final int partitions;
  private final short replication;
  private KafkaProducer<byte[], byte[]> producer;
  /** The newest committed progress record {@link #open} found (null: none). */
  private JsonNode newestProgress;
  /** The destination's position every progress record written so far covers, per partition (the next one names it). */
  private final Map<String, String> covered = new TreeMap<>();
  /** The offset of the last progress record this client wrote and the broker acknowledged (-1: none yet). */
  private long lastProgressOffset = -1;
  /** The last few progress acknowledgements ("tick T at offset O"), named when a commit fails. */
  private final java.util.ArrayDeque<String> recentAcks = new java.util.ArrayDeque<>(4);

  KafkaSink(SinkDefinition def, Schema schema, int[] keyCols, Secrets secrets, Consumer<String> points) {
    this.def = def;
    this.schema = schema;
    this.keyCols = keyCols.clone();
    this.points = points;
    Map<String, String> o = def.options();
    this.topic = o.get("topic");
    this.progressTopic = o.getOrDefault("progress-topic", topic + "-progress");
    this.identity = def.name() + "/" + def.id();
    this.identityBytes = identity.getBytes(StandardCharsets.UTF_8);
    String what = "Cannot open sink '" + def.name() + "'";
    this.maxRecords = KafkaSinkConnector.positive(def, "max-records-per-transaction", 50_000, what);
    this.createTopic = !o.getOrDefault("create-topic", "true").equalsIgnoreCase("false");
    this.partitions = (int) KafkaSinkConnector.positive(def, "partitions", 1, what);
    this.replication = (short) KafkaSinkConnector.positive(def, "replication-factor", 1, what);
    common.put("bootstrap.servers", KafkaSinkConnector.resolve(def, "brokers", o.get("brokers"), secrets));
    for (Map.Entry<String, String> e : o.entrySet()) {
      if (e.getKey().startsWith("properties.")) {
        common.put(e.getKey().substring("properties.".length()), KafkaSinkConnector.resolve(def, e.getKey(), e.getValue(), secrets));
      }
    }
    common.putIfAbsent("request.timeout.ms", "10000");
    common.putIfAbsent("default.api.timeout.ms", "20000");
    producerProps.putAll(common);
    producerProps.put("transactional.id", o.getOrDefault("transactional-id", "cairn-sink-" + topic + "-" + def.name() + "-" + def.id()));
    producerProps.put("enable.idempotence", "true");
    producerProps.put("acks", "all");
    producerProps.put("transaction.timeout.ms", String.valueOf(KafkaSinkConnector.positive(def, "transaction-timeout-ms", 60_000, what)));
    producerProps.putIfAbsent("max.block.ms", "15000");
    producerProps.putIfAbsent("delivery.timeout.ms", "30000");
    producerProps.putIfAbsent("linger.ms", "5");
    producerProps.putIfAbsent("compression.type", "lz4");
    producerProps.put("key.serializer", ByteArraySerializer.class.getName());
    producerProps.put("value.serializer", ByteArraySerializer.class.getName());
  }

  /** The producer's transactional id (status shows it). */
  String transactionalId() {
    return producerProps.getProperty("transactional.id");
  }

  @Override
  public Progress open() {
    ensureTopics();
    producer = new KafkaProducer<>(producerProps);
    producer.initTransactions(); // aborts and fences whatever an older producer of this id had open
    return readProgress();
  }

  private void ensureTopics() {
    try (Admin admin = Admin.create(common)) {
      var existing = admin.listTopics().names().get(20, java.util.concurrent.TimeUnit.SECONDS);
      List<NewTopic> create = new ArrayList<>();
      if (!existing.contains(topic)) {
        create.add(new NewTopic(topic, partitions, replication));
      }
      if (!existing.contains(progressTopic)) {
        create.add(new NewTopic(progressTopic, 1, replication).configs(Map.of("cleanup.policy", "delete", "retention.ms", "-1")));
      }
      if (create.isEmpty()) {
        return;
      }
      if (!createTopic) {
        throw new IllegalStateException("Cannot open sink '" + def.name() + "': topic" + (create.size() > 1 ? "s " : " ")
            + create.stream().map(NewTopic::name).toList() + " do not exist and option create-topic is false: create them, or set create-topic true");
      }
      try {
        admin.createTopics(create).all().get(20, java.util.concurrent.TimeUnit.SECONDS);
        LOG.info("Sink {}: created topics {}", def.name(), create.stream().map(NewTopic::name).toList());
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
          throw e;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot open sink '" + def.name() + "': interrupted", e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      Throwable c = e instanceof ExecutionException ? e.getCause() : e;
      throw new IllegalStateException("Cannot open sink '" + def.name() + "': listing or creating topics on " + common.get("bootstrap.servers")
          + " failed: " + c, c);
    }
  }

  private KafkaConsumer<byte[], byte[]> consumer() {
    Properties p = new Properties();
    p.putAll(common);
    p.put("isolation.level", "read_committed");
    p.put("enable.auto.commit", "false");
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    p.put("max.poll.records", "5000");
    return new KafkaConsumer<>(p);
  }

  /** The newest progress record with this sink's identity: read backwards from the end in steps. */
  private Progress readProgress() {
    newestProgress = null;
    TopicPartition tp = new TopicPartition(progressTopic, 0);
    try (KafkaConsumer<byte[], byte[]> c = consumer()) {
      c.assign(List.of(tp));
      long end = c.endOffsets(List.of(tp)).get(tp);
      long begin = c.beginningOffsets(List.of(tp)).get(tp);
      long step = 1000;
      for (long upTo = end; upTo > begin; upTo = Math.max(begin, upTo - step), step *= 4) {
        long from = Math.max(begin, upTo - step);
        c.seek(tp, from);
        JsonNode newest = null;
        long deadline = System.nanoTime() + READ_DEADLINE.toNanos();
        while (c.position(tp) < upTo) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException("Cannot open sink '" + def.name() + "': reading progress topic " + progressTopic + " from "
                + from + " to " + upTo + " took longer than " + READ_DEADLINE.toSeconds() + " s");
          }
          for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
            if (r.offset() < upTo && r.key() != null && java.util.Arrays.equals(r.key(), identityBytes) && r.value() != null) {
              newest = parse(r.value(), "progress record at " + progressTopic + "/0@" + r.offset());
            }
          }
        }
        if (newest != null) {
          newestProgress = newest;
          Map<String, SourceOffsets> offsets = new TreeMap<>();
          newest.path("offsets").fields().forEachRemaining(e -> {
            Map<String, String> v = new TreeMap<>();
            e.getValue().fields().forEachRemaining(x -> v.put(x.getKey(), x.getValue().asText()));
            offsets.put(e.getKey(), new SourceOffsets(v));
          });
          return new Progress(newest.path("tick").asLong(-1), offsets);
        }
        if (from == begin) {
          break;
        }
      }
      return Progress.NONE;
    }
  }

  @Override
  public ReadBack readBack(Map<String, String> from) {
    List<Row> rows = new ArrayList<>();
    List<Long> diffs = new ArrayList<>();
    long records = 0;
    long lastLabel = -1;
    long uncovered = 0;
    long uncoveredLabel = -1;
    Map<String, String> to = new TreeMap<>();
    Map<TopicPartition, Long> fromOffset = new HashMap<>();
    JsonNode newestPositions = newestProgress == null ? null : newestProgress.path("positions");
    try (KafkaConsumer<byte[], byte[]> c = consumer()) {
      List<TopicPartition> tps = new ArrayList<>();
      for (PartitionInfo pi : c.partitionsFor(topic)) {
        tps.add(new TopicPartition(topic, pi.partition()));
      }
      c.assign(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps); // asked for after initTransactions (see the class comment)
      Map<TopicPartition, Long> begin = c.beginningOffsets(tps);
      for (TopicPartition tp : tps) {
        String known = from == null ? null : from.get(String.valueOf(tp.partition()));
        long start = known == null ? begin.get(tp) : Long.parseLong(known);
        fromOffset.put(tp, start);
        // from the newest progress record's position when that is lower: records before the known position but past
        // every progress record were committed without theirs (see the class comment) and must be covered too
        JsonNode np = newestPositions == null ? null : newestPositions.get(String.valueOf(tp.partition()));
        if (np != null && np.asLong() < start) {
          start = Math.max(begin.get(tp), np.asLong());
        }
        if (start < begin.get(tp)) {
          throw new IllegalArgumentException("Cannot read back sink '" + def.name() + "': its records in " + tp + " from offset " + start
              + " are gone (the topic starts at " + begin.get(tp) + ": retention or compaction removed them). Exactly-once needs the sink's "
              + "topic to keep its records at least since the newest snapshot; DROP SINK and CREATE SINK again to start over");
        }
        c.seek(tp, start);
        to.put(String.valueOf(tp.partition()), String.valueOf(end.get(tp)));
      }
      long deadline = System.nanoTime() + READ_DEADLINE.toNanos() * 10;
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("Cannot read back sink '" + def.name() + "' from " + topic + ": it took longer than "
              + READ_DEADLINE.toSeconds() * 10 + " s");
        }
        for (ConsumerRecord<byte[], byte[]> r : c.poll(POLL)) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          if (r.offset() >= end.get(tp) || !ours(r)) {
            continue;
          }
          long label = label(r);
          lastLabel = Math.max(lastLabel, label);
          if (r.offset() >= fromOffset.get(tp)) { // before it: already in what the bookkeeping knows the destination holds
            records++;
            decode(r, rows, diffs);
          }
          // past the newest progress record's position (or any record when there is no progress record at all):
          // committed without a progress record of its own. A newest record without this partition in its
          // positions was written before progress records named every partition: nothing can be told
          JsonNode known = newestPositions == null ? null : newestPositions.get(String.valueOf(tp.partition()));
          if (newestProgress == null || (known != null && r.offset() >= known.asLong())) {
            uncovered++;
            uncoveredLabel = Math.max(uncoveredLabel, label);
          }
        }
      }
    }
    covered.clear();
    covered.putAll(to);
    LOG.info("Sink {}: read back {} records of {} from {} to {}; the newest progress record (tick {}) covers {}; {} records past it",
        def.name(), records, topic, from, to, newestProgress == null ? "none" : newestProgress.path("tick").asText(),
        newestPositions == null ? "nothing" : newestPositions, uncovered);
    if (uncovered > 0) {
      cover(uncovered, uncoveredLabel);
    }
    long[] d = new long[diffs.size()];
    for (int i = 0; i < d.length; i++) {
      d[i] = diffs.get(i);
    }
    return new ReadBack(rows, d, records, to, lastLabel);
  }

  /** A record's label ({@code cairn-tick}), or -1 when it has none that parses. */
  private static long label(ConsumerRecord<byte[], byte[]> r) {
    Header h = r.headers().lastHeader(H_TICK);
    if (h == null) {
      return -1;
    }
    try {
      return Long.parseLong(new String(h.value(), StandardCharsets.US_ASCII));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * Writes, in a transaction of its own, a progress record that covers the {@code n} committed
   * records past the newest progress record: labelled with theirs ({@code label}, or the newest
   * progress record's when that is higher), not complete, named a repair, up to {@link #covered}.
   */
  private void cover(long n, long label) {
    long tick = Math.max(label, newestProgress == null ? -1 : newestProgress.path("tick").asLong(-1));
    ObjectNode p = JSON.createObjectNode();
    p.put("sink", def.name());
    p.put("id", def.id());
    p.put("tick", tick);
    p.put("complete", false);
    p.put("records", n);
    p.put("repair", true);
    ObjectNode pos = p.putObject("positions");
    covered.forEach(pos::put);
    p.set("offsets", newestProgress == null ? JSON.createObjectNode() : newestProgress.path("offsets").deepCopy());
    producer.beginTransaction();
    sendProgress(tick, p);
    producer.commitTransaction();
    LOG.warn("Sink {}: {} records in {} were committed without their progress record (the broker committed their transaction before "
        + "its progress record joined it); wrote progress record {} to cover them. Nothing was lost or repeated: they count as written",
        def.name(), n, topic, p);
    newestProgress = p;
  }

  private boolean ours(ConsumerRecord<byte[], byte[]> r) {
    Header h = r.headers().lastHeader(H_SINK);
    return h != null && java.util.Arrays.equals(h.value(), identityBytes);
  }

  private void decode(ConsumerRecord<byte[], byte[]> r, List<Row> rows, List<Long> diffs) {
    String where = topic + "/" + r.partition() + "@" + r.offset();
    if (def.envelope() == SinkEnvelope.UPSERT) {
      Header before = r.headers().lastHeader(H_BEFORE);
      if (before != null) {
        rows.add(row(parse(before.value(), where), where));
        diffs.add(-1L);
      }
      if (r.value() != null) {
        rows.add(row(parse(r.value(), where), where));
        diffs.add(1L);
      }
    } else {
      JsonNode v = parse(r.value(), where);
      if (!v.path("before").isNull() && !v.path("before").isMissingNode()) {
        rows.add(row(v.get("before"), where));
        diffs.add(-1L);
      }
      if (!v.path("after").isNull() && !v.path("after").isMissingNode()) {
        rows.add(row(v.get("after"), where));
        diffs.add(1L);
      }
    }
  }

  private static JsonNode parse(byte[] bytes, String where) {
    try {
      return JSON.readTree(bytes);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot read back record " + where + ": not JSON: " + e.getMessage(), e);
    }
  }

  private Row row(JsonNode n, String where) {
    Object[] v = new Object[schema.size()];
    for (int i = 0; i < v.length; i++) {
      JsonNode x = n.get(schema.column(i).name());
      if (x == null || x.isNull()) {
        continue;
      }
      v[i] = switch (schema.type(i)) {
        case BIGINT, TIMESTAMP, DATE -> x.asLong();
        case DOUBLE -> x.asDouble();
        case TEXT -> x.asText();
        case NUMERIC -> io.cairn.engine.row.Numeric.of(x.isTextual() ? new java.math.BigDecimal(x.asText()) : x.decimalValue());
        case INTERVAL -> io.cairn.engine.row.Interval.parse(x.asText());
        case BOOLEAN -> x.asBoolean();
        case NULL -> null;
      };
    }
    return Row.wrap(v);
  }

  /** Each column's {@code "name":} as JSON, escaped once. */
  private String[] names;

  /**
   * The row as a JSON object (columns by name, TIMESTAMP as microseconds, a non-finite DOUBLE as a
   * string, as Jackson writes it), written straight into a string: no tree per record.
   */
  private String json(Row r, int[] cols) {
    if (names == null) {
      String[] n = new String[schema.size()];
      for (int i = 0; i < n.length; i++) {
        n[i] = "\"" + new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(schema.column(i).name())) + "\":";
      }
      names = n;
    }
    StringBuilder b = new StringBuilder(16 * cols.length + 2);
    b.append('{');
    for (int k = 0; k < cols.length; k++) {
      int i = cols[k];
      if (k > 0) {
        b.append(',');
      }
      b.append(names[i]);
      Object x = r.get(i);
      if (x == null) {
        b.append("null");
      } else if (x instanceof Long l) {
        b.append(l.longValue());
      } else if (x instanceof Double d) {
        if (Double.isFinite(d)) {
          b.append(d.doubleValue());
        } else {
          b.append('"').append(d).append('"');
        }
      } else if (x instanceof Boolean bo) {
        b.append(bo.booleanValue());
      } else if (x instanceof java.math.BigDecimal n) {
        // exact, without an exponent, with the column's scale (a NUMERIC(15, 2) is 8737.50)
        b.append(((java.math.BigDecimal) io.cairn.engine.row.Numeric.display(n, schema.column(i).scale())).toPlainString());
      } else {
        b.append('"');
        com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(x.toString(), b);
        b.append('"');
      }
    }
    return b.append('}').toString();
  }

  private int[] allCols;

  private String json(Row r) {
    if (allCols == null) {
      allCols = java.util.stream.IntStream.range(0, schema.size()).toArray();
    }
    return json(r, allCols);
  }

  private byte[] keyJson(Row r) {
    return keyCols.length == 0 ? null : json(r, keyCols).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] bytes(JsonNode n) {
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** One change record: the row it replaces (or null) and the row it writes (or null). */
  private record Change(Row before, Row after) {}

  /** Pairs a batch's retractions and insertions by key into change records. */
  private List<Change> changes(SinkTrack.Batch b) {
    List<Change> out = new ArrayList<>();
    if (keyCols.length == 0) {
      for (int i = 0; i < b.size(); i++) {
        long d = b.diffs()[i];
        for (long u = 0; u < Math.abs(d); u++) {
          out.add(d < 0 ? new Change(b.rows().get(i), null) : new Change(null, b.rows().get(i)));
        }
      }
      return out;
    }
    Map<Row, Row[]> byKey = new LinkedHashMap<>();
    for (int i = 0; i < b.size(); i++) {
      Row row = b.rows().get(i);
      long d = b.diffs()[i];
      Row key = row.select(keyCols);
      Row[] pair = byKey.computeIfAbsent(key, k -> new Row[2]);
      int slot = d < 0 ? 0 : 1;
      if (Math.abs(d) != 1 || pair[slot] != null) {
        throw new IllegalArgumentException("Cannot write sink '" + def.name() + "': key " + key + " of '" + def.from()
            + "' is not unique (" + (d < 0 ? "two rows leave" : "two rows have") + " it at tick " + b.engineTick()
            + "). KEY (" + String.join(", ", def.key()) + ") must identify one row; choose other key columns, or use ENVELOPE DEBEZIUM without KEY");
      }
      pair[slot] = row;
    }
    for (Row[] pair : byKey.values()) {
      out.add(new Change(pair[0], pair[1]));
    }
    return out;
  }

  private ProducerRecord<byte[], byte[]> record(Change c, long label, byte[] labelBytes, String source) {
    Row any = c.after() != null ? c.after() : c.before();
    byte[] key = keyJson(any);
    byte[] value;
    List<org.apache.kafka.common.header.Header> headers = new ArrayList<>(3);
    headers.add(new org.apache.kafka.common.header.internals.RecordHeader(H_SINK, identityBytes));
    headers.add(new org.apache.kafka.common.header.internals.RecordHeader(H_TICK, labelBytes));
    if (def.envelope() == SinkEnvelope.UPSERT) {
      value = c.after() == null ? null : json(c.after()).getBytes(StandardCharsets.UTF_8);
      if (c.before() != null) {
        headers.add(new org.apache.kafka.common.header.internals.RecordHeader(H_BEFORE, json(c.before()).getBytes(StandardCharsets.UTF_8)));
      }
    } else {
      StringBuilder v = new StringBuilder(256);
      v.append("{\"before\":").append(c.before() == null ? "null" : json(c.before()));
      v.append(",\"after\":").append(c.after() == null ? "null" : json(c.after()));
      v.append(",\"op\":\"").append(c.before() == null ? "c" : c.after() == null ? "d" : "u");
      v.append("\",\"ts_ms\":").append(System.currentTimeMillis()).append(",\"source\":").append(source).append('}');
      value = v.toString().getBytes(StandardCharsets.UTF_8);
    }
    return new ProducerRecord<>(topic, null, key, value, headers);
  }

  @Override
  public Map<String, String> commit(long label, SinkTrack.Batch batch) {
    List<Change> all = changes(batch);
    Map<String, String> positions = new HashMap<>();
    int at = 0;
    do {
      int n = (int) Math.min(maxRecords, all.size() - at);
      boolean complete = at + n == all.size();
      points.accept("sink.before-send");
      producer.beginTransaction();
      List<Future<RecordMetadata>> sent = new ArrayList<>(n);
      byte[] labelBytes = Long.toString(label).getBytes(StandardCharsets.US_ASCII);
      ObjectNode src = JSON.createObjectNode();
      src.put("connector", "cairn");
      src.put("name", def.name());
      src.put("view", def.from());
      src.put("tick", label);
      String source = src.toString();
      for (int i = at; i < at + n; i++) {
        sent.add(producer.send(record(all.get(i), label, labelBytes, source)));
      }
      producer.flush();
      Map<String, String> after = new HashMap<>();
      try {
        for (Future<RecordMetadata> f : sent) {
          RecordMetadata m = f.get();
          after.merge(String.valueOf(m.partition()), String.valueOf(m.offset() + 1),
              (a, b) -> Long.parseLong(a) >= Long.parseLong(b) ? a : b);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot commit sink '" + def.name() + "': interrupted", e);
      } catch (ExecutionException e) {
        throw new IllegalStateException("Cannot commit sink '" + def.name() + "': sending to " + topic + " failed: " + e.getCause(), e.getCause());
      }
      positions.putAll(after);
      covered.putAll(after);
      ObjectNode p = JSON.createObjectNode();
      p.put("sink", def.name());
      p.put("id", def.id());
      p.put("tick", label);
      p.put("engine_tick", batch.engineTick());
      p.put("complete", complete);
      p.put("records", n);
      if (batch.pendingSinceMillis() > 0) {
        p.put("pending_since_ms", batch.pendingSinceMillis()); // when the oldest tick in it closed: a consumer can time the commit
      }
      ObjectNode pos = p.putObject("positions");
      covered.forEach(pos::put); // every partition: the whole position this record covers (see the class comment)
      ObjectNode offs = p.putObject("offsets");
      batch.offsets().forEach((s, o) -> {
        ObjectNode x = offs.putObject(s);
        o.values().forEach(x::put);
      });
      sendProgress(label, p);
      points.accept("sink.before-commit");
      producer.commitTransaction();
      points.accept("sink.after-commit");
      at += n;
    } while (at < all.size());
    return positions;
  }

  /**
   * Sends the open transaction's progress record and waits for its acknowledgement, which must
   * place it past the one before. Why wait, when {@code commitTransaction} sends the commit only
   * after every record is acknowledged anyway: a transaction was once seen committed with its
   * progress record missing (see the class comment), so the commit now goes out only for a
   * progress record the broker has placed, and a failure names the last acknowledgements.
   */
  private void sendProgress(long label, ObjectNode p) {
    Future<RecordMetadata> sent = producer.send(new ProducerRecord<>(progressTopic, 0, identityBytes, bytes(p)));
    producer.flush();
    RecordMetadata m;
    try {
      m = sent.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot commit sink '" + def.name() + "': interrupted", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot commit sink '" + def.name() + "': sending progress record of tick " + label + " to "
          + progressTopic + " failed: " + e.getCause() + " (the last acknowledged: " + recentAcks + ")", e.getCause());
    }
    if (!m.hasOffset() || m.offset() <= lastProgressOffset) {
      throw new IllegalStateException("Cannot commit sink '" + def.name() + "': the broker acknowledged progress record of tick " + label
          + " at offset " + (m.hasOffset() ? m.offset() : "none") + ", not past the one before (" + recentAcks
          + "); not committing (the transaction is aborted when the sink opens again)");
    }
    lastProgressOffset = m.offset();
    if (recentAcks.size() == 4) {
      recentAcks.removeFirst();
    }
    recentAcks.addLast("tick " + label + " at " + m.offset());
  }

  @Override
  public void close() {
    if (producer != null) {
      try {
        producer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        LOG.debug("Sink {}: closing the producer: {}", def.name(), e.toString());
      }
      producer = null;
    }
  }
}
