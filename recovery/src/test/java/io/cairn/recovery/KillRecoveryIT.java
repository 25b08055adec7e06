package io.cairn.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.engine.row.Row;
import io.cairn.recovery.config.CairnConfig;
import io.cairn.recovery.config.ConfigLoader;
import io.cairn.recovery.node.Node;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import io.cairn.testkit.s3.S3ProxyServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kill -9 under operator traffic. The node runs {@code cairn run} in a child JVM over the load
 * generator, a Kafka topic and a Postgres table (CDC), with upsert, join and aggregate views and a
 * snapshot every second on a real S3 server. While it ingests (Kafka records and Postgres changes
 * keep arriving), other threads poll {@code /status} and {@code /metrics} every ~50 ms (and check
 * that no thread is deadlocked), run SELECTs, create and drop a view, and request snapshots. The
 * node is killed at random moments, at named crash points (during a batch upload, between upload
 * and manifest commit, while reading during recovery, while catching up), while its Kafka source
 * is RESTARTING (the broker down), after a broker restart and after a Postgres restart (each with
 * a snapshot requested during the outage), and once a second node starts on the same store mid-run (an
 * overlapping deploy): it takes the store over and the first node, fenced, exits with code 5.
 *
 * <p>Every round that recovers checks, before any new traffic, that the Kafka and Postgres views
 * equal the oracle; at the end a node recovers in this JVM from a snapshot (not a full replay) and
 * every view, the generator's included, must equal the oracle: no update lost, none counted twice.
 * The test also asserts that each named crash point was hit and each special round happened.
 *
 * <p>Rounds: {@code -Dcairn.kill.rounds=N} (default 20, at least 14; the {@code kill-soak} profile runs hundreds).
 */
class KillRecoveryIT {
  private static final Logger LOG = LoggerFactory.getLogger(KillRecoveryIT.class);
  private static final String[] CRASH_POINTS = {
    "store.put:1", "store.commit:1", "store.get:3", "recovery.tick:1", "store.put:5", "store.commit:2"
  };
  private static final int BROKER_RESTART_ROUND = 4;
  private static final int PG_RESTART_ROUND = 7;
  private static final int KILL_WHILE_RESTARTING_ROUND = 10;
  private static final int SECOND_NODE_ROUND = 13;

