package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node under attack, as a careless or hostile client would attack it, while it ingests Kafka and
 * Postgres: `cairn run` in a child JVM, and at the same time SQL nested 10, 100, 1,000 and
 * 100,000 deep, 100 MB request bodies, 500 connections sending their headers a byte at a time, 64
 * concurrent heavy queries (over HTTP and pgwire), cancels in the middle of a parse and of a scan,
 * and malformed and 5 MB records under every {@code bad-records} mode. Throughout, {@code /status}
 * answers every poll, no thread is deadlocked and the Kafka source's position keeps advancing;
 * afterwards every view equals its naive oracle.
 *
 * <p>Figures (logged and written to {@code target/hostile-client-figures.txt}): {@code /status}
 * latency under the mix, the time to refuse a statement nested 100,000 deep, the time from a
 * cancel to the statement's thread being free, and the node's CPU with 500 idle hostile
 * connections open.
 */
class HostileClientIT {
  private static final Logger LOG = LoggerFactory.getLogger(HostileClientIT.class);
  private static final int BAD_GOOD_BEFORE = 100;
  private static final int BAD_GOOD_AFTER = 100;
  private static final int WIDE_ROWS = 100_000;
  /** How long the node may take from its start to {@code /health/ready}. */
  private static final Duration READY_WITHIN = Duration.ofSeconds(120);

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void anAttackedNodeKeepsIngestingAndEveryViewEqualsTheOracle(@TempDir Path dir) throws Exception {
    long seed = System.nanoTime();
    try (PostgresServer pg = PostgresServer.start(); KafkaBroker kafka = KafkaBroker.start()) {
      Scenario scenario = new Scenario(kafka, pg, 40_000, seed);
      scenario.produce(500);
      Map<String, String> badTopics = new java.util.LinkedHashMap<>();
      for (String mode : List.of("fail", "skip", "dlq")) {
        badTopics.put(mode, kafka.createTopic(KafkaBroker.uniqueTopic("bad_" + mode), 1, Map.of("max.message.bytes", "16777216")));
      }
      String dlq = kafka.createTopic(KafkaBroker.uniqueTopic("dead_letters"), 1);
      List<String> init = new ArrayList<>(scenario.sql());
      init.add("CREATE SOURCE wide FROM LOAD GENERATOR (keys = " + WIDE_ROWS + ", limit = " + WIDE_ROWS + ", seed = 5)");
      for (var e : badTopics.entrySet()) {
        String options = switch (e.getKey()) {
          case "fail" -> "\"bad-records\" = 'fail'";
          case "skip" -> "\"bad-records\" = 'skip'";
          default -> "\"bad-records\" = 'dead-letter', \"dead-letter-topic\" = '" + dlq + "'";
        };
        init.add("CREATE SOURCE bad_" + e.getKey() + " FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '"
            + e.getValue() + "', " + options + ") FORMAT JSON ENVELOPE NONE (id BIGINT, v BIGINT)");
        init.add("CREATE MATERIALIZED VIEW bad_" + e.getKey() + "_sum AS SELECT COUNT(*) AS n, SUM(v) AS total FROM bad_" + e.getKey());
      }
      int httpPort = Http.freePort();
      int pgPort = Http.freePort();
      Path config = Http.config(dir, "0 0 0 * * ?", init, "recovery:\n  catch-up-rate-limit: 0");
      String yaml = Files.readString(config).replaceFirst("http:\n  port: \\d+", "http:\n  port: " + httpPort)
          .replaceFirst("pgwire:\n  port: \\d+", "pgwire:\n  port: " + pgPort);
      Files.writeString(config, yaml);
      Path log = dir.resolve("node.log");
      ChildNode node = startNode(config, log, pg.password());
      try {
        // /status must answer (live) while the node recovers
        node.awaitReady(httpPort, READY_WITHIN, "hostile-client node", notReady -> {
          assertThat(notReady.code()).isEqualTo(503);
          assertThat(Http.get(httpPort, "/health/live").code()).isEqualTo(200);
        });
        Figures figures = attack(kafka, scenario, badTopics, httpPort, pgPort, node.pid());
        // every view equals its oracle once the sources have caught up
        Map<String, List<Row>> expected = new java.util.LinkedHashMap<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        List<String> differing = List.of("(not checked)");
        while (System.nanoTime() < deadline) {
          expected.put("by_category", scenario.expectedByCategory());
          expected.put("by_customer", scenario.expectedByCustomer());
          expected.put("joined", scenario.expectedJoined());
          expected.put("by_region", scenario.expectedByRegion());
          expected.put("bad_fail_sum", List.of(Row.of((long) BAD_GOOD_BEFORE, sumV(0, BAD_GOOD_BEFORE))));
          Row all = Row.of((long) (BAD_GOOD_BEFORE + BAD_GOOD_AFTER), sumV(0, BAD_GOOD_BEFORE) + sumV(1000, BAD_GOOD_AFTER));
          expected.put("bad_skip_sum", List.of(all));
          expected.put("bad_dlq_sum", List.of(all));
          differing = new ArrayList<>();
          for (var e : expected.entrySet()) {
            List<Row> got = select(httpPort, e.getKey());
            if (!got.equals(e.getValue())) {
              differing.add(e.getKey() + ": got " + got + ", expected " + e.getValue());
            }
          }
          if (differing.isEmpty()) {
            break;
          }
          Thread.sleep(500);
        }
        assertThat(differing).as("views that differ from the oracle after the attack").isEmpty();
        JsonNode status = Http.get(httpPort, "/status").json();
        assertThat(status.path("deadlockedThreads").asInt()).isZero();
        JsonNode failed = status.path("sources").path("bad_fail");
        assertThat(failed.path("state").asText()).isEqualTo("FAILED");
        assertThat(failed.path("error").asText()).as("the failed source names the bad record's position")
            .contains("offset " + BAD_GOOD_BEFORE);
        for (String mode : List.of("skip", "dlq")) {
          assertThat(status.path("sources").path("bad_" + mode).path("state").asText()).as(mode).isEqualTo("RUNNING");
        }
        // both bad records of the dead-letter source are in the dead-letter topic, with their coordinates
        List<String> letters = new ArrayList<>();
        kafka.readAll(dlq).forEach(r -> letters.add(new String(r.value(), StandardCharsets.UTF_8)));
        assertThat(letters).hasSize(2);
        assertThat(node.isAlive()).isTrue();
        figures.write(dir);
      } finally {
        node.stop(Duration.ofSeconds(20));
        LOG.info("node log tail:\n{}", node.tail());
      }
    }
  }

