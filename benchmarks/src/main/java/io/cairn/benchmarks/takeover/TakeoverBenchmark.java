package io.cairn.benchmarks.takeover;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.testkit.kafka.KafkaBroker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How long a group of cairn nodes takes to serve fresh answers again after its owner is killed
 * with -9, against a cold restart of the same store. Run it with {@code ./cairn bench takeover
 * --rows 1000000}; it starts a Kafka broker (child JVM, for the group) and {@code cairn run} nodes
 * (child JVMs) on a local store, all on 127.0.0.1.
 *
 * <p>Per size, with one deterministic load generator ({@code keys = 2·rows}, {@code limit =
 * 1.6·rows}, no rate: the table ends with about {@code rows} rows) and a view {@code by_cat} over it:
 *
 * <ol>
 *   <li>Owner A starts alone and reads the whole generator; its answer is checked against the
 *       oracle; then {@code POST /snapshot}. (A's schedule also takes one as soon as it serves, since
 *       none was ever taken; it fires at a date the run never reaches after that.) A serves only
 *       once caught up, so every snapshot is at the generator's end and there is nothing to catch up
 *       after it: both recoveries below load the same snapshot and read zero
 *       records, and they differ only in what the standby did in advance. (A generator with a rate
 *       could leave a tail after the snapshot, but its head restarts at every seek, so a catch-up
 *       would be paced by the rate, not by the node.)
 *   <li>Standby B starts in the group and reports STANDBY; the benchmark then gives it up to {@code
 *       --standby-wait} to prepare: B is warm if it answers a query while standing by (the wait ends
 *       there), cold if it never does (a cold standby so waits the whole time, which changes nothing
 *       of what it does). A's freshness (epoch, last closed tick, the generator's
 *       offset) is read from its status, then A is killed with -9.
 *   <li><b>Takeover</b>, from the kill, polling B every 50 ms: when B's status leaves STANDBY (the
 *       group gave it the store, after the session timeout), when it says ready, and when a query
 *       first returns the oracle's answer while B is the owner, ready or SERVING, with the generator's
 *       offset at least A's ("fresh"). Then B's {@code GET /recovery}.
 *   <li><b>Cold restart</b>: B is killed with -9; C starts at once with the same store and no
 *       group (alone in a group it would wait for the dead B's session to expire); the same moments
 *       from B's kill, plus from C's JVM start. C loads the newest snapshot: A's, unless B wrote one
 *       (the report says whether both recovered from the same snapshot). A cold restart includes
 *       the JVM's start; the takeover includes the session timeout.
 * </ol>
 *
 * <p>Every answer of every node (A, B while standing by and after, C) is compared with the oracle
 * ({@link Oracle}); since every snapshot is at the generator's end, a node has no correct answer
 * other than the final one, and any other aborts the run. The report ({@code report.md}, {@code
 * results.json}) gives the times, cold/takeover, the recovery reports' phases and the goals (at 10M
 * rows: takeover within the session timeout + 2 s, at least 5x faster than a cold restart). Every
 * child JVM and the broker are stopped at the end, also on failure.
 */
public final class TakeoverBenchmark {
  private static final Logger LOG = LoggerFactory.getLogger(TakeoverBenchmark.class);
  private static final Duration POLL = Duration.ofMillis(50);

  private final TakeoverConfig config;
  private final List<NodeProcess> running = new ArrayList<>();
  private long queriesChecked;
  /** The current size's {@link #query} and key space. */
  private String query;
  private long keys;

  public TakeoverBenchmark(TakeoverConfig config) {
    this.config = config;
  }

  /** Runs every size; stops every node and the broker before it returns or throws. */
  public List<TakeoverResult> run() throws Exception {
    Files.createDirectories(config.out());
    Thread hook = new Thread(this::stopAll, "takeover-bench-cleanup");
    Runtime.getRuntime().addShutdownHook(hook);
    List<TakeoverResult> results = new ArrayList<>();
    try (KafkaBroker kafka = KafkaBroker.startInChildJvm()) {
      for (long rows : config.rows()) {
        results.add(runOne(kafka, rows));
      }
    } finally {
      stopAll();
      Runtime.getRuntime().removeShutdownHook(hook);
    }
    return results;
  }

  private synchronized void stopAll() {
    for (NodeProcess n : running) {
      n.close();
    }
    running.clear();
  }

  private NodeProcess start(String name, Path yaml, Path dir, String heap) throws IOException {
    List<String> jvm = new ArrayList<>(config.nodeJvmOptions());
    jvm.add("-Xmx" + heap);
    NodeProcess n = NodeProcess.start(name, yaml, NodeProcess.freePort(), config.nodeClassPath(), jvm, dir);
    synchronized (this) {
      running.add(n);
    }
    return n;
  }

