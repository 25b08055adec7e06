package io.cairn.benchmarks.sink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.sink.ChangeFeed;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkTrack;
import io.cairn.engine.sql.SqlSession;
import io.cairn.engine.sql.Subscribe;
import io.cairn.node.Node;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The figures of issue 33, side by side in one run against one real broker (KRaft, in this JVM):
 *
 * <ol>
 *   <li>Sink throughput ÷ a plain idempotent producer writing the same records: an engine holds
 *       {@code n} upserts of the load generator, a Kafka sink (ENVELOPE UPSERT, keyed by id) commits
 *       them (split into transactions of 50,000 records); then the very records it wrote (read back
 *       from its topic: keys, values, headers) are sent again by an idempotent, non-transactional
 *       producer with the same settings (acks=all, lz4, linger 5 ms). Five rounds each, alternated.
 *   <li>Commit latency, from the close of the oldest tick in a commit to its progress record being
 *       visible to a {@code read_committed} consumer (a node serving a generator at 5,000 records/s,
 *       a GROUP BY view and a sink of it), p50/p99.
 *   <li>SUBSCRIBE latency, from a record's producer timestamp in Kafka to its change arriving at a
 *       subscriber of a Kafka source on the same node (2,000 records/s), p50/p99.
 *   <li>The engine's ingest throughput (1M upserts into a GROUP BY view, catch-up ticks) with 100
 *       idle subscribers of that view (they never read) ÷ with none; six rounds each after two to warm up, alternated.
 * </ol>
 *
 * <p>Run: {@code mvn -B -ntp -q -pl benchmarks -am package -DskipTests && java -Xmx3g -cp
 * "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*"
 * io.cairn.benchmarks.sink.SinkBenchmark [upserts, default 600000]}
 */