  /** Rows of source {@code wide} once the generator has emitted all its records (the naive oracle). */
  private static int wideRows() {
    var s = new io.cairn.engine.loadgen.LoadGeneratorConnector.Settings(WIDE_ROWS, 10, 5, 10, WIDE_ROWS, 0);
    java.util.Set<Long> ids = new java.util.HashSet<>();
    for (long i = 0; i < WIDE_ROWS; i++) {
      var r = io.cairn.engine.loadgen.LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        ids.remove(r.id());
      } else {
        ids.add(r.id());
      }
    }
    return ids.size();
  }

  /** Sum of v over the good records {@code from .. from + n - 1} (v = id * 3). */
  private static long sumV(long from, int n) {
    long s = 0;
    for (long i = from; i < from + n; i++) {
      s += i * 3;
    }
    return s;
  }

  private static List<Row> select(int port, String view) {
    Http.Response r = Http.post(port, "/sql?format=json", "SELECT * FROM " + view);
    if (r.code() != 200) {
      return List.of(Row.of("HTTP " + r.code() + ": " + r.body()));
    }
    List<Row> rows = new ArrayList<>();
    for (JsonNode row : r.json().get(0).get("rows")) {
      Object[] v = new Object[row.size()];
      for (int i = 0; i < v.length; i++) {
        JsonNode x = row.get(i);
        v[i] = x.isNull() ? null : x.isIntegralNumber() ? (Object) x.asLong() : x.isNumber() ? (Object) x.asDouble() : x.asText();
      }
      rows.add(Row.wrap(v));
    }
    Collections.sort(rows);
    return rows;
  }

  /** {@code cairn run --config <config>} in a child JVM with 1 GB of heap. */
  static ChildNode startNode(Path config, Path log, String pgPassword) throws Exception {
    return ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx1g").env("PGPASSWORD", pgPassword).start(log);
  }

  /** What the attack measured. */
  static final class Figures {
    final List<Long> statusMicros = Collections.synchronizedList(new ArrayList<>());
    final List<Long> refuseDeepMicros = Collections.synchronizedList(new ArrayList<>());
    final List<Long> cancelFreeMillis = Collections.synchronizedList(new ArrayList<>());
    /** Each statement of the cancel loop: what it was, how it ended and after how many ms. */
    final List<String> cancelLoop = Collections.synchronizedList(new ArrayList<>());
    double idleCpuPercent;
    double baselineCpuPercent;
    long statusFailures;
    String ingestion = "";
    final Map<String, AtomicLong> outcomes = new java.util.concurrent.ConcurrentHashMap<>();

    void count(String what) {
      outcomes.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
    }

    static String pct(List<Long> v, double p, double scale) {
      List<Long> s;
      synchronized (v) {
        s = new ArrayList<>(v);
      }
      if (s.isEmpty()) {
        return "-";
      }
      Collections.sort(s);
      return String.format(Locale.ROOT, "%.1f", s.get((int) Math.min(s.size() - 1, Math.floor(p * s.size()))) / scale);
    }

    String text() {
      return String.format(Locale.ROOT, "status polls: %d, failures %d, latency p50 %s ms, p99 %s ms, max %s ms%n"
              + "refusing a statement nested 100,000 deep (client side, over HTTP, 200 KB body): %d samples, p50 %s ms, max %s ms%n"
              + "cancel to the statement's thread free (pgwire, scan of %d rows): %s ms (samples %s)%n"
              + "node CPU with 500 idle hostile connections: %.1f %% of one core (without them: %.1f %%)%n"
              + "outcomes: %s%n"
              + "cancel loop: %d statements, the first ones: %s%n"
              + "Kafka source during the attack (every 3 s): %s%n",
          statusMicros.size(), statusFailures, pct(statusMicros, 0.5, 1000), pct(statusMicros, 0.99, 1000), pct(statusMicros, 1.0, 1000),
          refuseDeepMicros.size(), pct(refuseDeepMicros, 0.5, 1000), pct(refuseDeepMicros, 1.0, 1000), WIDE_ROWS,
          pct(cancelFreeMillis, 1.0, 1), cancelFreeMillis, idleCpuPercent, baselineCpuPercent, new java.util.TreeMap<>(outcomes),
          cancelLoop.size(), firstOf(cancelLoop, 6), ingestion);
    }

    private static List<String> firstOf(List<String> v, int n) {
      synchronized (v) {
        return new ArrayList<>(v.subList(0, Math.min(n, v.size())));
      }
    }

    void write(Path dir) throws Exception {
      String t = text();
      LOG.info("Hostile-client figures:\n{}", t);
      Path out = Path.of("target", "hostile-client-figures.txt");
      Files.createDirectories(out.getParent());
      Files.writeString(out, t);
    }
  }

  private Figures attack(KafkaBroker kafka, Scenario scenario, Map<String, String> badTopics, int httpPort, int pgPort, long pid)
      throws Exception {
    Figures f = new Figures();
    AtomicBoolean stop = new AtomicBoolean();
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    ExecutorService pool = Executors.newCachedThreadPool();
    List<Socket> slow = new CopyOnWriteArrayList<>();
    int wideRows = wideRows();
    try {
      produceBadRecords(kafka, badTopics);
      // ingestion: Kafka upserts and Postgres changes keep coming
      pool.submit(guard(errors, () -> {
        while (!stop.get()) {
          scenario.produce(40);
          scenario.changeCustomers(3);
          Thread.sleep(100);
        }
        return null;
      }));
      // monitoring: /status every 20 ms; every answer must come, and say no thread is deadlocked
      pool.submit(guard(errors, () -> {
        while (!stop.get()) {
          long t0 = System.nanoTime();
          try {
            Http.Response r = Http.get(httpPort, "/status");
            f.statusMicros.add((System.nanoTime() - t0) / 1000);
            if (r.code() != 200 || r.json().path("deadlockedThreads").asInt() != 0) {
              f.statusFailures++;
            }
          } catch (RuntimeException e) {
            f.statusFailures++;
          }
          Thread.sleep(20);
        }
        return null;
      }));
      // the source keeps reading: its position and the records acked to the topic, sampled every 3 s
      List<Long> positions = new CopyOnWriteArrayList<>();
      List<Long> acked = new CopyOnWriteArrayList<>();
      pool.submit(guard(errors, () -> {
        while (!stop.get()) {
          acked.add(scenario.produced()); // before the position: records acked by then are in the topic
          positions.add(ordersPosition(httpPort));
          Thread.sleep(3000);
        }
        return null;
      }));
      // nested SQL at 10, 100, 1,000 and 100,000 deep
      for (int t = 0; t < 2; t++) {
        pool.submit(guard(errors, () -> {
          int[] depths = {10, 100, 1_000, 100_000};
          int i = 0;
          while (!stop.get()) {
            int depth = depths[i++ % depths.length];
            String sql = "SELECT " + "(".repeat(depth) + "category" + ")".repeat(depth) + " FROM by_category";
            long t0 = System.nanoTime();
            Http.Response r = Http.post(httpPort, "/sql", sql);
            long micros = (System.nanoTime() - t0) / 1000;
            if (depth <= 64) {
              // a real query: it waits its turn behind the heavy ones, and may run out of time doing so
              assertThat(r.code()).as("depth %d: %s", depth, r.body()).isIn(200, 503, 504);
            } else {
              assertThat(r.code()).as("depth %d", depth).isEqualTo(400);
              assertThat(r.body()).contains("nested more than 64 levels deep");
              if (depth == 100_000) {
                f.refuseDeepMicros.add(micros);
              }
            }
            f.count("nested " + depth + " -> " + r.code());
          }
          return null;
        }));
      }
      // 100 MB bodies, declared and undeclared
      pool.submit(guard(errors, () -> {
        while (!stop.get()) {
          f.count("100 MB body (declared) -> " + hugeBody(httpPort, true));
          f.count("100 MB body (chunked) -> " + hugeBody(httpPort, false));
        }
        return null;
      }));
      // 500 connections sending their headers a byte at a time
      pool.submit(guard(errors, () -> {
        byte[] head = "POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8\r\n\r\nSELECT 1".getBytes(StandardCharsets.US_ASCII);
        Map<Socket, Integer> at = new java.util.HashMap<>();
        while (!stop.get()) {
          while (at.size() < 500) {
            Socket s = new Socket();
            s.connect(new InetSocketAddress("127.0.0.1", httpPort), 5000);
            at.put(s, 0);
            slow.add(s);
          }
          for (var it = at.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            try {
              e.getKey().getOutputStream().write(head[e.getValue() % head.length]);
              e.setValue(e.getValue() + 1);
            } catch (java.io.IOException closed) {
              f.count("slow connection closed by the node");
              e.getKey().close();
              slow.remove(e.getKey());
              it.remove();
            }
          }
          Thread.sleep(200);
        }
        return null;
      }));
      // 64 concurrent heavy queries: 32 over HTTP, 32 over pgwire
      for (int t = 0; t < 32; t++) {
        pool.submit(guard(errors, () -> {
          while (!stop.get()) {
            Http.Response r = Http.post(httpPort, "/sql", "SELECT id, amount * 2 AS twice, category FROM wide WHERE amount >= 0");
            f.count("heavy HTTP -> " + r.code());
            // 64 heavy queries on two cores: each is answered, refused while the SQL threads and their
            // queue are full (503), or stopped by its statement timeout after waiting its turn (504)
            assertThat(r.code()).as(r.body()).isIn(200, 503, 504);
          }
          return null;
        }));
        pool.submit(guard(errors, () -> {
          try (Connection c = pgwire(pgPort); var st = c.createStatement()) {
            while (!stop.get()) {
              try (var rs = st.executeQuery("SELECT id, amount * 2 AS twice, category FROM wide WHERE amount >= 0")) {
                int n = 0;
                while (rs.next()) {
                  n++;
                }
                assertThat(n).isEqualTo(wideRows);
                f.count("heavy pgwire -> ok");
              } catch (SQLException e) {
                assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("57014"); // its statement timeout
                f.count("heavy pgwire -> 57014");
              }
            }
          }
          return null;
        }));
      }
      // cancels in the middle of a parse and of a scan
      pool.submit(guard(errors, () -> {
        try (Connection c = pgwire(pgPort)) {
          String longParse = "SELECT " + "amount + ".repeat(50_000) + "1 AS x FROM wide";
          String scan = "SELECT id, amount * 2 AS twice FROM wide";
          int i = 0;
          while (!stop.get()) {
            String sql = i++ % 2 == 0 ? longParse : scan;
            var st = c.createStatement();
            String what = sql == scan ? "scan" : "parse";
            // a cancel that arrives before the node has read the whole statement is dropped (as in
            // PostgreSQL): send one every 50 ms until the statement has answered. (Statement.cancel
            // sends one per execution and ignores later calls; the connection's cancelQuery sends each time.)
            AtomicBoolean answered = new AtomicBoolean();
            org.postgresql.PGConnection canceller = c.unwrap(org.postgresql.PGConnection.class);
            pool.submit(() -> {
              Thread.sleep(30);
              while (!answered.get()) {
                canceller.cancelQuery();
                Thread.sleep(50);
              }
              return null;
            });
            long t0 = System.nanoTime();
            String outcome;
            try (var rs = st.executeQuery(sql)) {
              outcome = "cancel came too late (" + what + ")";
            } catch (SQLException e) {
              if (e.getSQLState().equals("57014")) {
                outcome = "canceled (" + what + ")";
              } else {
                // the statement finished before any cancel landed: 50,000 terms are refused as too deep
                assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("54001");
                outcome = "cancel came too late, refused as too deep (" + what + ")";
              }
            } finally {
              answered.set(true);
            }
            f.count(outcome);
            long took = (System.nanoTime() - t0) / 1_000_000;
            f.cancelLoop.add(outcome + " after " + took + " ms");
            // cancelled or not, a statement ends within the statement timeout (30 s), with a margin for two loaded cores
            assertThat(took).as("%s: a statement of the cancel loop answered within its budget", outcome).isLessThan(40_000);
            st.close();
          }
        }
        return null;
      }));
      Thread.sleep(20_000);
      // the cancel loop's statements take their turn behind 64 heavy ones: the attack goes on (up
      // to a minute more) until it has seen a parse and a scan cancelled, each under the attack
      long more = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while ((f.outcomes.get("canceled (parse)") == null || f.outcomes.get("canceled (scan)") == null) && System.nanoTime() < more) {
        Thread.sleep(200);
      }
      stop.set(true);
      pool.shutdown();
      assertThat(pool.awaitTermination(90, TimeUnit.SECONDS)).as("attackers stopped").isTrue();
      LOG.info("Attack over; figures so far:\n{}", f.text());
      assertThat(errors).as("attack threads' failures").isEmpty();
      for (Socket s : slow) {
        s.close();
      }
      assertThat(f.statusFailures).as("failed /status polls").isZero();
      assertThat(f.statusMicros.size()).as("status polls").isGreaterThan(100);
      // ingestion never stopped: in every 3 s window that began with records waiting in the topic,
      // the Kafka source's position advanced (a window with nothing to read may end where it began:
      // the test's own producer shares two loaded cores with the node and can fall silent)
      assertThat(positions.size()).isGreaterThanOrEqualTo(6);
      int waitingWindows = 0;
      for (int i = 1; i < positions.size(); i++) {
        if (positions.get(i - 1) < acked.get(i - 1)) {
          waitingWindows++;
          assertThat(positions.get(i)).as("orders position at sample %d of %s (records acked: %s)", i, positions, acked)
              .isGreaterThan(positions.get(i - 1));
        }
      }
      assertThat(waitingWindows).as("windows that began with records to read (positions %s, acked %s)", positions, acked)
          .isGreaterThanOrEqualTo(positions.size() / 2);
      f.ingestion = "positions " + positions + ", records acked " + acked;
      assertThat(f.refuseDeepMicros).isNotEmpty();
      assertThat(f.outcomes.get("heavy HTTP -> 200")).as("heavy queries answered over HTTP").isNotNull();
      assertThat(f.outcomes.get("canceled (parse)")).as("parses cancelled: %s; the cancel loop: %s", f.outcomes, f.cancelLoop).isNotNull();
      assertThat(f.outcomes.get("canceled (scan)")).as("scans cancelled: %s; the cancel loop: %s", f.outcomes, f.cancelLoop).isNotNull();
      assertThat(f.outcomes.get("heavy pgwire -> ok")).as("heavy queries answered over pgwire").isNotNull();
      measureCancel(f, httpPort, pgPort);
      measureIdleCpu(f, httpPort, pid);
      return f;
    } finally {
      stop.set(true);
      pool.shutdownNow();
      for (Socket s : slow) {
        s.close();
      }
    }
  }

  private static java.util.concurrent.Callable<Void> guard(List<Throwable> errors, java.util.concurrent.Callable<Void> c) {
    return () -> {
      try {
        return c.call();
      } catch (Throwable t) {
        errors.add(t);
        LOG.error("attack thread failed", t);
        return null;
      }
    };
  }

  private static Connection pgwire(int port) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", "cairn");
    p.setProperty("connectTimeout", "10");
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/cairn", p);
  }

  /** The sum of the Kafka source's offsets, from /status. */
  private static long ordersPosition(int port) {
    JsonNode offsets = Http.get(port, "/status").json().path("sources").path("orders").path("offsets");
    long sum = 0;
    for (var it = offsets.fields(); it.hasNext(); ) {
      sum += it.next().getValue().asLong();
    }
    return sum;
  }

  /**
   * Good records 0..99 (v = id * 3), a malformed one, a 5 MB malformed one, good records
   * 1000..1099, on each bad-record topic: under {@code fail} the source stops at offset 100 with the
   * 100 before it applied; under {@code skip} both bad ones are skipped; with a dead-letter topic
   * both land there (the 5 MB one cut to fit, with its coordinates).
   */
  private static void produceBadRecords(KafkaBroker kafka, Map<String, String> topics) {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(16 << 20));
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      for (String topic : topics.values()) {
        for (int i = 0; i < BAD_GOOD_BEFORE; i++) {
          producer.send(new ProducerRecord<>(topic, 0, null, "{\"id\":" + i + ",\"v\":" + (i * 3) + "}"));
        }
        producer.send(new ProducerRecord<>(topic, 0, null, "{\"id\": not json"));
        producer.send(new ProducerRecord<>(topic, 0, null, "{\"id\":1,\"v\":\"" + "x".repeat(5 << 20)));
        for (int i = 1000; i < 1000 + BAD_GOOD_AFTER; i++) {
          producer.send(new ProducerRecord<>(topic, 0, null, "{\"id\":" + i + ",\"v\":" + (i * 3) + "}"));
        }
      }
      producer.flush();
    }
  }

  /** Sends a 100 MB body (declared with Content-Length, or chunked) and returns the status line the node answered. */
  private static String hugeBody(int port, boolean declared) throws Exception {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      long size = 100L << 20;
      out.write(("POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (declared ? "Content-Length: " + size : "Transfer-Encoding: chunked")
          + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[1 << 20];
      java.util.Arrays.fill(chunk, (byte) 'a');
      try {
        for (long sent = 0; sent < size; sent += chunk.length) {
          if (!declared) {
            out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
          }
          out.write(chunk);
          if (!declared) {
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
          }
          if (in.available() > 0) {
            break; // answered while sending
          }
        }
      } catch (java.io.IOException closed) {
        // the node closed the connection after answering
      }
      byte[] status = in.readNBytes(12);
      return new String(status, StandardCharsets.US_ASCII).trim();
    }
  }

  /** Starts a scan over pgwire, cancels it, and times until the node says no statement runs any more. */
  private static void measureCancel(Figures f, int httpPort, int pgPort) throws Exception {
    try (Connection c = pgwire(pgPort)) {
      for (int round = 0; round < 5; round++) {
        var st = c.createStatement();
        java.util.concurrent.CompletableFuture<Void> q = java.util.concurrent.CompletableFuture.runAsync(() -> {
          try (var rs = st.executeQuery("SELECT id * 2 AS x, amount FROM wide WHERE amount >= 0")) {
            while (rs.next()) {
              // read
            }
          } catch (SQLException e) {
            // 57014 expected
          }
        });
        long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (Http.get(httpPort, "/status").json().path("statementsRunning").asInt() == 0 && !q.isDone() && System.nanoTime() < until) {
          Thread.sleep(1);
        }
        if (q.isDone()) {
          continue; // finished before it could be cancelled
        }
        long t0 = System.nanoTime();
        st.cancel();
        while (Http.get(httpPort, "/status").json().path("statementsRunning").asInt() > 0) {
          assertThat(System.nanoTime() - t0).as("statement still running 10 s after its cancel").isLessThan(10_000_000_000L);
          Thread.sleep(1);
        }
        f.cancelFreeMillis.add((System.nanoTime() - t0) / 1_000_000);
        q.get(10, TimeUnit.SECONDS);
        st.close();
      }
    }
  }

  /** The node's CPU (from /proc) over 6 s with no clients, then over 6 s with 500 idle connections open. */
  private static void measureIdleCpu(Figures f, int httpPort, long pid) throws Exception {
    Path stat = Path.of("/proc/" + pid + "/stat");
    if (!Files.exists(stat)) {
      return;
    }
    Thread.sleep(3000); // what the attack left running (JIT, GC) settles
    f.baselineCpuPercent = cpuPercent(stat, 6000);
    List<Socket> idle = new ArrayList<>();
    try {
      for (int i = 0; i < 500; i++) {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", httpPort), 5000);
        idle.add(s);
      }
      f.idleCpuPercent = cpuPercent(stat, 6000);
      assertThat(Http.get(httpPort, "/status").code()).as("status with 500 idle connections open").isEqualTo(200);
    } finally {
      for (Socket s : idle) {
        s.close();
      }
    }
  }

  private static double cpuPercent(Path stat, long millis) throws Exception {
    long t0 = ticks(stat);
    long w0 = System.nanoTime();
    Thread.sleep(millis);
    long t1 = ticks(stat);
    double seconds = (System.nanoTime() - w0) / 1e9;
    return 100.0 * (t1 - t0) / 100.0 / seconds; // clock ticks are 1/100 s on Linux
  }

  private static long ticks(Path stat) throws Exception {
    String s = Files.readString(stat);
    String[] fields = s.substring(s.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
  }
}
