package io.cairn.recovery;

import io.cairn.connectors.testing.kafka.KafkaBroker;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * The kill-test workload: a load generator (upserts) and a keyed Kafka topic (upserts with
 * tombstones), three views (aggregate over each, and an aggregate over their join), and a naive
 * oracle that recomputes each view from the raw input.
 */
final class Scenario {
  static final int GEN_KEYS = 3000;
  static final int GEN_CATEGORIES = 7;
  static final long GEN_SEED = 11;
  final long genLimit;
  final String topic;
  final KafkaBroker kafka;
  final Map<Long, long[]> orders = new HashMap<>(); // id -> {customer, amount}
  private final Random random;
  private long produced;

  Scenario(KafkaBroker kafka, long genLimit, long seed) {
    this.kafka = kafka;
    this.genLimit = genLimit;
    this.random = new Random(seed);
    this.topic = KafkaBroker.uniqueTopic("orders");
    kafka.createTopic(topic, 3);
  }

  /** Produces {@code n} upserts/deletes over 500 order ids. */
  void produce(int n) {
    for (int i = 0; i < n; i++) {
      long id = random.nextInt(500);
      int partition = (int) (id % 3);
      String key = "{\"id\":" + id + "}";
      if (random.nextInt(10) == 0) {
        kafka.produce(topic, partition, key, null);
        orders.remove(id);
      } else {
        long customer = random.nextInt(40);
        long amount = random.nextInt(1000);
        kafka.produce(topic, partition, key,
            String.format(Locale.ROOT, "{\"id\":%d,\"customer\":%d,\"amount\":%d}", id, customer, amount));
        orders.put(id, new long[] {customer, amount});
      }
      produced++;
    }
  }

  long produced() {
    return produced;
  }

  List<String> sql() {
    return List.of(
        String.format(Locale.ROOT,
            "CREATE SOURCE gen FROM LOAD GENERATOR (keys = %d, categories = %d, seed = %d, limit = %d, rate = 30000)",
            GEN_KEYS, GEN_CATEGORIES, GEN_SEED, genLimit),
        "CREATE SOURCE orders FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '" + topic + "')"
            + " FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))",
        "CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n, SUM(amount) AS total,"
            + " MIN(amount) AS lo, MAX(amount) AS hi FROM gen GROUP BY category",
        "CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer",
        "CREATE MATERIALIZED VIEW joined AS SELECT gen.category, COUNT(*) AS n, SUM(orders.amount) AS total"
            + " FROM gen JOIN orders ON gen.id = orders.id GROUP BY gen.category");
  }

  Path writeConfig(Path dir, String storeUri, Map<String, String> storeProps, String cron) {
    StringBuilder y = new StringBuilder();
    y.append("store:\n  uri: \"").append(storeUri).append("\"\n  properties:\n");
    storeProps.forEach((k, v) -> y.append("    ").append(k).append(": \"").append(v).append("\"\n"));
    y.append("engine:\n  workers: 2\n  tick:\n    max-records: 5000\n    max-duration: 50ms\n");
    y.append("snapshots:\n  cron: \"").append(cron).append("\"\n  retention:\n    keep-last: 3\n    keep-daily-days: 1\n    gc-grace: 1h\n");
    y.append("http:\n  port: 0\n");
    y.append("init:\n");
    for (String s : sql()) {
      y.append("  - \"").append(s.replace("\"", "\\\"")).append("\"\n");
    }
    try {
      Path f = dir.resolve("cairn.yaml");
      Files.writeString(f, y.toString());
      return f;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The generator's table after all {@code genLimit} records. */
  Map<Long, Row> genTable() {
    var s = new LoadGeneratorConnector.Settings(GEN_KEYS, GEN_CATEGORIES, GEN_SEED, 10, genLimit, 0);
    Map<Long, Row> t = new HashMap<>();
    for (long i = 0; i < genLimit; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        t.remove(r.id());
      } else {
        t.put(r.id(), r.row());
      }
    }
    return t;
  }

  List<Row> expectedByCategory() {
    Map<Long, List<Long>> g = new TreeMap<>();
    genTable().values().forEach(r -> g.computeIfAbsent(r.getLong(1), k -> new ArrayList<>()).add(r.getLong(2)));
    List<Row> out = new ArrayList<>();
    g.forEach((c, v) -> out.add(Row.of(c, (long) v.size(), sum(v), v.stream().mapToLong(x -> x).min().getAsLong(),
        v.stream().mapToLong(x -> x).max().getAsLong())));
    return out;
  }

  List<Row> expectedByCustomer() {
    Map<Long, List<Long>> g = new TreeMap<>();
    orders.values().forEach(o -> g.computeIfAbsent(o[0], k -> new ArrayList<>()).add(o[1]));
    List<Row> out = new ArrayList<>();
    g.forEach((c, v) -> out.add(Row.of(c, (long) v.size(), sum(v))));
    return out;
  }

  List<Row> expectedJoined() {
    Map<Long, Row> gen = genTable();
    Map<Long, List<Long>> g = new TreeMap<>();
    orders.forEach((id, o) -> {
      Row r = gen.get(id);
      if (r != null) {
        g.computeIfAbsent(r.getLong(1), k -> new ArrayList<>()).add(o[1]);
      }
    });
    List<Row> out = new ArrayList<>();
    g.forEach((c, v) -> out.add(Row.of(c, (long) v.size(), sum(v))));
    return out;
  }

  private static long sum(List<Long> v) {
    return v.stream().mapToLong(x -> x).sum();
  }
}
