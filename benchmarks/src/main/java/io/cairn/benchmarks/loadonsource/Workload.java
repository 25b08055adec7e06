package io.cairn.benchmarks.loadonsource;

import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The benchmark's input and its naive oracle: a keyed Kafka topic of orders (JSON upserts with
 * tombstones, key {@code {"id":n}}) and, optionally, a Postgres table of customers changed by
 * inserts, updates and deletes in small transactions. It remembers every record's size per
 * partition, so the bytes that follow any offsets can be computed exactly.
 *
 * <p>Views (see {@link #viewsSql()}): orders per customer (the peer's aggregation), and orders per
 * customer region (a join of the topic with the table, aggregated).
 */
final class Workload {
  static final String ORDERS = "orders";
  static final String CUSTOMERS = "customers";
  static final String BY_CUSTOMER = "by_customer";
  static final String BY_REGION = "by_region";
  private static final int REGIONS = 12;

  private final LoadOnSourceConfig config;
  private final KafkaBroker kafka;
  private final String topic;
  private final Connection pg; // null without Postgres
  private final Random random;
  private final Map<Long, long[]> orders = new HashMap<>(); // id -> {customer, amount}
  private final Map<Long, long[]> customers = new HashMap<>(); // id -> {region, tier}
  private final List<List<Integer>> recordSizes = new ArrayList<>(); // per partition, per offset: key+value bytes
  private long nextCustomerId;
  private long ordersProduced;
  private long customerChanges;

  Workload(LoadOnSourceConfig config, KafkaBroker kafka, String topic, Connection pg) {
    this.config = config;
    this.kafka = kafka;
    this.topic = topic;
    this.pg = pg;
    this.random = new Random(config.seed());
    for (int p = 0; p < config.partitions(); p++) {
      recordSizes.add(new ArrayList<>());
    }
  }

  String topic() {
    return topic;
  }

  /** Creates the topic and the table with their pre-midnight content. */
  void createInitial() {
    kafka.createTopic(topic, config.partitions());
    produceOrders(config.initialOrders());
    if (pg != null) {
      exec("CREATE TABLE customers (id BIGINT PRIMARY KEY, region BIGINT NOT NULL, tier BIGINT NOT NULL)",
          "ALTER TABLE customers REPLICA IDENTITY FULL");
      List<long[]> rows = new ArrayList<>();
      for (int i = 0; i < config.initialCustomers(); i++) {
        long id = nextCustomerId++;
        long[] v = {random.nextInt(REGIONS), random.nextInt(3)};
        customers.put(id, v);
        rows.add(new long[] {id, v[0], v[1]});
      }
      try (PreparedStatement ins = pg.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)")) {
        pg.setAutoCommit(false);
        for (long[] r : rows) {
          ins.setLong(1, r[0]);
          ins.setLong(2, r[1]);
          ins.setLong(3, r[2]);
          ins.addBatch();
        }
        ins.executeBatch();
        pg.commit();
        pg.setAutoCommit(true);
      } catch (SQLException e) {
        throw new IllegalStateException("Cannot load the customers table: " + e.getMessage(), e);
      }
    }
  }

  /** One simulated hour, or the given fraction of one. */
  void hour(double fraction) {
    produceOrders((int) Math.round(config.ordersPerHour() * fraction));
    if (pg != null) {
      changeCustomers((int) Math.round(config.customerChangesPerHour() * fraction));
    }
  }

  private void produceOrders(int n) {
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(Math.min(n, 10_000));
    // customers a bit beyond the table's ids, so that some orders find no customer in the join
    long customerRange = Math.max(1, (long) (config.initialCustomers() * 1.1));
    for (int i = 0; i < n; i++) {
      long id = random.nextInt(config.orderKeys());
      int partition = (int) (id % config.partitions());
      byte[] key = ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
      byte[] value;
      if (random.nextInt(20) == 0) {
        value = null;
        orders.remove(id);
      } else {
        long customer = (long) (random.nextDouble() * customerRange);
        long amount = 1 + random.nextInt(1000);
        value = String.format(Locale.ROOT, "{\"id\":%d,\"customer\":%d,\"amount\":%d}", id, customer, amount)
            .getBytes(StandardCharsets.UTF_8);
        orders.put(id, new long[] {customer, amount});
      }
      batch.add(new ProducerRecord<>(topic, partition, key, value));
      recordSizes.get(partition).add(key.length + (value == null ? 0 : value.length));
      ordersProduced++;
      if (batch.size() == 10_000) {
        kafka.produceAll(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      kafka.produceAll(batch);
    }
  }

  private void changeCustomers(int n) {
    try (PreparedStatement ins = pg.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)");
        PreparedStatement upd = pg.prepareStatement("UPDATE customers SET region = ?, tier = ? WHERE id = ?");
        PreparedStatement del = pg.prepareStatement("DELETE FROM customers WHERE id = ?")) {
      pg.setAutoCommit(false);
      for (int i = 0; i < n; i++) {
        long id = (long) (random.nextDouble() * (nextCustomerId + 1));
        long[] cur = customers.get(id);
        if (cur == null) {
          id = nextCustomerId++;
          long[] v = {random.nextInt(REGIONS), random.nextInt(3)};
          ins.setLong(1, id);
          ins.setLong(2, v[0]);
          ins.setLong(3, v[1]);
          ins.executeUpdate();
          customers.put(id, v);
        } else if (random.nextInt(10) == 0) {
          del.setLong(1, id);
          del.executeUpdate();
          customers.remove(id);
        } else {
          long[] v = {random.nextInt(REGIONS), random.nextInt(3)};
          upd.setLong(1, v[0]);
          upd.setLong(2, v[1]);
          upd.setLong(3, id);
          upd.executeUpdate();
          customers.put(id, v);
        }
        customerChanges++;
        if ((i + 1) % config.transactionRows() == 0) {
          pg.commit();
        }
      }
      pg.commit();
      pg.setAutoCommit(true);
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot change the customers table: " + e.getMessage(), e);
    }
  }

  private void exec(String... sql) {
    try (Statement st = pg.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot run SQL on the benchmark database: " + e.getMessage(), e);
    }
  }

  /** Kafka records produced so far (before and after midnight). */
  long ordersProduced() {
    return ordersProduced;
  }

  /** Postgres rows delivered by an initial load at the start plus every row change since. */
  long customerRecordsSinceStart() {
    return config.initialCustomers() + customerChanges;
  }

  long customerChanges() {
    return customerChanges;
  }

  long customerRows() {
    return customers.size();
  }

  /** Records and key+value bytes in the topic at and after {@code offsets} (partition → next offset). */
  long[] kafkaAfter(Map<String, String> offsets) {
    long records = 0;
    long bytes = 0;
    for (int p = 0; p < recordSizes.size(); p++) {
      List<Integer> sizes = recordSizes.get(p);
      long from = offsets.containsKey(Integer.toString(p)) ? Long.parseLong(offsets.get(Integer.toString(p))) : 0;
      for (long o = from; o < sizes.size(); o++) {
        records++;
        bytes += sizes.get((int) o);
      }
    }
    return new long[] {records, bytes};
  }

  /** The SQL of the sources and views; {@code pgPort} and friends only with Postgres. */
  List<String> sql(String bootstrap, PgAccess pgAccess) {
    List<String> out = new ArrayList<>();
    out.add("CREATE SOURCE orders FROM KAFKA (brokers = '" + bootstrap + "', topic = '" + topic + "')"
        + " FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))");
    if (pgAccess != null) {
      out.add(String.format(Locale.ROOT,
          "CREATE SOURCE customers FROM POSTGRES (host = '%s', port = '%d', database = '%s', user = '%s', password = SECRET '%s',"
              + " table = 'public.customers', slot = 'cairn_bench', publication = 'cairn_bench')",
          pgAccess.host(), pgAccess.port(), pgAccess.database(), pgAccess.user(), pgAccess.passwordEnv()));
    }
    out.add("CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer");
    if (pgAccess != null) {
      out.add("CREATE MATERIALIZED VIEW by_region AS SELECT customers.region, COUNT(*) AS n, SUM(orders.amount) AS total"
          + " FROM orders JOIN customers ON orders.customer = customers.id GROUP BY customers.region");
    }
    return out;
  }

  /** How cairn reaches the benchmark's Postgres database. */
  record PgAccess(String host, int port, String database, String user, String passwordEnv) {}

  /** The oracle of {@link #BY_CUSTOMER}: customer, count, sum. */
  List<Row> expectedByCustomer() {
    Map<Long, long[]> g = new TreeMap<>();
    orders.values().forEach(o -> {
      long[] a = g.computeIfAbsent(o[0], k -> new long[2]);
      a[0]++;
      a[1] += o[1];
    });
    List<Row> out = new ArrayList<>();
    g.forEach((c, a) -> out.add(Row.of(c, a[0], a[1])));
    return out;
  }

  /** The oracle of {@link #BY_REGION}: region, count, sum over orders whose customer exists. */
  List<Row> expectedByRegion() {
    Map<Long, long[]> g = new TreeMap<>();
    orders.values().forEach(o -> {
      long[] c = customers.get(o[0]);
      if (c != null) {
        long[] a = g.computeIfAbsent(c[0], k -> new long[2]);
        a[0]++;
        a[1] += o[1];
      }
    });
    List<Row> out = new ArrayList<>();
    g.forEach((r, a) -> out.add(Row.of(r, a[0], a[1])));
    return out;
  }
}