  @Test
  void viewsEqualTheOracleAfterRepeatedKillsUnderTraffic(@TempDir Path dir) throws Exception {
    int rounds = Math.max(14, Integer.getInteger("cairn.kill.rounds", 20));
    long seed = Long.getLong("cairn.kill.seed", System.nanoTime());
    LOG.info("Kill test: {} rounds, seed {}", rounds, seed);
    Random random = new Random(seed);
    S3ProxyServer s3 = S3ProxyServer.shared();
    String bucket = s3.createBucket();
    PostgresServer pg = PostgresServer.start();
    try (KafkaBroker kafka = KafkaBroker.start()) {
      Scenario scenario = new Scenario(kafka, pg, 120_000, seed);
      scenario.produce(2000);
      Map<String, String> props =
          Map.of("s3.access-key-id", s3.accessKeyId(), "s3.secret-access-key", s3.secretAccessKey(), "s3.region", s3.region());
      int port = Http.freePort();
      Path config = scenario.writeConfig(dir, s3.uri(bucket, "kill"), props, "* * * * * ?", port);

      List<String> outcomes = new ArrayList<>();
      Set<String> crashPointsHit = new LinkedHashSet<>();
      Set<String> specialRounds = new LinkedHashSet<>();
      int checkedRounds = 0;
      for (int round = 0; round < rounds; round++) {
        boolean special = round == BROKER_RESTART_ROUND || round == PG_RESTART_ROUND || round == KILL_WHILE_RESTARTING_ROUND
            || round == SECOND_NODE_ROUND;
        String crashAt = !special && round % 3 == 2 ? CRASH_POINTS[(round / 3) % CRASH_POINTS.length] : null;
        Path log = dir.resolve("node-" + round + ".log");
        Process p = startNode(config, crashAt, log, pg.password());
        try {
          if (crashAt != null) {
            // traffic (snapshots above all) until the crash point halts the node
            try (Traffic t = new Traffic(port, scenario, random.nextLong())) {
              boolean exited = p.waitFor(40, TimeUnit.SECONDS);
              t.stop();
              if (exited && p.exitValue() == 137 && Files.readString(log).contains("CRASH " + crashAt)) {
                crashPointsHit.add(crashAt);
                outcomes.add("round " + round + ": crash point " + crashAt + " hit");
              } else {
                outcomes.add("round " + round + ": crash point " + crashAt + " NOT reached (killed after 40 s)");
              }
              t.assertHealthy(round);
            }
            continue;
          }
          awaitServing(p, port, log);
          checkAgainstOracle(port, scenario, round);
          checkedRounds++;
          try (Traffic t = new Traffic(port, scenario, random.nextLong())) {
            if (round == BROKER_RESTART_ROUND) {
              Thread.sleep(1000);
              Thread r = new Thread(() -> kafka.restart(Duration.ofSeconds(5)));
              r.start();
              Thread.sleep(2000);
              Http.Response snap = Http.post(port, "/snapshot", "");
              assertThat(snap.code()).as("snapshot while the broker is down: %s", snap.body()).isEqualTo(200);
              r.join(120_000);
              Thread.sleep(1500 + random.nextInt(1500));
              specialRounds.add("broker restart mid-ingest, snapshot during the outage");
            } else if (round == PG_RESTART_ROUND) {
              Thread.sleep(1000);
              Thread r = new Thread(() -> pg.restart(Duration.ofSeconds(3)));
              r.start();
              Thread.sleep(1500);
              Http.Response snap = Http.post(port, "/snapshot", "");
              assertThat(snap.code()).as("snapshot while Postgres is down: %s", snap.body()).isEqualTo(200);
              r.join(120_000);
              Thread.sleep(1500 + random.nextInt(1500));
              specialRounds.add("Postgres restart mid-ingest, snapshot during the outage");
            } else if (round == KILL_WHILE_RESTARTING_ROUND) {
              Thread r = new Thread(() -> kafka.restart(Duration.ofSeconds(8)));
              r.start();
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
              String state = "";
              while (System.nanoTime() < deadline && !state.equals("RESTARTING") && !state.equals("FAILED")) {
                state = Http.get(port, "/status").json().at("/sources/orders/state").asText();
                Thread.sleep(50);
              }
              p.destroyForcibly(); // kill -9 while the source is RESTARTING
              t.stop();
              r.join(120_000);
              assertThat(state).as("the Kafka source was seen RESTARTING before the kill").isIn("RESTARTING", "FAILED");
              specialRounds.add("killed while a source was " + state);
            } else if (round == SECOND_NODE_ROUND) {
              // an overlapping deploy: a second node on the same store takes it over; the first is fenced and exits
              Thread.sleep(1000);
              int port2 = Http.freePort();
              Path config2 = dir.resolve("cairn-2.yaml");
              Files.writeString(config2, Files.readString(config).replace("port: " + port, "port: " + port2));
              Path log2 = dir.resolve("node-" + round + "-second.log");
              Process second = startNode(config2, null, log2, pg.password());
              try {
                awaitServing(second, port2, log2);
                assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the first node exits once fenced: %s", tail(log)).isTrue();
                assertThat(p.exitValue()).as("exit code of the fenced node").isEqualTo(5);
                assertThat(Files.readString(log)).contains("Fenced");
                t.quiesce(); // no change may land after the oracle is read
                checkAgainstOracle(port2, scenario, round);
                Http.Response snap = Http.post(port2, "/snapshot", "");
                assertThat(snap.code()).as("the new owner snapshots: %s", snap.body()).isEqualTo(200);
                Thread.sleep(500 + random.nextInt(1500));
              } finally {
                second.destroyForcibly(); // kill -9 the new owner too
                second.waitFor(10, TimeUnit.SECONDS);
              }
              specialRounds.add("a second node took the store mid-run; the first was fenced (exit 5)");
            } else {
              Thread.sleep(800 + random.nextInt(3500));
            }
            p.destroyForcibly(); // SIGKILL
            t.stop();
            t.assertHealthy(round);
          }
          outcomes.add("round " + round + ": checked, then killed under traffic" + (special ? " (" + specialRounds.toArray()[specialRounds.size() - 1] + ")" : ""));
        } finally {
          p.destroyForcibly();
          p.waitFor(10, TimeUnit.SECONDS);
        }
        scenario.produce(300 + random.nextInt(700));
      }
      LOG.info("Kill rounds:\n  {}", String.join("\n  ", outcomes));
      assertThat(crashPointsHit).as("named crash points hit").containsExactlyInAnyOrderElementsOf(
          java.util.Arrays.stream(CRASH_POINTS).limit(Math.min(CRASH_POINTS.length, crashRounds(rounds))).toList());
      assertThat(specialRounds).hasSize(4);
      assertThat(checkedRounds).isGreaterThanOrEqualTo(rounds / 2);

      CairnConfig cfg = ConfigLoader.load(config, Map.of());
      Node.Options opts = Node.Options.defaults().withCatchUpTimeout(Duration.ofMinutes(3)).withSecrets(ref -> pg.password());
      try (Node node = Node.recover(cfg, opts)) {
        LOG.info("Final recovery:\n{}", node.report().toText());
        assertThat(node.report().fullReplay()).as("the final recovery loaded a snapshot").isFalse();
        assertThat(node.report().rowsLoaded()).isPositive();
        assertThat(node.report().caughtUp()).as("caught up").isTrue();
        assertThat(node.report().healthy()).as("every dataflow RUNNING: %s", node.report().unhealthy()).isTrue();
        var engine = node.engine();
        // the generator is rate-limited: "caught up" means nothing was left at its last poll; run it to its limit
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (engine.offsets().get("gen").getLong("offset", 0) < scenario.genLimit && System.nanoTime() < deadline) {
          engine.tick();
        }
        assertThat(engine.offsets().get("gen").getLong("offset", 0)).isEqualTo(scenario.genLimit);
        assertThat(engine.peek("by_category")).as("by_category").containsExactlyElementsOf(scenario.expectedByCategory());
        assertThat(engine.peek("by_customer")).as("by_customer").containsExactlyElementsOf(scenario.expectedByCustomer());
        assertThat(engine.peek("joined")).as("joined").containsExactlyElementsOf(scenario.expectedJoined());
        long pgDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!engine.peek("by_region").equals(scenario.expectedByRegion()) && System.nanoTime() < pgDeadline) {
          engine.tick();
        }
        assertThat(engine.peek("by_region")).as("by_region").containsExactlyElementsOf(scenario.expectedByRegion());
      }
    } finally {
      pg.close();
    }
  }

  private static int crashRounds(int rounds) {
    int n = 0;
    for (int round = 0; round < rounds; round++) {
      boolean special = round == BROKER_RESTART_ROUND || round == PG_RESTART_ROUND || round == KILL_WHILE_RESTARTING_ROUND
            || round == SECOND_NODE_ROUND;
      if (!special && round % 3 == 2) {
        n++;
      }
    }
    return n;
  }

  /** Waits until the node answers /status as SERVING (recovery done). */
  private static void awaitServing(Process p, int port, Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new AssertionError("node exited early (code " + p.exitValue() + "): " + tail(log));
      }
      try {
        if (Http.get(port, "/status").json().get("state").asText().equals("SERVING")) {
          return;
        }
      } catch (RuntimeException notYet) {
        // not listening yet
      }
      Thread.sleep(100);
    }
    throw new AssertionError("node did not serve within 120 s: " + tail(log));
  }

  /** After recovery and before new input: the Kafka and Postgres views equal the oracle once the sources caught up. */
  private static void checkAgainstOracle(int port, Scenario scenario, int round) throws Exception {
    List<Row> customers = scenario.expectedByCustomer();
    List<Row> regions = scenario.expectedByRegion();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    List<Row> gotCustomers = List.of();
    List<Row> gotRegions = List.of();
    while (System.nanoTime() < deadline) {
      gotCustomers = select(port, "SELECT * FROM by_customer");
      gotRegions = select(port, "SELECT * FROM by_region");
      if (gotCustomers.equals(customers) && gotRegions.equals(regions)) {
        return;
      }
      Thread.sleep(200);
    }
    assertThat(gotCustomers).as("round %d: by_customer after recovery", round).containsExactlyElementsOf(customers);
    assertThat(gotRegions).as("round %d: by_region after recovery", round).containsExactlyElementsOf(regions);
  }

  /** Runs a SELECT over HTTP and parses the text table (BIGINT and TEXT columns), sorted. */
  static List<Row> select(int port, String sql) {
    Http.Response r = Http.post(port, "/sql", sql);
    assertThat(r.code()).as("%s: %s", sql, r.body()).isEqualTo(200);
    List<Row> rows = new ArrayList<>();
    String[] lines = r.body().split("\n");
    for (int i = 2; i < lines.length; i++) {
      if (!lines[i].contains("|")) {
        continue;
      }
      String[] cells = lines[i].split("\\|");
      Object[] v = new Object[cells.length];
      for (int c = 0; c < cells.length; c++) {
        String s = cells[c].trim();
        v[c] = s.matches("-?\\d+") ? (Object) Long.parseLong(s) : s;
      }
      rows.add(Row.of(v));
    }
    rows.sort(null);
    return rows;
  }

  /**
   * Operator traffic on a node: status and metrics polls every ~50 ms (asserting no deadlocked
   * thread), SELECTs, a view created and dropped, snapshots requested, Kafka records and Postgres
   * changes arriving. Errors are counted only while the node is meant to be up.
   */
  static final class Traffic implements AutoCloseable {
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Map<String, AtomicInteger> ok = new ConcurrentHashMap<>();
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger deadlocked = new AtomicInteger();

    Traffic(int port, Scenario scenario, long seed) {
      Random random = new Random(seed);
      String view = "tmp_" + Long.toHexString(seed & 0xffffff);
      loop("status", () -> {
        JsonNode s = Http.get(port, "/status").json();
        if (s.path("deadlockedThreads").asInt() != 0) {
          deadlocked.incrementAndGet();
        }
        sleep(50);
      });
      loop("metrics", () -> {
        require(Http.get(port, "/metrics"));
        sleep(50);
      });
      loop("select", () -> {
        require(Http.post(port, "/sql", "SELECT * FROM by_customer"));
        require(Http.post(port, "/sql", "SELECT * FROM joined WHERE category = 3"));
        sleep(100);
      });
      loop("ddl", () -> {
        require(Http.post(port, "/sql", "CREATE MATERIALIZED VIEW IF NOT EXISTS " + view + " AS SELECT id, amount FROM gen WHERE amount > 900"));
        sleep(300);
        require(Http.post(port, "/sql", "DROP VIEW IF EXISTS " + view));
        sleep(300);
      });
      loop("snapshot", () -> {
        require(Http.post(port, "/snapshot", ""));
        sleep(700 + random.nextInt(600));
      });
      loop("produce", () -> {
        scenario.produce(50);
        sleep(100);
      });
      loop("pg", () -> {
        scenario.changeCustomers(5);
        sleep(150);
      });
    }

    private static void require(Http.Response r) {
      if (r.code() != 200) {
        throw new IllegalStateException("HTTP " + r.code() + ": " + r.body());
      }
    }

    private void loop(String name, Runnable body) {
      AtomicInteger c = ok.computeIfAbsent(name, k -> new AtomicInteger());
      pool.submit(() -> {
        while (!stop.get()) {
          try {
            body.run();
            c.incrementAndGet();
          } catch (RuntimeException e) {
            if (!stop.get()) {
              failures.add(name + ": " + e.getMessage());
            }
            sleep(100);
          }
        }
      });
    }

    void stop() {
      stop.set(true);
    }

    /** Stops the loops and waits until every step in flight has finished (Kafka sends and Postgres commits included). */
    void quiesce() {
      close();
    }

    /**
     * No deadlocked thread was ever reported. HTTP failures can be the kill itself (the node dies
     * between two checks of the stop flag) or the database/broker restart; they are logged, and
     * the views' equality with the oracle is what decides.
     */
    void assertHealthy(int round) {
      assertThat(deadlocked.get()).as("round %d: polls that saw deadlocked threads", round).isZero();
      LOG.info("Round {} traffic: {}{}", round, ok, failures.isEmpty() ? "" : ", failures: " + failures.subList(0, Math.min(5, failures.size())));
    }

    /** Stops the loops and waits for each to finish its step: a producer interrupted mid-send would leave the oracle behind. */
    @Override
    public void close() {
      stop.set(true);
      if (pool.isTerminated()) {
        return;
      }
      pool.shutdown();
      try {
        if (!pool.awaitTermination(60, TimeUnit.SECONDS)) {
          pool.shutdownNow();
          throw new AssertionError("traffic did not stop within 60 s");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static void sleep(long ms) {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted");
      }
    }
  }

  static Process startNode(Path config, String crashAt, Path log, String pgPassword) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx512m");
    cmd.add("-XX:TieredStopAtLevel=1");
    if (crashAt != null) {
      cmd.add("-Dcairn.crash-at=" + crashAt);
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("io.cairn.recovery.cli.CairnCommand");
    cmd.add("run");
    cmd.add("--config");
    cmd.add(config.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("PGPASSWORD", pgPassword);
    pb.environment().put("CAIRN_PGWIRE_PORT", "0"); // two nodes may run at once: not both on 6875
    return pb.start();
  }

  static String tail(Path log) throws Exception {
    List<String> lines = Files.readAllLines(log);
    return String.join(File.separator.equals("/") ? "\n" : "\r\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }
}
