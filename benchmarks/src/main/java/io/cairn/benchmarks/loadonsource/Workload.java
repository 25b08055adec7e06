package io.cairn.benchmarks.loadonsource;

import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
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
 * <p>Views (see {@link #sql}): orders per customer (the peer's aggregation), orders per customer
 * region (a join of the topic with the table, aggregated), and with {@code orderHistory} every
 * order record ever written per customer region: the topic read a second time, append-only (its
 * tombstones skipped as bad records), joined with the table; that join's state holds the whole
 * history.
 *
 * <p>Memory: the oracle holds two longs per order id, two per customer id for the history, and one
 * int per record for the sizes (about 0.6 GB at 100M records over 10M ids), not objects per key.
 */
final class Workload {
  static final String ORDERS = "orders";
  static final String CUSTOMERS = "customers";
  static final String BY_CUSTOMER = "by_customer";
  static final String BY_REGION = "by_region";
  static final String ORDER_EVENTS = "order_events";
  static final String HISTORY_BY_REGION = "history_by_region";
  private static final int REGIONS = 12;

  private final LoadOnSourceConfig config;
  private final KafkaBroker kafka;
  private final String topic;
  private final Connection pg; // null without Postgres
  private final Random random;
  private final long[] orderCustomer; // per order id: its customer, or -1 when it has no row
  private final long[] orderAmount; // per order id: its amount
  private final long[] historyCount; // per customer id an order may name: records naming it (orderHistory)
  private final long[] historySum; // per customer id: the sum of their amounts
  private final long customerRange; // orders name customers in [0, customerRange)
  /**
   * The customers table's oracle, by id: its region, -1 for an id with no row. Arrays, not a map
   * of a million boxed ids and rows: the oracle lives in the JVM of the nodes it measures, and every
   * collection cycle of theirs would mark those objects too.
   */
  private final CustomerRows customers = new CustomerRows();
  private final List<IntList> recordSizes = new ArrayList<>(); // per partition, per offset: key+value bytes
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
      recordSizes.add(new IntList());
    }
    this.orderCustomer = new long[config.orderKeys()];
    java.util.Arrays.fill(orderCustomer, -1);
    this.orderAmount = new long[config.orderKeys()];
    // customers a bit beyond the table's ids, so that some orders find no customer in the join
    this.customerRange = Math.max(1, (long) (config.initialCustomers() * 1.1));
    this.historyCount = new long[config.orderHistory() ? (int) customerRange : 0];
    this.historySum = new long[historyCount.length];
  }

  /** The customers' rows by id (ids are dense: the table's ids are 0, 1, 2, … as they are inserted). */
  private static final class CustomerRows {
    private byte[] region = new byte[1024];
    private int size;

    CustomerRows() {
      java.util.Arrays.fill(region, (byte) -1);
    }

    /** Whether id has a row. */
    boolean has(long id) {
      return id >= 0 && id < region.length && region[(int) id] >= 0;
    }

    /** The region of id's row; the row must exist. */
    long region(long id) {
      return region[(int) id];
    }

    /** Inserts or updates id's row (its tier is not kept: no view reads it). */
    void put(long id, long r) {
      if (r < 0 || r > Byte.MAX_VALUE || id < 0 || id >= Integer.MAX_VALUE - 8) {
        throw new IllegalArgumentException("Cannot hold customer " + id + " (region " + r + ") in the oracle");
      }
      if (id >= region.length) {
        int n = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(id + 1, 2L * region.length));
        int old = region.length;
        region = java.util.Arrays.copyOf(region, n);
        java.util.Arrays.fill(region, old, n, (byte) -1);
      }
      if (region[(int) id] < 0) {
        size++;
      }
      region[(int) id] = (byte) r;
    }

    /** Deletes id's row, if it has one. */
    void remove(long id) {
      if (has(id)) {
        region[(int) id] = -1;
        size--;
      }
    }

    int size() {
      return size;
    }
  }

  /** A growable list of ints: 4 bytes a record instead of a boxed Integer's reference. */
  private static final class IntList {
    private int[] a = new int[1024];
    private int size;

    void add(int v) {
      if (size == a.length) {
        a = java.util.Arrays.copyOf(a, a.length * 2);
      }
      a[size++] = v;
    }

    int get(int i) {
      return a[i];
    }

    int size() {
      return size;
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
        customers.put(id, v[0]);
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
    long t0 = System.nanoTime();
    produceOrders((int) Math.round(config.ordersPerHour() * fraction));
    long t1 = System.nanoTime();
    if (pg != null) {
      changeCustomers((int) Math.round(config.customerChangesPerHour() * fraction));
    }
    produceNanos += t1 - t0;
    changeNanos += System.nanoTime() - t1;
  }

  private long produceNanos;
  private long changeNanos;

  /** Time spent producing Kafka records and changing the table since the start, ms: {produce, change}. */
  long[] writeMillis() {
    return new long[] {produceNanos / 1_000_000, changeNanos / 1_000_000};
  }

  private void produceOrders(int n) {
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(Math.min(n, 10_000));
    StringBuilder json = new StringBuilder(64);
    for (int i = 0; i < n; i++) {
      int id = random.nextInt(config.orderKeys());
      int partition = id % config.partitions();
      json.setLength(0);
      byte[] key = json.append("{\"id\":").append(id).append('}').toString().getBytes(StandardCharsets.UTF_8);
      byte[] value;
      if (random.nextInt(20) == 0) {
        value = null;
        orderCustomer[id] = -1;
      } else {
        long customer = (long) (random.nextDouble() * customerRange);
        long amount = 1 + random.nextInt(1000);
        json.setLength(0);
        value = json.append("{\"id\":").append(id).append(",\"customer\":").append(customer).append(",\"amount\":")
            .append(amount).append('}').toString().getBytes(StandardCharsets.UTF_8);
        orderCustomer[id] = customer;
        orderAmount[id] = amount;
        if (config.orderHistory()) {
          historyCount[(int) customer]++;
          historySum[(int) customer] += amount;
        }
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

  /**
   * {@code n} row changes in transactions of {@code transactionRows}: each transaction's inserts,
   * updates and deletes are sent as three JDBC batches, in that order. A transaction never touches a
   * row after deleting it (a deleted id is no longer drawn) and inserts only new ids, so that order
   * gives the same rows and the same number of change events as running them one by one.
   */
  private void changeCustomers(int n) {
    try (PreparedStatement ins = pg.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)");
        PreparedStatement upd = pg.prepareStatement("UPDATE customers SET region = ?, tier = ? WHERE id = ?");
        PreparedStatement del = pg.prepareStatement("DELETE FROM customers WHERE id = ?")) {
      pg.setAutoCommit(false);
      int[] pending = new int[3];
      for (int i = 0; i < n; i++) {
        long id = (long) (random.nextDouble() * (nextCustomerId + 1));
        if (!customers.has(id)) {
          id = nextCustomerId++;
          long[] v = {random.nextInt(REGIONS), random.nextInt(3)};
          ins.setLong(1, id);
          ins.setLong(2, v[0]);
          ins.setLong(3, v[1]);
          ins.addBatch();
          pending[0]++;
          customers.put(id, v[0]);
        } else if (random.nextInt(10) == 0) {
          del.setLong(1, id);
          del.addBatch();
          pending[2]++;
          customers.remove(id);
        } else {
          long[] v = {random.nextInt(REGIONS), random.nextInt(3)};
          upd.setLong(1, v[0]);
          upd.setLong(2, v[1]);
          upd.setLong(3, id);
          upd.addBatch();
          pending[1]++;
          customers.put(id, v[0]);
        }
        customerChanges++;
        if ((i + 1) % config.transactionRows() == 0 || i == n - 1) {
          flush(ins, upd, del, pending);
          pg.commit();
        }
      }
      pg.commit();
      pg.setAutoCommit(true);
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot change the customers table: " + e.getMessage(), e);
    }
  }

  private static void flush(PreparedStatement ins, PreparedStatement upd, PreparedStatement del, int[] pending)
      throws SQLException {
    PreparedStatement[] all = {ins, upd, del};
    for (int k = 0; k < 3; k++) {
      if (pending[k] > 0) {
        for (int count : all[k].executeBatch()) {
          if (count != 1) {
            throw new IllegalStateException("Cannot change the customers table: a batched statement changed " + count
                + " rows, not 1: the oracle would no longer match the table");
          }
        }
        pending[k] = 0;
      }
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
      IntList sizes = recordSizes.get(p);
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
    if (pgAccess != null && config.orderHistory()) {
      // the topic once more, append-only: every order record ever written (a tombstone is not an order: skipped)
      out.add("CREATE SOURCE order_events FROM KAFKA (brokers = '" + bootstrap + "', topic = '" + topic
          + "', \"bad-records\" = 'skip') FORMAT JSON ENVELOPE NONE (id BIGINT, customer BIGINT, amount BIGINT)");
      out.add("CREATE MATERIALIZED VIEW history_by_region AS SELECT customers.region, COUNT(*) AS n, SUM(order_events.amount)"
          + " AS total FROM order_events JOIN customers ON order_events.customer = customers.id GROUP BY customers.region");
    }
    return out;
  }

  /** How cairn reaches the benchmark's Postgres database. */
  record PgAccess(String host, int port, String database, String user, String passwordEnv) {}

  /** The oracle of {@link #BY_CUSTOMER}: customer, count, sum. */
  List<Row> expectedByCustomer() {
    Map<Long, long[]> g = new TreeMap<>();
    for (int id = 0; id < orderCustomer.length; id++) {
      if (orderCustomer[id] >= 0) {
        long[] a = g.computeIfAbsent(orderCustomer[id], k -> new long[2]);
        a[0]++;
        a[1] += orderAmount[id];
      }
    }
    List<Row> out = new ArrayList<>();
    g.forEach((c, a) -> out.add(Row.of(c, a[0], a[1])));
    return out;
  }

  /** The oracle of {@link #BY_REGION}: region, count, sum over orders whose customer exists. */
  List<Row> expectedByRegion() {
    Map<Long, long[]> g = new TreeMap<>();
    for (int id = 0; id < orderCustomer.length; id++) {
      if (orderCustomer[id] >= 0 && customers.has(orderCustomer[id])) {
        long[] a = g.computeIfAbsent(customers.region(orderCustomer[id]), k -> new long[2]);
        a[0]++;
        a[1] += orderAmount[id];
      }
    }
    List<Row> out = new ArrayList<>();
    g.forEach((r, a) -> out.add(Row.of(r, a[0], a[1])));
    return out;
  }

  /** The oracle of {@link #HISTORY_BY_REGION}: region, count, sum over every order record whose customer exists now. */
  List<Row> expectedHistoryByRegion() {
    Map<Long, long[]> g = new TreeMap<>();
    for (int c = 0; c < historyCount.length; c++) {
      if (historyCount[c] != 0 && customers.has(c)) {
        long[] a = g.computeIfAbsent(customers.region(c), k -> new long[2]);
        a[0] += historyCount[c];
        a[1] += historySum[c];
      }
    }
    List<Row> out = new ArrayList<>();
    g.forEach((r, a) -> out.add(Row.of(r, a[0], a[1])));
    return out;
  }

  /** Order records in the topic that are not tombstones (what {@link #ORDER_EVENTS} holds). */
  long orderEvents() {
    long n = 0;
    for (long c : historyCount) {
      n += c;
    }
    return n;
  }
}
