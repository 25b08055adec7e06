package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.engine.row.Row;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import io.cairn.testkit.s3.S3ProxyServer;
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
 * <p>Every round that recovers waits until the node answers {@code GET /health/ready} (or fails
 * with its last answer and log) and checks, before any new traffic, that the Kafka and Postgres
 * views equal the oracle. The rounds whose crash point halts the node while it recovers ({@code
 * store.get:3}, {@code recovery.tick:1}) never get ready, so they are the only ones not checked; the
 * next round checks what they left. The rounds whose crash point is an upload or a commit run
 * with a daily schedule, so that their first upload is a snapshot the traffic requests after the
 * check, not one the per-second schedule starts during it. At the end a node recovers in this JVM
 * from a snapshot (not a full replay) and every view, the generator's included, must equal the
 * oracle: no update lost, none counted twice. The test also asserts that each named crash point was
 * hit and each special round happened.
 *
 * <p>A traffic request that fails outside a window fails the test, each listed with its round: a
 * kill window runs from a kill (or a crash point's halt, or the takeover by a second node) until
 * the next node answers {@code /health/ready}; a broker or Postgres restart excuses only the loop
 * that writes to it.
 *
 * <p>Rounds: {@code -Dcairn.kill.rounds=N} (default and least 14, what the default build's 15 minutes
 * allow; 18 has every named crash point and special round once; the {@code kill-soak} profile runs
 * hundreds). The test's time limit grows with the rounds: {@link #ROUND_BUDGET} each plus
 * {@link #SETUP_AND_FINAL_BUDGET} (14 rounds measured 389 s in all, 10-58 s a round).
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
  /** Crash points that halt the node while it recovers: it never gets ready, so its round cannot be checked. */
  private static final Set<String> RECOVERY_CRASH_POINTS = Set.of("store.get:3", "recovery.tick:1");
  /** The schedule of the upload crash rounds' node: daily, so only the snapshots the traffic requests upload. */
  private static final String DAILY_CRON = "0 0 0 * * ?";
  /**
   * A halted node's sockets close a moment before its exit is seen ({@link Process#onExit}): a
   * crash point's kill window opens this much before the exit was seen.
   */
  private static final long CRASH_SEEN_LAG_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** How long a node may take from its start to {@code /health/ready} (a whole round measured at most 58 s). */
  private static final Duration READY_WITHIN = Duration.ofSeconds(120);
  /** How long a round waits for its crash point to halt the node before it kills it. */
  private static final Duration CRASH_POINT_WAIT = Duration.ofSeconds(40);
  /** The time limit per round: about twice the measured average (28 s, setup and final recovery included), so a hang fails by name. */
  static final Duration ROUND_BUDGET = Duration.ofSeconds(60);
  /** The time limit for the servers' start and the final recovery (measured under a minute). */
  static final Duration SETUP_AND_FINAL_BUDGET = Duration.ofMinutes(5);

  @Test
  void viewsEqualTheOracleAfterRepeatedKillsUnderTraffic(@TempDir Path dir) {
    int rounds = Math.max(14, Integer.getInteger("cairn.kill.rounds", 14));
    // the limit depends on -Dcairn.kill.rounds, so it is not a constant @Timeout
    Duration limit = SETUP_AND_FINAL_BUDGET.plus(ROUND_BUDGET.multipliedBy(rounds));
    assertTimeoutPreemptively(limit, () -> run(dir, rounds),
        () -> "KillRecoveryIT did not finish " + rounds + " rounds within " + limit.toMinutes() + " min");
  }

  private void run(Path dir, int rounds) throws Exception {
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

      // crash rounds at an upload point run without the per-second schedule (see the class javadoc)
      Path uploadCrashConfig = dir.resolve("cairn-upload-crash.yaml");
      Files.writeString(uploadCrashConfig, Files.readString(config).replace("cron: \"* * * * * ?\"", "cron: \"" + DAILY_CRON + "\""));
      assertThat(Files.readString(uploadCrashConfig)).as("upload-crash config").contains(DAILY_CRON);

      List<String> outcomes = new ArrayList<>();
      List<String> trafficFailures = new ArrayList<>();
      Set<String> crashPointsHit = new LinkedHashSet<>();
      Set<String> specialRounds = new LinkedHashSet<>();
      int checkedRounds = 0;
      for (int round = 0; round < rounds; round++) {
        boolean special = isSpecial(round);
        String crashAt = crashPoint(round);
        Path log = dir.resolve("node-" + round + ".log");
        if (crashAt != null && RECOVERY_CRASH_POINTS.contains(crashAt)) {
          // halts while recovering: never ready, so by design not checked; traffic meets a node that is starting
          ChildNode p = startNode(config, crashAt, log, pg.password());
          try (Traffic t = new Traffic(port, scenario, random.nextLong(), false)) {
            p.onExit().thenRun(() -> t.killedAt(System.nanoTime() - CRASH_SEEN_LAG_NANOS, "crash point " + crashAt));
            boolean exited = p.waitFor(CRASH_POINT_WAIT);
            t.stop();
            recordCrash(p, exited, crashAt, log, round, crashPointsHit, outcomes, "while recovering, not checked by design");
            trafficFailures.addAll(t.failuresOutsideWindows(round));
          } finally {
            p.killAndWait();
          }
          scenario.produce(300 + random.nextInt(700));
          continue;
        }
        ChildNode p = startNode(crashAt != null ? uploadCrashConfig : config, crashAt, log, pg.password());
        try {
          p.awaitReady(port, READY_WITHIN, "round " + round);
          checkAgainstOracle(port, scenario, round);
          checkedRounds++;
          if (crashAt != null) {
            // traffic (snapshots above all) until the crash point halts the node
            try (Traffic t = new Traffic(port, scenario, random.nextLong(), true)) {
              p.onExit().thenRun(() -> t.killedAt(System.nanoTime() - CRASH_SEEN_LAG_NANOS, "crash point " + crashAt));
              boolean exited = p.waitFor(CRASH_POINT_WAIT);
              if (!exited) {
                t.killedAt(System.nanoTime(), "kill -9 after 40 s without the crash point");
              }
              t.stop();
              recordCrash(p, exited, crashAt, log, round, crashPointsHit, outcomes, "checked, then halted at the crash point under traffic");
              t.assertNoDeadlock(round);
              trafficFailures.addAll(t.failuresOutsideWindows(round));
            }
            continue;
          }
          try (Traffic t = new Traffic(port, scenario, random.nextLong(), true)) {
            if (round == BROKER_RESTART_ROUND) {
              Thread.sleep(1000);
              long outage = System.nanoTime();
              Thread r = new Thread(() -> kafka.restart(Duration.ofSeconds(5)));
              r.start();
              Thread.sleep(2000);
              Http.Response snap = Http.post(port, "/snapshot", "");
              assertThat(snap.code()).as("snapshot while the broker is down: %s", snap.body()).isEqualTo(200);
              r.join(120_000);
              t.outage(outage, System.nanoTime(), "broker restart", "produce");
              Thread.sleep(1500 + random.nextInt(1500));
              specialRounds.add("broker restart mid-ingest, snapshot during the outage");
            } else if (round == PG_RESTART_ROUND) {
              Thread.sleep(1000);
              long outage = System.nanoTime();
              Thread r = new Thread(() -> pg.restart(Duration.ofSeconds(3)));
              r.start();
              Thread.sleep(1500);
              Http.Response snap = Http.post(port, "/snapshot", "");
              assertThat(snap.code()).as("snapshot while Postgres is down: %s", snap.body()).isEqualTo(200);
              r.join(120_000);
              t.outage(outage, System.nanoTime(), "Postgres restart", "pg");
              Thread.sleep(1500 + random.nextInt(1500));
              specialRounds.add("Postgres restart mid-ingest, snapshot during the outage");
            } else if (round == KILL_WHILE_RESTARTING_ROUND) {
              long outage = System.nanoTime();
              Thread r = new Thread(() -> kafka.restart(Duration.ofSeconds(8)));
              r.start();
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
              String state = "";
              while (System.nanoTime() < deadline && !state.equals("RESTARTING") && !state.equals("FAILED")) {
                state = Http.get(port, "/status").json().at("/sources/orders/state").asText();
                Thread.sleep(50);
              }
              t.killedAt(System.nanoTime(), "kill -9 while the source was " + state);
              p.kill(); // kill -9 while the source is RESTARTING
              t.stop();
              r.join(120_000);
              t.outage(outage, System.nanoTime(), "broker restart", "produce");
              assertThat(state).as("the Kafka source was seen RESTARTING before the kill").isIn("RESTARTING", "FAILED");
              specialRounds.add("killed while a source was " + state);
            } else if (round == SECOND_NODE_ROUND) {
              // an overlapping deploy: a second node on the same store takes it over; the first is fenced and exits
              Thread.sleep(1000);
              int port2 = Http.freePort();
              Path config2 = dir.resolve("cairn-2.yaml");
              Files.writeString(config2, Files.readString(config).replace("port: " + port, "port: " + port2));
              Path log2 = dir.resolve("node-" + round + "-second.log");
              t.killedAt(System.nanoTime(), "a second node takes the store: the first is fenced");
              ChildNode second = startNode(config2, null, log2, pg.password());
              try {
                second.awaitReady(port2, READY_WITHIN, "round " + round);
                assertThat(p.waitFor(Duration.ofSeconds(30))).as("the first node exits once fenced: %s", p.tail()).isTrue();
                assertThat(p.exitValue()).as("exit code of the fenced node").isEqualTo(5);
                assertThat(Files.readString(log)).contains("Fenced");
                t.quiesce(); // no change may land after the oracle is read
                checkAgainstOracle(port2, scenario, round);
                Http.Response snap = Http.post(port2, "/snapshot", "");
                assertThat(snap.code()).as("the new owner snapshots: %s", snap.body()).isEqualTo(200);
                Thread.sleep(500 + random.nextInt(1500));
              } finally {
                second.killAndWait(); // kill -9 the new owner too
              }
              specialRounds.add("a second node took the store mid-run; the first was fenced (exit 5)");
            } else {
              Thread.sleep(800 + random.nextInt(3500));
            }
            t.killedAt(System.nanoTime(), "kill -9");
            p.kill(); // SIGKILL
            t.stop();
            t.assertNoDeadlock(round);
            trafficFailures.addAll(t.failuresOutsideWindows(round));
          }
          outcomes.add("round " + round + ": checked, then killed under traffic" + (special ? " (" + specialRounds.toArray()[specialRounds.size() - 1] + ")" : ""));
        } finally {
          p.killAndWait();
        }
        scenario.produce(300 + random.nextInt(700));
      }
      List<Integer> notCheckable = uncheckableRounds(rounds);
      LOG.info("Kill rounds: {} rounds, {} checked against the oracle, {} halted while recovering by design {}, {} traffic failures "
          + "outside kill windows:\n  {}", rounds, checkedRounds, notCheckable.size(), notCheckable, trafficFailures.size(),
          String.join("\n  ", outcomes));
      assertThat(trafficFailures).as("traffic failures outside kill windows (from a kill until the next node answers /health/ready)")
          .isEmpty();
      assertThat(crashPointsHit).as("named crash points hit").containsExactlyInAnyOrderElementsOf(
          java.util.Arrays.stream(CRASH_POINTS).limit(Math.min(CRASH_POINTS.length, crashRounds(rounds))).toList());
      assertThat(specialRounds).hasSize(4);
      assertThat(checkedRounds).as("rounds checked against the oracle: all but those halted while recovering (%s, at %s)",
          notCheckable, RECOVERY_CRASH_POINTS).isEqualTo(rounds - notCheckable.size());

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
        assertThat(engine.peek("top_gen")).as("top_gen").containsExactlyElementsOf(scenario.expectedTopGen());
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

  private static boolean isSpecial(int round) {
    return round == BROKER_RESTART_ROUND || round == PG_RESTART_ROUND || round == KILL_WHILE_RESTARTING_ROUND
        || round == SECOND_NODE_ROUND;
  }

  /** The crash point of a round, or null: every third round that is not special. */
  private static String crashPoint(int round) {
    return !isSpecial(round) && round % 3 == 2 ? CRASH_POINTS[(round / 3) % CRASH_POINTS.length] : null;
  }

  private static int crashRounds(int rounds) {
    int n = 0;
    for (int round = 0; round < rounds; round++) {
      if (crashPoint(round) != null) {
        n++;
      }
    }
    return n;
  }

  /** The rounds whose node halts at a crash point while recovering: never ready, so never checked. */
  private static List<Integer> uncheckableRounds(int rounds) {
    List<Integer> out = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      if (crashPoint(round) != null && RECOVERY_CRASH_POINTS.contains(crashPoint(round))) {
        out.add(round);
      }
    }
    return out;
  }

  private static void recordCrash(ChildNode p, boolean exited, String crashAt, Path log, int round, Set<String> hit, List<String> outcomes,
      String what) throws Exception {
    if (exited && p.exitValue() == 137 && Files.readString(log).contains("CRASH " + crashAt)) {
      hit.add(crashAt);
      outcomes.add("round " + round + ": crash point " + crashAt + " hit (" + what + ")");
    } else {
      outcomes.add("round " + round + ": crash point " + crashAt + " NOT reached (" + (exited ? "exit " + p.exitValue() : "killed after 40 s")
          + ")");
    }
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
   * changes arriving. Every failure is kept with its time; a failure counts unless it falls in a
   * window: a kill window (from the kill until the next node answers {@code /health/ready}: the
   * traffic of a round ends at its kill, and a node that is still starting is in the window of the
   * previous kill) or an outage of the broker or Postgres, which excuses only the loop that writes
   * to it.
   */
  static final class Traffic implements AutoCloseable {
    /** The node loops: each is a request to the node; a kill window excuses them all. */
    private static final Set<String> NODE_LOOPS = Set.of("status", "metrics", "select", "ddl", "snapshot");
    private final ExecutorService pool = Executors.newCachedThreadPool();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Map<String, AtomicInteger> ok = new ConcurrentHashMap<>();
    private final List<Failure> failures = Collections.synchronizedList(new ArrayList<>());
    private final List<Window> windows = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger deadlocked = new AtomicInteger();

    /** A request of {@code loop} sent at {@code sentNanos} that failed at {@code failedNanos}. */
    private record Failure(String loop, long sentNanos, long failedNanos, String message) {}

    private record Window(long fromNanos, long toNanos, String what, Set<String> loops) {
      /**
       * The request was under way while the window was open: sent before it closed and failed
       * after it opened. (Its failure's own time alone is not enough: a request refused while
       * Postgres was starting could be recorded a moment after the restart's window had closed.)
       */
      boolean covers(Failure f) {
        return f.failedNanos() >= fromNanos && f.sentNanos() <= toNanos && loops.contains(f.loop());
      }
    }

    /**
     * Starts the loops. {@code ready}: the node already answered {@code /health/ready}; if not, the
     * previous kill's window stays open for this whole traffic (a node that never gets ready).
     */
    Traffic(int port, Scenario scenario, long seed, boolean ready) {
      if (!ready) {
        windows.add(new Window(Long.MIN_VALUE, Long.MAX_VALUE, "node not ready yet", NODE_LOOPS));
      }
      Random random = new Random(seed);
      String view = "tmp_" + Long.toHexString(seed & 0xffffff);
      loop("status", () -> {
        Http.Response r = require(Http.get(port, "/status"));
        if (r.json().path("deadlockedThreads").asInt() != 0) {
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

    private static Http.Response require(Http.Response r) {
      if (r.code() != 200) {
        throw new IllegalStateException("HTTP " + r.code() + ": " + r.body().strip());
      }
      return r;
    }

    private void loop(String name, Runnable body) {
      AtomicInteger c = ok.computeIfAbsent(name, k -> new AtomicInteger());
      pool.submit(() -> {
        while (!stop.get()) {
          long sent = System.nanoTime();
          try {
            body.run();
            c.incrementAndGet();
          } catch (RuntimeException e) {
            failures.add(new Failure(name, sent, System.nanoTime(), e.toString()));
            sleep(100);
          }
        }
      });
    }

    /** The node was killed (or halted, or fenced) at {@code atNanos}: its kill window opens. */
    void killedAt(long atNanos, String what) {
      windows.add(new Window(atNanos, Long.MAX_VALUE, what, NODE_LOOPS));
    }

    /** The broker or Postgres was down from {@code fromNanos} to {@code toNanos}: the loop writing to it may fail. */
    void outage(long fromNanos, long toNanos, String what, String loop) {
      windows.add(new Window(fromNanos, toNanos, what, Set.of(loop)));
    }

    void stop() {
      stop.set(true);
    }

    /** Stops the loops and waits until every step in flight has finished (Kafka sends and Postgres commits included). */
    void quiesce() {
      close();
    }

    void assertNoDeadlock(int round) {
      assertThat(deadlocked.get()).as("round %d: polls that saw deadlocked threads", round).isZero();
    }

    /**
     * Stops the loops, logs the round's counts and every failure (excused or not), and returns the
     * failures that no window covers, each named with its round, loop and the time since the
     * traffic's first window opened.
     */
    List<String> failuresOutsideWindows(int round) {
      close();
      List<String> outside = new ArrayList<>();
      int excused = 0;
      synchronized (failures) {
        for (Failure f : failures) {
          java.util.Optional<Window> w;
          synchronized (windows) {
            w = windows.stream().filter(x -> x.covers(f)).findFirst();
          }
          if (w.isPresent()) {
            excused++;
          } else {
            outside.add("round " + round + " " + f.loop() + ": " + f.message());
          }
        }
      }
      List<String> windowNames;
      synchronized (windows) {
        windowNames = windows.stream().map(Window::what).toList();
      }
      LOG.info("Round {} traffic: {}; failures in windows {}: {}{}", round, ok, windowNames, excused,
          outside.isEmpty() ? "" : "; OUTSIDE windows: " + outside);
      return outside;
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

  /**
   * {@code cairn run --config <config>} in a child JVM with 512 MB of heap and the C1 compiler
   * only, halting at {@code crashAt} if not null, on an ephemeral pgwire port (two nodes may run at
   * once: not both on 6875).
   */
  static ChildNode startNode(Path config, String crashAt, Path log, String pgPassword) throws Exception {
    ChildNode.Builder node = ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx512m", "-XX:TieredStopAtLevel=1");
    if (crashAt != null) {
      node.jvmOptions("-Dcairn.crash-at=" + crashAt);
    }
    return node.env("PGPASSWORD", pgPassword).env("CAIRN_PGWIRE_PORT", "0").start(log);
  }
}