  private TakeoverResult runOne(KafkaBroker kafka, long rows) throws Exception {
    queriesChecked = 0;
    keys = TakeoverConfig.keysFor(rows);
    query = query(keys);
    long limit = TakeoverConfig.limitFor(rows);
    String heap = config.heapFor(rows);
    var settings = new LoadGeneratorConnector.Settings(keys, TakeoverConfig.CATEGORIES, TakeoverConfig.SEED, 10, limit, 0);
    Path dir = Files.createDirectories(config.out().resolve("run-" + rows));
    Path store = dir.resolve("store");
    deleteTree(store);
    String group = "takeover-bench-" + UUID.randomUUID();
    Path grouped = writeConfig(dir.resolve("group.yaml"), store, settings, kafka.bootstrapServers(), group);
    Path alone = writeConfig(dir.resolve("alone.yaml"), store, settings, null, null);
    LOG.info("Takeover benchmark at {} rows: keys {}, limit {}, heap {}, session timeout {} s; logs in {}", rows, keys, limit, heap,
        config.sessionTimeout().toSeconds(), dir);
    Oracle oracle = Oracle.compute(settings);
    LOG.info("Oracle: {} rows in {} categories", oracle.rows(), oracle.byCategory().size());
    Duration ingestWithin = Duration.ofSeconds(180 + limit / 5_000);
    try {
      // 1. owner A reads the whole generator, serves the oracle's answer, writes a snapshot
      NodeProcess a = start("a", grouped, dir, heap);
      long t = System.nanoTime();
      awaitCaughtUp(a, limit, ingestWithin);
      long caughtUp = millisSince(t);
      NodeProcess.Response first = a.post("/sql?format=json", query);
      if (first.code() != 200) {
        throw new IllegalStateException("Cannot query owner a: " + first.code() + " " + first.body());
      }
      requireOracle(a, query(a), oracle, "owner a, caught up");
      t = System.nanoTime();
      NodeProcess.Response snap = a.post("/snapshot", "", Duration.ofMinutes(10));
      long snapshotMillis = millisSince(t);
      if (snap.code() != 200) {
        throw new IllegalStateException("Cannot snapshot owner a: " + snap.code() + " " + snap.body());
      }
      LOG.info("a caught up in {} ms, snapshot in {} ms", caughtUp, snapshotMillis);

      // 2. standby B joins, prepares (if it is warm), A's freshness is read, A is killed
      NodeProcess b = start("b", grouped, dir, heap);
      awaitStandby(b, a);
      t = System.nanoTime();
      StandbyPrepared prepared = awaitPrepared(b, oracle);
      long preparedMillis = millisSince(t);
      LOG.info("b stands by ({}), prepared in {} ms", prepared.warm() ? "warm" : "cold", preparedMillis);
      JsonNode aStatus = a.get("/status").json();
      TakeoverResult.Freshness aFresh = new TakeoverResult.Freshness(aStatus.path("epoch").asLong(),
          aStatus.path("lastClosedTick").asLong(), offset(aStatus));
      if (aFresh.offset() != limit) {
        throw new IllegalStateException("Cannot measure: owner a is at offset " + aFresh.offset() + ", not the generator's end " + limit);
      }
      long kill = System.nanoTime();
      a.kill();
      TakeoverResult.Timeline takeover = observe(b, kill, 0, aFresh, oracle, true, config.sessionTimeout().plus(ingestWithin));
      LOG.info("Takeover: fresh {} ms after the kill (store taken {} ms, ready {} ms)", takeover.killToFreshMillis(),
          takeover.killToTookStoreMillis(), takeover.killToReadyMillis());

      // 3. cold restart of the same store: B killed, C started at once without a group
      long kill2 = System.nanoTime();
      b.kill();
      NodeProcess c = start("c", alone, dir, heap);
      long startDelay = (c.startedNanos() - kill2) / 1_000_000;
      TakeoverResult.Timeline cold = observe(c, kill2, startDelay, aFresh, oracle, false, ingestWithin);
      LOG.info("Cold restart: fresh {} ms after the kill ({} ms after the JVM start)", cold.killToFreshMillis(),
          cold.startToFreshMillis());
      c.kill();

      String snapB = takeover.recovery().path("snapshotId").asText("");
      String snapC = cold.recovery().path("snapshotId").asText("");
      boolean same = !snapB.isEmpty() && snapB.equals(snapC);
      if (!same) {
        LOG.warn("The takeover recovered from snapshot '{}', the cold restart from '{}': their amounts of work differ", snapB, snapC);
      }
      return TakeoverResult.withGoals(rows, heap, config.sessionTimeout().toMillis(), keys, limit, oracle.rows(), caughtUp,
          snapshotMillis, snap.json(), prepared.warm(), preparedMillis, prepared.lastStatus(), aFresh, takeover, cold, same,
          queriesChecked);
    } finally {
      stopAll();
      if (!config.keepStore()) {
        deleteTree(store);
      }
    }
  }

