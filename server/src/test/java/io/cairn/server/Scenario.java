package io.cairn.server;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
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
 * The kill-test workload: a load generator (upserts), a keyed Kafka topic (upserts with
 * tombstones) and a Postgres table (CDC), five views (an aggregate over each source, an
 * aggregate over the join of the generator and the topic, and a top-k of the generator's rows),
 * and a naive oracle that recomputes each view from the raw input (for Postgres: the table
 * itself). Producing is thread-safe, so records can arrive while the node runs.
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
  private volatile long produced; // read by samplers while produce() runs
  /** The Postgres table {@code customers} (null: no Postgres source). */
  final io.cairn.testkit.postgres.PostgresServer pg;
  final String pgDatabase;
  final String slot;

  Scenario(KafkaBroker kafka, long genLimit, long seed) {
    this(kafka, null, genLimit, seed);
  }

  Scenario(KafkaBroker kafka, io.cairn.testkit.postgres.PostgresServer pg, long genLimit, long seed) {
    this.kafka = kafka;
    this.genLimit = genLimit;
    this.random = new Random(seed);
    this.topic = KafkaBroker.uniqueTopic("orders");
    kafka.createTopic(topic, 3);
    this.pg = pg;
    this.pgDatabase = pg == null ? null : pg.createUniqueDatabase("kill");
    this.slot = pg == null ? null : "kill_" + Long.toHexString(seed & 0xffffffL);
    if (pg != null) {
      try (var c = pg.connect(pgDatabase); var st = c.createStatement()) {
        st.execute("CREATE TABLE customers (id BIGINT PRIMARY KEY, region TEXT NOT NULL)");
        st.execute("ALTER TABLE customers REPLICA IDENTITY FULL");
        st.execute("INSERT INTO customers SELECT g, 'r' || (g % 6) FROM generate_series(0, 199) g");
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** Changes {@code n} Postgres rows at random (update region, delete, insert). */
  synchronized void changeCustomers(int n) {
    try (var c = pg.connect(pgDatabase); var st = c.createStatement()) {
      for (int i = 0; i < n; i++) {
        long id = random.nextInt(300);
        int op = random.nextInt(10);
        if (op == 0) {
          st.execute("DELETE FROM customers WHERE id = " + id);
        } else {
          st.execute("INSERT INTO customers VALUES (" + id + ", 'r" + random.nextInt(6) + "') "
              + "ON CONFLICT (id) DO UPDATE SET region = EXCLUDED.region");
        }
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("Cannot change customers: " + e.getMessage(), e);
    }
  }

  /** {@code by_region} as the table holds it now. */
  synchronized List<Row> expectedByRegion() {
    List<Row> out = new ArrayList<>();
    try (var c = pg.connect(pgDatabase); var st = c.createStatement();
        var rs = st.executeQuery("SELECT region, COUNT(*) FROM customers GROUP BY region ORDER BY region")) {
      while (rs.next()) {
        out.add(Row.of(rs.getString(1), rs.getLong(2)));
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  /** Produces {@code n} upserts/deletes over 500 order ids. */
  synchronized void produce(int n) {
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
    List<String> all = new ArrayList<>(baseSql());
    if (pg != null) {
      all.add(String.format(Locale.ROOT, "CREATE SOURCE customers FROM POSTGRES (host = '%s', port = '%d', database = '%s',"
          + " user = '%s', password = SECRET 'PGPASSWORD', table = 'public.customers', slot = '%s', publication = '%s',"
          + " \"stats-interval-ms\" = '200', \"heartbeat-interval-ms\" = '200')", pg.host(), pg.port(), pgDatabase, pg.user(), slot, slot));
      all.add("CREATE MATERIALIZED VIEW by_region AS SELECT region, COUNT(*) AS n FROM customers GROUP BY region");
    }
    return all;
  }

  private List<String> baseSql() {
    return List.of(
        String.format(Locale.ROOT,
            "CREATE SOURCE gen FROM LOAD GENERATOR (keys = %d, categories = %d, seed = %d, limit = %d, rate = 30000)",
            GEN_KEYS, GEN_CATEGORIES, GEN_SEED, genLimit),
        "CREATE SOURCE orders FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '" + topic + "',"
            + " \"request-timeout-ms\" = '2000', \"properties.reconnect.backoff.max.ms\" = '1000')"
            + " FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))",
        "CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n, SUM(amount) AS total,"
            + " MIN(amount) AS lo, MAX(amount) AS hi FROM gen GROUP BY category",
        "CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer",
        "CREATE MATERIALIZED VIEW joined AS SELECT gen.category, COUNT(*) AS n, SUM(orders.amount) AS total"
            + " FROM gen JOIN orders ON gen.id = orders.id GROUP BY gen.category",
        // one group of the generator's ~2,700 live rows: large enough that the top-k keeps its head between ticks
        "CREATE MATERIALIZED VIEW top_gen AS SELECT id, amount FROM gen ORDER BY amount DESC, id LIMIT 5");
  }

  Path writeConfig(Path dir, String storeUri, Map<String, String> storeProps, String cron) {
    return writeConfig(dir, storeUri, storeProps, cron, 0);
  }

  Path writeConfig(Path dir, String storeUri, Map<String, String> storeProps, String cron, int httpPort) {
    StringBuilder y = new StringBuilder();
    y.append("store:\n  uri: \"").append(storeUri).append("\"\n  properties:\n");
    storeProps.forEach((k, v) -> y.append("    ").append(k).append(": \"").append(v).append("\"\n"));
    y.append("engine:\n  workers: 2\n  tick:\n    max-records: 5000\n    max-duration: 50ms\n");
    y.append("snapshots:\n  cron: \"").append(cron).append("\"\n  retention:\n    keep-last: 3\n    keep-daily-days: 1\n    gc-grace: 1h\n");
    y.append("http:\n  port: ").append(httpPort).append('\n');
    y.append("sources:\n  restart:\n    initial-backoff: 200ms\n    max-backoff: 2s\n");
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

  /** {@code top_gen}: the five largest amounts of the generator's table (ties by id), sorted as rows. */
  List<Row> expectedTopGen() {
    List<Row> rows = new ArrayList<>(genTable().values());
    rows.sort(java.util.Comparator.<Row>comparingLong(r -> -r.getLong(2)).thenComparingLong(r -> r.getLong(0)));
    List<Row> out = new ArrayList<>();
    for (Row r : rows.subList(0, Math.min(5, rows.size()))) {
      out.add(Row.of(r.getLong(0), r.getLong(2)));
    }
    out.sort(null);
    return out;
  }

  synchronized List<Row> expectedByCustomer() {
    Map<Long, List<Long>> g = new TreeMap<>();
    orders.values().forEach(o -> g.computeIfAbsent(o[0], k -> new ArrayList<>()).add(o[1]));
    List<Row> out = new ArrayList<>();
    g.forEach((c, v) -> out.add(Row.of(c, (long) v.size(), sum(v))));
    return out;
  }

  synchronized List<Row> expectedJoined() {
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
