package io.cairn.benchmarks.coldstart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A full replay and a catch-up of an upsert topic whose records carry text, each in a fresh
 * process, as a user meets them: {@code cairn recover --until-caught-up} on an empty store (every
 * record read), then a node that snapshots, more records, and {@code recover} again (only the new
 * ones read). Figures come from the recovery reports: records replayed over the catch-up time.
 *
 * <p>Records: {@code {"id":…,"customer":"Customer 00042","note":"…","amount":…}}, about 90 bytes
 * of JSON, upserts over {@code keys} keys (a tombstone for one in 50), customers and notes drawn
 * from 10,000 and 1,000 distinct values. Views: per customer (TEXT group key) a count and a sum,
 * and per amount bucket (BIGINT group key) a count, so text and number group keys are timed side by
 * side in the computing time.
 *
 * <pre>
 *   java -cp "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *     io.cairn.benchmarks.coldstart.TextReplayBenchmark [records=3000000] [keys=100000] [more=100000] [rounds=3]
 * </pre>
 * {@code -Dcairn.bench.views=text|number|text,number} chooses the views; {@code
 * -Dcairn.bench.hold=true} keeps the broker up afterwards until a file {@code stop} appears in the
 * work directory; {@code -Dcairn.bench.java-opts="A;;B"} gives the rounds the JVM options A, B, A, …
 * in turn (as {@code CAIRN_JAVA_OPTS}), for an A/B in one run.
 */
public final class TextReplayBenchmark {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOPIC = "orders";

  private TextReplayBenchmark() {}

  public static void main(String[] args) throws Exception {
    long records = args.length > 0 ? Long.parseLong(args[0]) : 3_000_000;
    int keys = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
    int more = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 3;
    String views = System.getProperty("cairn.bench.views", "text,number");
    List<String> javaOpts = System.getProperty("cairn.bench.java-opts", "").isBlank() ? List.of()
        : List.of(System.getProperty("cairn.bench.java-opts").split(";;"));
    Path dist = Path.of(System.getProperty("cairn.bench.dist", "dist/target/cairn-0.1.0-SNAPSHOT/cairn-0.1.0-SNAPSHOT")).toAbsolutePath();
    Path bin = dist.resolve("bin/cairn");
    Path work = Files.createTempDirectory("cairn-text-");
    Random rnd = new Random(42);
    try (KafkaBroker kafka = KafkaBroker.startInChildJvm()) {
      kafka.createTopic(TOPIC, 3);
      long t0 = System.nanoTime();
      long bytes = produce(kafka, rnd, 0, records, keys);
      System.out.printf(Locale.ROOT, "produced %,d records (%,d bytes of JSON values, %.1f per record) in %.1f s%n", records, bytes,
          (double) bytes / records, (System.nanoTime() - t0) / 1e9);
      List<String> init = new ArrayList<>();
      init.add("CREATE SOURCE orders FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '" + TOPIC + "') FORMAT JSON ENVELOPE UPSERT "
          + "(id BIGINT, customer TEXT, note TEXT, amount BIGINT, PRIMARY KEY (id))");
      if (views.contains("text")) {
        init.add("CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer");
      }
      if (views.contains("number")) {
        init.add("CREATE MATERIALIZED VIEW by_amount AS SELECT amount, COUNT(*) AS n FROM orders GROUP BY amount");
      }
      System.out.println("views: " + views);
      System.out.println("| run | records | catch-up | records/s | reading | computing | load | total phases |");
      System.out.println("|---|---|---|---|---|---|---|---|");
      for (int r = 0; r < rounds; r++) {
        String opts = javaOpts.isEmpty() ? null : javaOpts.get(r % javaOpts.size());
        if (opts != null) { // an A/B of JVM options: the rounds alternate them
          ColdRecoverBenchmark.ENV.put("CAIRN_JAVA_OPTS", opts);
          System.out.println("round " + (r + 1) + ": CAIRN_JAVA_OPTS=" + opts);
        }
        Path cfg = ColdRecoverBenchmark.config(work, "round-" + r, init);
        Path dir = cfg.getParent();
        print("full replay " + (r + 1), report(ColdRecoverBenchmark.run(bin, dir, List.of("recover", "-c", cfg.toString(), "--until-caught-up", "--json"))));
        // a snapshot of the state at the end of the topic, then more records, then a catch-up
        ColdRecoverBenchmark.snapshotOnce(bin, cfg, Map.of(), Duration.ZERO);
        produce(kafka, rnd, records + (long) r * more, more, keys);
        print("catch-up " + (r + 1), report(ColdRecoverBenchmark.run(bin, dir, List.of("recover", "-c", cfg.toString(), "--until-caught-up", "--json"))));
        records += more;
      }
      if (Boolean.getBoolean("cairn.bench.hold")) { // keeps the broker up, to profile a recovery by hand
        System.out.println("holding the broker at " + kafka.bootstrapServers() + " until " + work.resolve("stop") + " exists");
        while (!Files.exists(work.resolve("stop"))) {
          Thread.sleep(500);
        }
      }
    }
    System.out.println("work directory: " + work);
  }

  private static JsonNode report(String out) throws Exception {
    return JSON.readTree(out.substring(out.indexOf('{')));
  }

  private static void print(String run, JsonNode r) {
    long replayed = 0;
    for (JsonNode s : r.path("sources")) {
      replayed += s.path("recordsReplayed").asLong();
    }
    long catchUp = r.path("catchUpMillis").asLong();
    JsonNode t = r.path("catchUpTicks");
    System.out.printf(Locale.ROOT, "| %s | %,d | %,d ms | **%,.0f** | %,d ms | %,d ms | %,d ms | %s |%n", run, replayed, catchUp,
        replayed * 1000.0 / Math.max(1, catchUp), t.path("readingMillis").asLong(), t.path("computingMillis").asLong(), r.path("loadMillis").asLong(),
        r.path("phaseMillis"));
  }

  /** Produces {@code n} upserts (a tombstone for one in 50) numbered from {@code from}; returns the values' bytes. */
  static long produce(KafkaBroker kafka, Random rnd, long from, long n, int keys) {
    long bytes = 0;
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(50_000);
    for (long i = from; i < from + n; i++) {
      int id = rnd.nextInt(keys);
      byte[] key = ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
      byte[] value = null;
      if (rnd.nextInt(50) != 0) {
        int c = rnd.nextInt(10_000);
        int note = rnd.nextInt(1_000);
        value = String.format(Locale.ROOT, "{\"id\":%d,\"customer\":\"Customer %05d\",\"note\":\"note %03d: deliver to the back door\",\"amount\":%d}",
            id, c, note, rnd.nextInt(1_000)).getBytes(StandardCharsets.UTF_8);
        bytes += value.length;
      }
      batch.add(new ProducerRecord<>(TOPIC, (int) (Math.floorMod(id, 3)), key, value));
      if (batch.size() == 50_000) {
        kafka.produceAll(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      kafka.produceAll(batch);
    }
    return bytes;
  }
}