  // ------------------------------------------------------------------ configuration

  private Path writeConfig(Path file, Path store, LoadGeneratorConnector.Settings s, String bootstrap, String group) throws IOException {
    StringBuilder y = new StringBuilder();
    y.append("store:\n  uri: \"").append(store.toUri()).append("\"\n");
    // a schedule that fires only at start (no snapshot was ever taken) and then not before next year
    y.append("snapshots:\n  cron: \"0 0 0 1 1 ?\"\n");
    if (bootstrap != null) {
      y.append("group:\n  bootstrap-servers: \"").append(bootstrap).append("\"\n  name: \"").append(group)
          .append("\"\n  session-timeout: ").append(config.sessionTimeout().toMillis()).append("ms\n");
    }
    y.append("init:\n");
    y.append(String.format(Locale.ROOT, "  - \"CREATE SOURCE gen FROM LOAD GENERATOR (keys = %d, categories = %d, seed = %d,"
        + " limit = %d, rate = 0) ENVELOPE UPSERT\"\n", s.keys(), s.categories(), s.seed(), s.limit()));
    y.append("  - \"CREATE MATERIALIZED VIEW total AS SELECT COUNT(*) AS n FROM gen\"\n");
    y.append("  - \"CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category\"\n");
    Files.writeString(file, y.toString());
    return file;
  }

  // ------------------------------------------------------------------ waiting and observing