public final class SinkBenchmark {
  private static final ObjectMapper JSON = new ObjectMapper();

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 600_000;
    List<String> out = new ArrayList<>();
    try (KafkaBroker kafka = KafkaBroker.start()) {
      out.addAll(throughput(kafka, n));
      out.addAll(latencies(kafka));
    }
    out.addAll(idleSubscribers());
    System.out.println();
    out.forEach(System.out::println);
  }

  // ------------------------------------------------------------------ 1. throughput

  static List<String> throughput(KafkaBroker kafka, long n) throws Exception {
    List<Double> sink = new ArrayList<>();
    List<Double> plain = new ArrayList<>();
    long records = 0;
    for (int round = 0; round < 5; round++) {
      String topic = KafkaBroker.uniqueTopic("bench-sink");
      try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(100_000, Duration.ofMillis(200))).sinkMaxPendingRows(50_000_000)
          .build()) {
        SqlSession s = new SqlSession(e, new InMemoryCatalogLog(), Clock.systemUTC());
        s.execute("CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + n + ", limit = " + n + ", seed = " + (3 + round) + ") ENVELOPE UPSERT");
        s.execute("CREATE SINK out FROM gen INTO KAFKA (BROKERS '" + kafka.bootstrapServers() + "', TOPIC '" + topic + "') FORMAT JSON ENVELOPE UPSERT");
        while (e.offsets().getOrDefault("gen", io.cairn.engine.source.SourceOffsets.EMPTY).getLong("offset", 0) < n) {
          e.catchUpTick();
        }
        SinkTrack t = e.sink("out").orElseThrow();
        try (Sink k = e.sinkConnector("kafka").orElseThrow().create(t.definition(), t.schema(), t.keyCols(), e.secrets(), p -> {})) {
          k.open();
          t.reconcile(k.readBack(t.positions()), -1);
          SinkTrack.Batch b = t.batch();
          long t0 = System.nanoTime();
          k.commit(t.nextLabel(), b);
          double secs = (System.nanoTime() - t0) / 1e9;
          records = b.size();
          sink.add(records / secs);
        }
      }
      List<ConsumerRecord<byte[], byte[]>> same = kafka.readAll(topic, true);
      String topic2 = kafka.createTopic(KafkaBroker.uniqueTopic("bench-plain"), 1);
      Properties p = new Properties();
      p.put("bootstrap.servers", kafka.bootstrapServers());
      p.put("enable.idempotence", "true");
      p.put("acks", "all");
      p.put("linger.ms", "5");
      p.put("compression.type", "lz4");
      p.put("key.serializer", ByteArraySerializer.class.getName());
      p.put("value.serializer", ByteArraySerializer.class.getName());
      try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
        long t0 = System.nanoTime();
        for (ConsumerRecord<byte[], byte[]> r : same) {
          prod.send(new ProducerRecord<>(topic2, null, r.key(), r.value(), r.headers()));
        }
        prod.flush();
        plain.add(same.size() / ((System.nanoTime() - t0) / 1e9));
      }
      System.out.printf(Locale.ROOT, "round %d: sink %.0f records/s, idempotent producer %.0f records/s (%d records)%n", round,
          sink.get(round), plain.get(round), records);
    }
    List<String> lines = new ArrayList<>();
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < sink.size(); i++) {
      ratios.add(sink.get(i) / plain.get(i));
    }
    Collections.sort(ratios);
    lines.add(String.format(Locale.ROOT, "| sink throughput ÷ idempotent producer, median of %d rounds | %.2f |", ratios.size(), ratios.get(ratios.size() / 2)));
    for (int i = 0; i < sink.size(); i++) {
      lines.add(String.format(Locale.ROOT, "| sink throughput, round %d | %,d records | sink %,.0f records/s | idempotent producer %,.0f records/s | ratio %.2f |",
          i + 1, records, sink.get(i), plain.get(i), sink.get(i) / plain.get(i)));
    }
    return lines;
  }

  // ------------------------------------------------------------------ 2 and 3. latencies on a serving node

  static List<String> latencies(KafkaBroker kafka) throws Exception {
    Path dir = Files.createTempDirectory("sink-bench");
    String sinkTopic = KafkaBroker.uniqueTopic("bench-latency");
    String events = kafka.createTopic(KafkaBroker.uniqueTopic("bench-events"), 1);
    String yaml = String.join("\n",
        "store:", "  uri: \"file://" + dir.resolve("store") + "?create=true\"",
        "engine:", "  workers: 2", "  tick:", "    max-records: 10000", "    max-duration: 50ms",
        "snapshots:", "  cron: \"0 0 0 * * ?\"",
        "http:", "  port: 0", "pgwire:", "  port: 0",
        "init:",
        "  - \"CREATE SOURCE gen FROM LOAD GENERATOR (keys = 100000, categories = 50, seed = 5, rate = 5000)\"",
        "  - \"CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category\"",
        "  - \"CREATE SINK out FROM by_cat INTO KAFKA (BROKERS '" + kafka.bootstrapServers() + "', TOPIC '" + sinkTopic + "') FORMAT JSON ENVELOPE UPSERT\"",
        "  - \"CREATE SOURCE ev FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '" + events + "') FORMAT JSON (id BIGINT, ts BIGINT)\"",
        "");
    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config, yaml);
    CairnConfig cfg = ConfigLoader.load(config, Map.of());
    Node node = Node.recover(cfg, Node.Options.defaults());
    List<Long> commit = Collections.synchronizedList(new ArrayList<>());
    List<Long> subscribe = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean stop = new AtomicBoolean();
    try {
      node.serve();
      Thread.sleep(3000); // the sink opens and commits the view's contents
      Thread progress = new Thread(() -> readProgress(kafka, sinkTopic + "-progress", commit, stop));
      progress.start();
      Subscribe.Running sub = node.subscribe(Subscribe.parse("SUBSCRIBE ev WITH (SNAPSHOT = false)"));
      Thread reader = new Thread(() -> {
        try {
          while (!stop.get()) {
            ChangeFeed.Changes c = sub.reader().next(200);
            if (c == null) {
              continue;
            }
            long now = System.currentTimeMillis();
            for (int i = 0; i < c.size(); i++) {
              subscribe.add(now - c.rows().get(i).getLong(1));
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      reader.start();
      Properties p = new Properties();
      p.put("bootstrap.servers", kafka.bootstrapServers());
      p.put("linger.ms", "0");
      p.put("key.serializer", ByteArraySerializer.class.getName());
      p.put("value.serializer", ByteArraySerializer.class.getName());
      try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
        long start = System.nanoTime();
        for (long i = 0; System.nanoTime() - start < Duration.ofSeconds(20).toNanos(); i++) {
          long due = start + i * 500_000L; // 2,000 records/s
          long wait = due - System.nanoTime();
          if (wait > 0) {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          }
          String v = "{\"id\":" + i + ",\"ts\":" + System.currentTimeMillis() + "}";
          prod.send(new ProducerRecord<>(events, v.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        }
      }
      Thread.sleep(1000);
      stop.set(true);
      reader.join(5000);
      progress.join(5000);
      sub.reader().close();
    } finally {
      node.close();
    }
    return List.of(
        String.format(Locale.ROOT, "| sink commit latency, tick close → visible to read_committed | %d commits | p50 %s ms | p99 %s ms |",
            commit.size(), pct(commit, 0.50), pct(commit, 0.99)),
        String.format(Locale.ROOT, "| SUBSCRIBE latency, Kafka record → change at the subscriber | %d records | p50 %s ms | p99 %s ms |",
            subscribe.size(), pct(subscribe, 0.50), pct(subscribe, 0.99)));
  }

  private static void readProgress(KafkaBroker kafka, String topic, List<Long> out, AtomicBoolean stop) {
    Properties p = new Properties();
    p.put("bootstrap.servers", kafka.bootstrapServers());
    p.put("isolation.level", "read_committed");
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
      TopicPartition tp = new TopicPartition(topic, 0);
      c.assign(List.of(tp));
      c.seekToEnd(List.of(tp));
      while (!stop.get()) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(50))) {
          long now = System.currentTimeMillis();
          try {
            JsonNode j = JSON.readTree(r.value());
            long since = j.path("pending_since_ms").asLong(0);
            if (since > 0 && j.path("records").asLong() > 0) {
              out.add(now - since);
            }
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        }
      }
    }
  }

  private static String pct(List<Long> v, double q) {
    List<Long> s;
    synchronized (v) {
      s = new ArrayList<>(v);
    }
    if (s.isEmpty()) {
      return "n/a";
    }
    Collections.sort(s);
    return String.valueOf(s.get((int) Math.min(s.size() - 1, Math.round(q * (s.size() - 1)))));
  }

  // ------------------------------------------------------------------ 4. idle subscribers

  static List<String> idleSubscribers() {
    List<Double> none = new ArrayList<>();
    List<Double> hundred = new ArrayList<>();
    for (int round = 0; round < 14; round++) {
      boolean with = round % 2 == 1;
      try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(100_000, Duration.ofMillis(200))).build()) {
        SqlSession s = new SqlSession(e, new InMemoryCatalogLog(), Clock.systemUTC());
        long n = 1_000_000;
        s.execute("CREATE SOURCE gen FROM LOAD GENERATOR (keys = 100000, categories = 1000, limit = " + n + ", seed = 7) ENVELOPE UPSERT");
        s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category");
        List<ChangeFeed.Subscription> subs = new ArrayList<>();
        if (with) {
          for (int i = 0; i < 100; i++) {
            subs.add(e.feed("by_cat").subscribe(false, 10_000_000));
          }
        }
        long t0 = System.nanoTime();
        while (e.offsets().getOrDefault("gen", io.cairn.engine.source.SourceOffsets.EMPTY).getLong("offset", 0) < n) {
          e.catchUpTick();
        }
        double rate = n / ((System.nanoTime() - t0) / 1e9);
        subs.forEach(ChangeFeed.Subscription::close);
        if (round >= 2) { // the first two warm the JIT
          (with ? hundred : none).add(rate);
        }
        System.out.printf(Locale.ROOT, "idle subscribers round %d (%s): %.0f records/s%n", round, with ? "100" : "none", rate);
      }
    }
    Collections.sort(none);
    Collections.sort(hundred);
    double a = none.get(none.size() / 2);
    double b = hundred.get(hundred.size() / 2);
    return List.of(String.format(Locale.ROOT,
        "| engine ingest with 100 idle subscribers ÷ none (1M upserts, GROUP BY of 1,000 groups, median of 6 each) | none %,.0f records/s | 100 subscribers %,.0f records/s | ratio %.3f |",
        a, b, b / a));
  }
}
