package io.cairn.benchmarks.source;

import io.cairn.connectors.kafka.KafkaSourceConnector;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Read throughput of the Kafka source alone (UPSERT, JSON, 4 columns) on the in-process broker:
 * {@code records} upserts over 10,000 keys in 3 partitions, read from the start until the source
 * is caught up. benchmarks/RESULTS.md reports 261K-489K records/s on the reference machine; the
 * "≥ 1M records/s" target there is for an end-to-end replay (the load-on-source benchmark), not
 * for the source alone, so this is a measurement without a bound.
 *
 * <p>Run (from the repository root):
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.source.KafkaSourceBenchmark [records] [runs]
 * </pre>
 *
 * Defaults: 300,000 records, 1 run (each run reads a fresh topic with a fresh source). {@code
 * -Dcairn.bench.kafka.<client property>=value} adds a Kafka client property to the source's
 * options. Prints one line per run.
 */
public final class KafkaSourceBenchmark {
  private KafkaSourceBenchmark() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 300_000;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    try (KafkaBroker broker = KafkaBroker.start()) {
      for (int run = 0; run < runs; run++) {
        run(broker, n, run);
      }
    }
  }

  private static void run(KafkaBroker broker, int n, int run) {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("bench"), 3);
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
    SourceDefinition def = new SourceDefinition("bench", "kafka", options(broker.bootstrapServers(), topic),
        Schema.parse("id BIGINT, name TEXT, amount DOUBLE, ts TIMESTAMP"), List.of("id"), Envelope.UPSERT);
    Map<Row, Row> rows = new HashMap<>();
    SourceOutput out = new SourceOutput() {
      @Override
      public void append(Row row, long diff) {
        throw new IllegalStateException("Cannot append: an UPSERT source delivered an append");
      }

      @Override
      public void upsert(Row key, Row row) {
        if (row == null) {
          rows.remove(key);
        } else {
          rows.put(key, row);
        }
      }
    };
    try (Source s = new KafkaSourceConnector().open(def, ref -> null)) {
      long t0 = System.nanoTime();
      s.seek(SourceOffsets.EMPTY);
      long delivered = 0;
      while (!(delivered >= n && s.caughtUp())) {
        delivered += s.poll(out, 10_000, Duration.ofMillis(100));
      }
      double secs = (System.nanoTime() - t0) / 1e9;
      Map<String, Long> load = s.meter().read();
      if (load.get(LoadMeter.RECORDS) != n || rows.size() != Math.min(n, 10_000)) {
        throw new IllegalStateException("Cannot trust run " + run + ": read " + load.get(LoadMeter.RECORDS) + " of " + n + " records, "
            + rows.size() + " keys");
      }
      System.out.printf(Locale.ROOT, "run %d: kafka upsert throughput: %d records in %.2f s = %.0f records/s; meter %s%n", run, delivered,
          secs, delivered / secs, load);
    }
  }

  /** The source's options; {@code -Dcairn.bench.kafka.<client property>=value} adds client properties. */
  private static Map<String, String> options(String brokers, String topic) {
    Map<String, String> o = new HashMap<>(Map.of("brokers", brokers, "topic", topic));
    System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("cairn.bench.kafka."))
        .forEach(k -> o.put("properties." + k.substring("cairn.bench.kafka.".length()), System.getProperty(k)));
    return o;
  }
}