  private static void awaitCaughtUp(NodeProcess n, long limit, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      n.requireAlive("while reading the generator");
      JsonNode st = n.statusOrNull();
      if (st != null) {
        last = st;
        if (st.path("ready").asBoolean() && offset(st) >= limit) {
          return;
        }
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("Node " + n.name() + " did not read the generator's " + limit + " records within " + within.toSeconds()
        + " s; last status: " + last + "\n" + n.tail());
  }

  /** Waits until {@code b} stands by and its status shows the group of two with {@code a}'s member the owner. */
  private static void awaitStandby(NodeProcess b, NodeProcess a) throws InterruptedException {
    String owner = a.get("/status").json().path("member").asText();
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      b.requireAlive("while joining the group");
      JsonNode st = b.statusOrNull();
      if (st != null) {
        last = st;
        if (st.path("state").asText().equals("STANDBY") && st.path("members").size() == 2 && st.path("groupOwner").asText().equals(owner)) {
          return;
        }
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException("Standby b did not stand by in a group of two owned by " + owner + " within 120 s; last status: "
        + last + "\n" + b.tail());
  }

  /** Whether the standby served reads before the kill, and its last status. */
  private record StandbyPrepared(boolean warm, JsonNode lastStatus) {}

  /**
   * Gives the standby up to {@code --standby-wait} to prepare: a standby that answers a query (its
   * answer checked) is warm and the wait ends; one that never does is cold. A standby's status looks
   * the same before and while it prepares (a warm one was seen to begin loading 6 s after it joined),
   * so nothing shorter tells a cold standby from a warm one that has not begun.
   */
  private StandbyPrepared awaitPrepared(NodeProcess b, Oracle oracle) throws InterruptedException {
    long deadline = System.nanoTime() + config.standbyWait().toNanos();
    JsonNode last = NullNode.getInstance();
    while (true) {
      b.requireAlive("while standing by");
      JsonNode st = b.statusOrNull();
      if (st != null) {
        last = st;
        if (!st.path("state").asText().equals("STANDBY")) {
          throw new IllegalStateException("Standby b left STANDBY while a lives: " + st);
        }
      }
      Served s = query(b);
      if (s != null) {
        requireOracle(b, s, oracle, "standby b, before the takeover");
        return new StandbyPrepared(true, b.statusOrNull() == null ? last : b.statusOrNull());
      }
      if (System.nanoTime() > deadline) {
        return new StandbyPrepared(false, last);
      }
      Thread.sleep(200);
    }
  }

  /**
   * Polls {@code n} every 50 ms from {@code kill} until it serves a fresh answer: the oracle's,
   * with the generator's offset at least the killed owner's, the node the owner of its group if
   * {@code owner}. Every answer is checked against the oracle.
   */
  private TakeoverResult.Timeline observe(NodeProcess n, long kill, long startMillis, TakeoverResult.Freshness killed, Oracle oracle,
      boolean owner, Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    long tookStore = -1;
    long ready = -1;
    JsonNode last = null;
    while (System.nanoTime() < deadline) {
      long round = System.nanoTime();
      n.requireAlive("while recovering");
      JsonNode st = n.statusOrNull();
      long at = millisSince(kill);
      if (st != null) {
        last = st;
        String state = st.path("state").asText();
        if (tookStore < 0 && !state.equals("STANDBY")) {
          tookStore = at;
        }
        if (ready < 0 && st.path("ready").asBoolean()) {
          ready = at;
        }
      }
      Served s = query(n);
      if (s != null) {
        at = millisSince(kill);
        requireOracle(n, s, oracle, n.name() + " " + at + " ms after the kill");
        boolean isOwner = !owner || (st != null && st.path("role").asText().equals("owner"));
        boolean serving = st != null && (st.path("ready").asBoolean() || st.path("state").asText().equals("SERVING"));
        if (serving && isOwner && offset(st) >= killed.offset()) {
          JsonNode recovery = recoveryReport(n);
          return new TakeoverResult.Timeline(startMillis, tookStore, ready < 0 ? at : ready, at, st.path("epoch").asLong(), recovery);
        }
      }
      long sleep = POLL.toMillis() - millisSince(round);
      if (sleep > 0) {
        Thread.sleep(sleep);
      }
    }
    throw new IllegalStateException("Node " + n.name() + " served no fresh answer within " + within.toSeconds() + " s of the kill; last status: "
        + last + "\n" + n.tail());
  }

  private static JsonNode recoveryReport(NodeProcess n) {
    NodeProcess.Response r = n.get("/recovery");
    return r.code() == 200 ? r.json() : NullNode.getInstance();
  }

  // ------------------------------------------------------------------ answers

  /**
   * What every poll asks, in one request: the view {@code total}, the view {@code by_cat} and key
   * lookups on the source's own rows ({@link Oracle#lookupIds}). (A one-shot SELECT cannot
   * aggregate, hence the view {@code total}.)
   */
  static String query(long keys) {
    StringBuilder q = new StringBuilder("SELECT n FROM total; SELECT category, n, total FROM by_cat");
    for (long id : Oracle.lookupIds(keys)) {
      q.append("; SELECT id, category, amount FROM gen WHERE id = ").append(id);
    }
    return q.toString();
  }

  /** One answer of {@link #query}: the rows, the view by_cat, the lookups (category * 1000 + amount, -1 for no row). */
  private record Served(long rows, Map<Long, Oracle.Totals> byCategory, Map<Long, Long> lookups) {}

  /** The node's answer to {@link #query}, or null if it does not serve (any status but 200, or no answer). */
  private Served query(NodeProcess n) {
    NodeProcess.Response r;
    try {
      r = n.post("/sql?format=json", query);
    } catch (UncheckedIOException notAnswering) {
      return null;
    }
    if (r.code() != 200) {
      return null;
    }
    JsonNode results = r.json();
    long count = results.get(0).path("rows").get(0).get(0).asLong();
    Map<Long, Oracle.Totals> by = new TreeMap<>();
    results.get(1).path("rows").forEach(row -> by.put(row.get(0).asLong(), new Oracle.Totals(row.get(1).asLong(), row.get(2).asLong())));
    Map<Long, Long> lookups = new TreeMap<>();
    for (int i = 2; i < results.size(); i++) {
      JsonNode row = results.get(i).path("rows").path(0);
      long id = Oracle.lookupIds(keys).get(i - 2);
      lookups.put(id, row.isMissingNode() ? -1 : row.get(1).asLong() * 1000 + row.get(2).asLong());
    }
    return new Served(count, by, lookups);
  }

  private void requireOracle(NodeProcess n, Served s, Oracle oracle, String when) {
    queriesChecked++;
    String diff = oracle.diff(s.rows(), s.byCategory(), s.lookups());
    if (!diff.isEmpty()) {
      throw new IllegalStateException("Wrong answer from " + when + ": " + diff + "\nlog of " + n.name() + ":\n" + n.tail());
    }
  }

  /** The load generator's offset in a status ({@code sources.gen.offsets.offset}), -1 without one. */
  static long offset(JsonNode status) {
    JsonNode o = status.path("sources").path("gen").path("offsets").path("offset");
    return o.isMissingNode() ? -1 : Long.parseLong(o.asText());
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(p);
      }
    }
  }
}
