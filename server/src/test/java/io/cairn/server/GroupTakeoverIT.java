package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A group of {@code cairn run} nodes on one store (child JVMs, a real Kafka broker for the group):
 * the first member owns the store; three more stand by warm (status STANDBY, not ready): each loads
 * the owner's snapshot as it is committed and serves it — its view equals the naive oracle after the
 * records the snapshot's offsets name — and refuses DDL and snapshots. Then three takeovers: the owner
 * killed with -9 (a standby takes over after Kafka's session timeout), the new owner stopped cleanly
 * (at once: it leaves the group), and the next one paused with SIGSTOP past the session timeout (a
 * zombie: resumed, it writes no object naming its epoch and exits 5). After each, the new owner's view
 * equals the oracle over every record: nothing lost, nothing counted twice. Throughout, SELECTs sent
 * to the standbys every 100 ms (and to each while it takes over) never fail.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GroupTakeoverIT {
  private static final Logger LOG = LoggerFactory.getLogger(GroupTakeoverIT.class);
  private static final long KEYS = 2_000;
  private static final long CATEGORIES = 10;
  private static final long SEED = 11;
  private static final long LIMIT = 30_000;
  private static final int RATE = 3_000;
  private static final Duration SESSION = Duration.ofSeconds(6);

  /** The view {@code by_cat} after every record of the generator: category → {count, sum of amount}. */
  static Map<Long, long[]> oracle() {
    return oracle(LIMIT);
  }

  /** The view {@code by_cat} after the generator's first {@code records} records. */
  static Map<Long, long[]> oracle(long records) {
    var s = new LoadGeneratorConnector.Settings(KEYS, CATEGORIES, SEED, 10, LIMIT, RATE);
    Map<Long, Row> table = new HashMap<>();
    for (long i = 0; i < records; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        table.remove(r.id());
      } else {
        table.put(r.id(), r.row());
      }
    }
    Map<Long, long[]> out = new TreeMap<>();
    for (Row r : table.values()) {
      long[] a = out.computeIfAbsent(r.getLong(1), k -> new long[2]);
      a[0]++;
      a[1] += r.getLong(2);
    }
    return out;
  }

  static Map<Long, long[]> view(int port) {
    return view(port, "by_cat");
  }

  /** A view of by_cat's shape ({@code category, n, total}), read over HTTP. */
  static Map<Long, long[]> view(int port, String name) {
    Http.Response r = Http.post(port, "/sql?format=json", "SELECT category, n, total FROM " + name);
    assertThat(r.code()).as(r.body()).isEqualTo(200);
    Map<Long, long[]> out = new TreeMap<>();
    r.json().get(0).path("rows").forEach(row -> out.put(row.get(0).asLong(), new long[] {row.get(1).asLong(), row.get(2).asLong()}));
    return out;
  }

  static boolean same(Map<Long, long[]> a, Map<Long, long[]> b) {
    if (!a.keySet().equals(b.keySet())) {
      return false;
    }
    return a.keySet().stream().allMatch(k -> java.util.Arrays.equals(a.get(k), b.get(k)));
  }

  static String text(Map<Long, long[]> m) {
    StringBuilder sb = new StringBuilder();
    m.forEach((k, v) -> sb.append(k).append('=').append(v[0]).append('/').append(v[1]).append(' '));
    return sb.toString();
  }

  /** Waits until the node on {@code port} holds the whole oracle (it keeps reading the generator until its limit). */
  static void awaitOracle(int port, Map<Long, long[]> oracle, String who) throws InterruptedException {
    awaitOracle(port, "by_cat", oracle, who);
  }

  /** As {@link #awaitOracle(int, Map, String)}, for view {@code name} of by_cat's shape. */
  static void awaitOracle(int port, String name, Map<Long, long[]> oracle, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Map<Long, long[]> last = Map.of();
    String error = "";
    while (System.nanoTime() < deadline) {
      Http.Response r = Http.post(port, "/sql?format=json", "SELECT category, n, total FROM " + name);
      if (r.code() == 200) {
        last = view(port, name);
        if (same(last, oracle)) {
          return;
        }
      } else {
        error = " (last answer: " + r.code() + " " + r.body().strip() + ")"; // a view created moments ago may not be here yet
      }
      Thread.sleep(200);
    }
    assertThat(text(last)).as("%s: view %s against the oracle%s", who, name, error).isEqualTo(text(oracle));
  }

  /**
   * Waits until one of the standbys {@code standing} answers {@code /health/ready} with 200 and
   * returns it (removed from {@code standing}); every other standby must still be standing by.
   */
  private static int awaitOneReady(List<ChildNode> nodes, List<Integer> ports, List<Integer> standing, Duration within, String when)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      for (int i : standing) {
        assertThat(nodes.get(i).isAlive()).as("standby %d alive %s; log: %s", i, when, nodes.get(i).tail()).isTrue();
        try {
          if (Http.get(ports.get(i), "/health/ready").code() == 200) {
            standing.remove(Integer.valueOf(i));
            for (int other : standing) {
              assertThat(Http.get(ports.get(other), "/status").json().path("state").asText())
                  .as("only one member takes the store %s", when).isEqualTo("STANDBY");
            }
            return i;
          }
        } catch (RuntimeException notAnswering) {
          // busy starting to serve
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no standby took the store within " + within + " " + when);
  }

  /**
   * The failover soak ({@code mvn -Pfailover-soak verify -pl server}, {@code cairn.failover.rounds}
   * rounds; skipped when 0, as in the default build, where the test above runs one round of each
   * kind): three members; each round picks a way for the owner to go — kill -9, SIGTERM, or SIGSTOP
   * past the session timeout then SIGCONT (the zombie must exit 5 having written no object naming
   * its epoch) — waits for a standby to take over and checks its view against the oracle, has it
   * take a snapshot, and starts a new member in the dead one's place. SELECTs on the standbys never
   * fail. Every round is counted and checked; the figures go to {@code target/failover-soak.txt}.
   */
  @Test
  @Timeout(value = 180, unit = TimeUnit.MINUTES)
  void failoverSoak(@TempDir Path dir) throws Exception {
    int rounds = Integer.getInteger("cairn.failover.rounds", 0);
    org.junit.jupiter.api.Assumptions.assumeTrue(rounds > 0, "cairn.failover.rounds is 0: the soak runs with -Pfailover-soak");
    Path config = writeConfig(dir, "soak", "1s");
    Map<Long, long[]> oracle = oracle();
    java.util.Random random = new java.util.Random(Long.getLong("cairn.failover.seed", 32));
    List<Integer> ports = new ArrayList<>();
    List<ChildNode> nodes = new ArrayList<>();
    StandbyReads reads = new StandbyReads(ports, "SELECT category, n, total FROM by_cat");
    Thread reader = new Thread(reads, "standby-reads");
    reader.setDaemon(true);
    Map<String, List<Long>> millis = new TreeMap<>();
    try {
      ports.add(Http.freePort());
      nodes.add(start(dir, "n0", config, ports.get(0)));
      nodes.get(0).awaitReady(ports.get(0), Duration.ofSeconds(90), "n0, the first member");
      awaitOracle(ports.get(0), oracle, "n0");
      assertThat(Http.post(ports.get(0), "/snapshot", "").code()).isEqualTo(200);
      List<Integer> standing = new ArrayList<>();
      for (int i = 1; i < 3; i++) {
        ports.add(Http.freePort());
        nodes.add(start(dir, "n" + i, config, ports.get(i)));
        awaitStandby(nodes.get(i), ports.get(i), "n" + i);
        standing.add(i);
      }
      reader.start();
      int owner = 0;
      for (int round = 1; round <= rounds; round++) {
        for (int i : standing) {
          awaitWarm(ports.get(i), "n" + i + " before round " + round);
        }
        reads.watch(standing);
        String kind = List.of("kill", "stop", "pause").get(random.nextInt(3));
        ChildNode old = nodes.get(owner);
        reads.unwatch(owner);
        long zombieEpoch = Http.get(ports.get(owner), "/status").json().path("epoch").asLong();
        long t0 = System.nanoTime();
        Map<Path, Long> before = null;
        switch (kind) {
          case "kill" -> old.killAndWait();
          case "stop" -> {
            old.stop(Duration.ofSeconds(30));
            assertThat(old.exitValue()).as("round %d: SIGTERM exit; log: %s", round, old.tail()).isEqualTo(143);
          }
          default -> signal("STOP", old);
        }
        int next = awaitOneReady(nodes, ports, standing, SESSION.plusSeconds(60), "in round " + round + " (" + kind + ")");
        millis.computeIfAbsent(kind, k -> new ArrayList<>()).add((System.nanoTime() - t0) / 1_000_000);
        if (kind.equals("pause")) {
          before = listing(dir.resolve("store"));
          signal("CONT", old);
          assertThat(old.waitFor(Duration.ofSeconds(30))).as("round %d: the zombie stops; log: %s", round, old.tail()).isTrue();
          assertThat(old.exitValue()).as("round %d: the zombie exits 5; log: %s", round, old.tail()).isEqualTo(5);
          Map<Path, Long> after = listing(dir.resolve("store"));
          for (Map.Entry<Path, Long> e : after.entrySet()) {
            if (!e.getValue().equals(before.get(e.getKey())) && e.getKey().toString().endsWith(".json")) {
              assertThat(Files.readString(e.getKey())).as("round %d: %s is not the zombie's (epoch %d)", round, e.getKey(), zombieEpoch)
                  .doesNotContainPattern("\"epoch\"\\s*:\\s*" + zombieEpoch + "\\b");
            }
          }
        }
        awaitOracle(ports.get(next), oracle, "n" + next + " after round " + round + " (" + kind + ")");
        Http.Response snap = Http.post(ports.get(next), "/snapshot", "");
        assertThat(snap.code()).as("round %d: snapshot on the new owner: %s", round, snap.body()).isEqualTo(200);
        // a new member in the dead one's place
        int fresh = nodes.size();
        ports.add(Http.freePort());
        nodes.add(start(dir, "n" + fresh, config, ports.get(fresh)));
        awaitStandby(nodes.get(fresh), ports.get(fresh), "n" + fresh);
        standing.add(fresh);
        owner = next;
        LOG.info("Failover soak: round {} of {} ({}) checked", round, rounds, kind);
      }
      reads.stop();
      reader.join(10_000);
      assertThat(reads.failures).as("failed SELECTs on standbys during the soak").isEmpty();
      StringBuilder sb = new StringBuilder(String.format(java.util.Locale.ROOT,
          "%d rounds checked against the oracle; %d SELECTs on standbys, 0 failed%n", rounds, reads.ok.get()));
      millis.forEach((k, v) -> {
        List<Long> sorted = v.stream().sorted().toList();
        sb.append(String.format(java.util.Locale.ROOT, "%s: %d rounds, to a standby ready: median %d ms, max %d ms%n", k,
            sorted.size(), sorted.get(sorted.size() / 2), sorted.get(sorted.size() - 1)));
      });
      LOG.info("Failover soak:\n{}", sb);
      Files.writeString(Path.of("target", "failover-soak.txt"), sb.toString());
    } finally {
      reads.stop();
      for (ChildNode n : nodes) {
        if (n.isAlive()) {
          signal("CONT", n);
          n.killAndWait();
        }
      }
    }
  }

  /**
   * The members' configuration: a store in {@code dir}, a group on the shared broker (a new name
   * from {@code groupPrefix}), standbys looking for snapshots every {@code refresh}, the generator
   * and the view {@code by_cat}.
   */
  private static Path writeConfig(Path dir, String groupPrefix, String refresh) throws Exception {
    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config, String.join("\n",
        "store:",
        "  uri: \"" + dir.resolve("store").toUri() + "\"",
        "group:",
        "  bootstrap-servers: \"" + KafkaBroker.shared().bootstrapServers() + "\"",
        "  name: \"" + KafkaBroker.uniqueTopic(groupPrefix) + "\"",
        "  session-timeout: " + SESSION.toSeconds() + "s",
        "standby:",
        "  refresh-interval: " + refresh,
        "init:",
        "  - \"CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + KEYS + ", categories = " + CATEGORIES + ", seed = " + SEED
            + ", limit = " + LIMIT + ", rate = " + RATE + ") ENVELOPE UPSERT\"",
        "  - \"CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category\"",
        ""));
    return config;
  }

  /** Waits until the standby on {@code port} serves the newest snapshot in the store. */
  private static void awaitWarm(int port, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      var sb = Http.get(port, "/status").json().path("standby");
      if (sb.has("snapshot") && !sb.path("behindNewestSnapshot").asBoolean(true)) {
        return;
      }
      assertThat(System.nanoTime()).as("%s serves the newest snapshot within 60 s: %s", who, sb).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /**
   * Waits until the standby on {@code port} serves snapshot {@code snapshotId}, and checks what it
   * serves: its view equals the oracle after the records the snapshot's offsets say were read.
   */
  private static void awaitServing(int port, String snapshotId, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      var st = Http.get(port, "/status").json();
      var sb = st.path("standby");
      if (sb.path("snapshot").asText().equals(snapshotId)) {
        assertThat(st.path("state").asText()).isEqualTo("STANDBY");
        long offset = sb.path("sourcesAsOfSnapshot").path("gen").path("offset").asLong(-1);
        assertThat(offset).as("%s: the generator's offset in the snapshot served: %s", who, sb).isPositive();
        assertThat(text(view(port))).as("%s serves snapshot %s: by_cat after %d records", who, snapshotId, offset)
            .isEqualTo(text(oracle(offset)));
        assertThat(sb.path("lagBehindSnapshotMillis").asLong(-1)).isNotNegative();
        // the same in SQL: role, the snapshot served, and that the source is not read here
        Http.Response fresh = Http.post(port, "/sql?format=json", "SHOW FRESHNESS");
        assertThat(fresh.code()).as(fresh.body()).isEqualTo(200);
        var row = fresh.json().get(0).path("rows").get(0);
        assertThat(row.get(0).asText()).isEqualTo("standby (warm)");
        assertThat(row.get(3).asLong()).isEqualTo(sb.path("snapshotTick").asLong());
        assertThat(row.get(6).asText()).isEqualTo("gen");
        assertThat(row.get(7).asBoolean(true)).as("a warm standby reads no source: %s", fresh.body()).isFalse();
        Http.Response ddl = Http.post(port, "/sql", "CREATE MATERIALIZED VIEW nope AS SELECT category FROM gen");
        assertThat(ddl.code()).as("DDL on a standby: %s", ddl.body()).isEqualTo(400);
        assertThat(ddl.body()).contains("standby");
        assertThat(Http.post(port, "/snapshot", "").code()).as("a standby takes no snapshot").isEqualTo(503);
        return;
      }
      assertThat(System.nanoTime()).as("%s serves snapshot %s within 30 s: %s", who, snapshotId, st).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /**
   * Waits until the warm standby on {@code port}, still serving {@code snapshotId}, has applied the
   * catalog entry that created {@code late_cat}, and checks the view against {@code oracle}: the
   * snapshot's input, as by_cat there.
   */
  private static void awaitLateView(int port, String who, Map<Long, long[]> oracle, String snapshotId) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      Http.Response r = Http.post(port, "/sql?format=json", "SELECT category, n, total FROM late_cat");
      if (r.code() == 200) {
        var sb = Http.get(port, "/status").json().path("standby");
        assertThat(sb.path("snapshot").asText()).as("%s still serves the snapshot", who).isEqualTo(snapshotId);
        assertThat(sb.path("catalogEntriesAppliedAfterSnapshots").asLong()).as("%s: %s", who, sb).isPositive();
        assertThat(text(view(port, "late_cat"))).as("%s: late_cat, created after snapshot %s", who, snapshotId).isEqualTo(text(oracle));
        assertThat(text(view(port))).as("%s: by_cat beside it", who).isEqualTo(text(oracle));
        return;
      }
      assertThat(System.nanoTime()).as("%s has late_cat within 30 s: %s", who, r.body()).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** Waits until the standby on {@code port} serves a snapshot (its first load, which a hot standby ends caught up). */
  private static void awaitServing(int port, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Http.get(port, "/status").json().path("standby").has("snapshot")) {
      assertThat(System.nanoTime()).as("%s serves a snapshot within 60 s", who).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** Sends {@code SIG<name>} to the child's JVM (a process this test started). */
  static void signal(String name, ChildNode node) throws Exception {
    Process p = new ProcessBuilder("kill", "-" + name, Long.toString(node.pid())).inheritIO().start();
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("kill -%s %d", name, node.pid()).isZero();
  }

  /** Every file under {@code root} with its last-modified time. */
  static Map<Path, Long> listing(Path root) throws Exception {
    Map<Path, Long> out = new TreeMap<>();
    try (var s = Files.walk(root)) {
      for (Path p : (Iterable<Path>) s.filter(Files::isRegularFile)::iterator) {
        out.put(p, Files.getLastModifiedTime(p).toMillis() * 1_000_000L + Files.size(p));
      }
    }
    return out;
  }

  private static ChildNode start(Path dir, String name, Path config, int port) throws Exception {
    return start(dir, name, config, port, "warm");
  }

  private static ChildNode start(Path dir, String name, Path config, int port, String standbyMode) throws Exception {
    Path work = Files.createDirectories(dir.resolve(name));
    return ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx512m").directory(work)
        .env("CAIRN_HTTP_PORT", Integer.toString(port)).env("CAIRN_PGWIRE_PORT", "0").env("CAIRN_STANDBY_MODE", standbyMode)
        .start(work.resolve("node.log"));
  }

  private static void awaitStandby(ChildNode node, int port, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      assertThat(node.isAlive()).as("%s alive; log: %s", who, node.tail()).isTrue();
      try {
        Http.Response s = Http.get(port, "/status");
        if (s.code() == 200 && s.json().path("state").asText().equals("STANDBY")) {
          assertThat(s.json().path("role").asText()).isEqualTo("standby");
          assertThat(Http.get(port, "/health/ready").code()).as("a standby is not ready").isEqualTo(503);
          assertThat(Http.get(port, "/health/live").code()).as("a standby is live").isEqualTo(200);
          return;
        }
      } catch (RuntimeException notListeningYet) {
        // the JVM is starting
      }
      assertThat(System.nanoTime()).as("%s standing by within 60 s; log: %s", who, node.tail()).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  @Test
  void standbysTakeOverAfterAKillACleanStopAndAPauseLosingNothing(@TempDir Path dir) throws Exception {
    Path config = writeConfig(dir, "takeover", "2s");
    Map<Long, long[]> oracle = oracle();
    List<String> names = List.of("a", "b", "c", "d");
    List<Integer> ports = new ArrayList<>();
    List<ChildNode> nodes = new ArrayList<>();
    try {
      ports.add(Http.freePort());
      nodes.add(start(dir, "a", config, ports.get(0)));
      nodes.get(0).awaitReady(ports.get(0), Duration.ofSeconds(90), "a, the first member");
      assertThat(Http.get(ports.get(0), "/status").json().path("role").asText()).isEqualTo("owner");
      for (int i = 1; i < 4; i++) { // three standbys, started together; d is hot
        ports.add(Http.freePort());
        nodes.add(start(dir, names.get(i), config, ports.get(i), i == 3 ? "hot" : "warm"));
      }
      for (int i = 1; i < 4; i++) {
        awaitStandby(nodes.get(i), ports.get(i), names.get(i));
      }
      // any member's status shows the group: four members, a the owner
      long seen = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (true) {
        var st = Http.get(ports.get(1), "/status").json();
        if (st.path("members").size() == 4 && st.path("groupOwner").asText().endsWith("-" + ports.get(0))) {
          break;
        }
        assertThat(System.nanoTime()).as("b's status shows the four members and a as the owner: %s", st).isLessThan(seen);
        Thread.sleep(100);
      }
      Http.Response snap = Http.post(ports.get(0), "/snapshot", ""); // a snapshot, and more records after it
      assertThat(snap.code()).as(snap.body()).isEqualTo(200);
      String snapshotId = snap.json().path("snapshotId").asText();
      for (int i = 1; i < 3; i++) {
        awaitServing(ports.get(i), snapshotId, names.get(i));
      }
      // DDL the owner runs after the snapshot reaches the standbys with the catalog, before the next
      // snapshot: a warm standby computes the new view from the snapshot it serves
      Http.Response late = Http.post(ports.get(0), "/sql",
          "CREATE MATERIALIZED VIEW late_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category");
      assertThat(late.code()).as(late.body()).isEqualTo(200);
      long servedOffset = Http.get(ports.get(1), "/status").json().path("standby").path("sourcesAsOfSnapshot").path("gen")
          .path("offset").asLong();
      awaitLateView(ports.get(1), "b", oracle(servedOffset), snapshotId);
      // the hot standby reads the generator itself from the snapshot's offsets: while it stands by,
      // its view reaches the oracle over every record (fresher than the snapshot), reading nothing twice
      awaitServing(ports.get(3), "d");
      awaitOracle(ports.get(3), oracle, "d, a hot standby");
      awaitOracle(ports.get(3), "late_cat", oracle, "d, a hot standby, the view created after the snapshot");
      var hot = Http.get(ports.get(3), "/status").json();
      assertThat(hot.path("state").asText()).as("d stands by while it reads ahead: %s", hot).isEqualTo("STANDBY");
      assertThat(hot.path("standby").path("mode").asText()).isEqualTo("hot");
      assertThat(hot.path("standby").path("sources").path("gen").path("readAhead").asBoolean()).as("%s", hot).isTrue();
      long snapOffset = hot.path("standby").path("sourcesAsOfSnapshot").path("gen").path("offset").asLong();
      long readAhead = hot.path("standby").path("sources").path("gen").path("offsets").path("offset").asLong();
      assertThat(readAhead).as("d read the generator on from the snapshot's offset %d: %s", snapOffset, hot).isEqualTo(LIMIT);
      var hotRow = Http.post(ports.get(3), "/sql?format=json", "SHOW FRESHNESS").json().get(0).path("rows").get(0);
      assertThat(hotRow.get(0).asText()).isEqualTo("standby (hot)");
      assertThat(hotRow.get(7).asBoolean()).as("a hot standby reads gen: %s", hotRow).isTrue();
      assertThat(hotRow.get(8).asText()).contains("offset=" + LIMIT);
      assertThat(hotRow.get(9).asBoolean()).isTrue();
      Thread.sleep(1000);
      for (int i = 1; i < 4; i++) {
        assertThat(Http.get(ports.get(i), "/status").json().path("state").asText()).as("%s stands by while a lives", names.get(i))
            .isEqualTo("STANDBY");
      }
      List<Integer> standing = new ArrayList<>(List.of(1, 2, 3));
      // reads on the standbys (and on the one taking over) never fail, through every takeover
      StandbyReads reads = new StandbyReads(ports, "SELECT category, n, total FROM by_cat");
      reads.watch(List.of(1, 2, 3));
      Thread reader = new Thread(reads, "standby-reads");
      reader.setDaemon(true);
      reader.start();

      // 1. kill -9 of the owner: the group notices after the session timeout; one standby takes the store
      long t0 = System.nanoTime();
      nodes.get(0).killAndWait();
      int owner1 = awaitOneReady(nodes, ports, standing, SESSION.plusSeconds(60), "after a's kill -9");
      long killTakeover = (System.nanoTime() - t0) / 1_000_000;
      assertThat(Http.get(ports.get(owner1), "/status").json().path("role").asText()).isEqualTo("owner");
      awaitOracle(ports.get(owner1), oracle, names.get(owner1) + " after a's kill -9");
      awaitOracle(ports.get(owner1), "late_cat", oracle, names.get(owner1) + " after a's kill -9");

      // 2. a clean stop of the owner: it leaves the group, so another standby takes over without the session timeout
      reads.unwatch(owner1);
      long t1 = System.nanoTime();
      nodes.get(owner1).stop(Duration.ofSeconds(30));
      assertThat(nodes.get(owner1).exitValue()).as("%s stopped by its SIGTERM (143), not killed after the grace period; log: %s",
          names.get(owner1), nodes.get(owner1).tail()).isEqualTo(143);
      int owner2 = awaitOneReady(nodes, ports, standing, Duration.ofSeconds(60), "after " + names.get(owner1) + "'s clean stop");
      long stopTakeover = (System.nanoTime() - t1) / 1_000_000;
      awaitOracle(ports.get(owner2), oracle, names.get(owner2) + " after a clean stop");

      // 3. a zombie: the owner paused past the session timeout; the last standby takes over; the zombie,
      //    resumed, writes no epoch, catalog entry, witness or manifest (each names its writer's epoch) and exits 5
      ChildNode zombie = nodes.get(owner2);
      long zombieEpoch = Http.get(ports.get(owner2), "/status").json().path("epoch").asLong();
      reads.unwatch(owner2);
      signal("STOP", zombie);
      long t2 = System.nanoTime();
      int owner3 = awaitOneReady(nodes, ports, standing, SESSION.plusSeconds(60), "after " + names.get(owner2) + "'s pause");
      long pauseTakeover = (System.nanoTime() - t2) / 1_000_000;
      assertThat(Http.get(ports.get(owner3), "/status").json().path("epoch").asLong()).isGreaterThan(zombieEpoch);
      Map<Path, Long> before = listing(dir.resolve("store"));
      signal("CONT", zombie);
      assertThat(zombie.waitFor(Duration.ofSeconds(30))).as("the resumed zombie stops; log: %s", zombie.tail()).isTrue();
      assertThat(zombie.exitValue()).as("fenced: exit 5; log: %s", zombie.tail()).isEqualTo(5);
      assertThat(zombie.logText()).contains("Fenced");
      Map<Path, Long> after = listing(dir.resolve("store"));
      for (Map.Entry<Path, Long> e : after.entrySet()) {
        if (!e.getValue().equals(before.get(e.getKey())) && e.getKey().toString().endsWith(".json")) {
          // epochs, catalog entries, witnesses and manifests are JSON and name their writer's epoch
          String written = Files.readString(e.getKey());
          assertThat(written).as("%s, written after the zombie resumed, is not the zombie's (epoch %d)", e.getKey(), zombieEpoch)
              .doesNotContainPattern("\"epoch\"\\s*:\\s*" + zombieEpoch + "\\b");
        }
      }
      awaitOracle(ports.get(owner3), oracle, names.get(owner3) + " after the zombie's pause");
      awaitOracle(ports.get(owner3), "late_cat", oracle, names.get(owner3) + " after the zombie's pause");
      reads.stop();
      reader.join(10_000);
      assertThat(reads.failures).as("failed SELECTs on standbys during the takeovers").isEmpty();
      assertThat(reads.ok.get()).as("SELECTs on standbys during the takeovers").isGreaterThan(50);
      String figures = String.format(java.util.Locale.ROOT,
          "takeover (kill -9 to a standby ready): %d ms with a %d s session timeout; (SIGTERM to a standby ready): %d ms;"
              + " (SIGSTOP to a standby ready): %d ms; %d SELECTs on standbys meanwhile, %d failed%n",
          killTakeover, SESSION.toSeconds(), stopTakeover, pauseTakeover, reads.ok.get(), reads.failures.size());
      LOG.info("Group takeover figures:\n{}", figures);
      Files.writeString(Path.of("target", "group-takeover-figures.txt"), figures);
      assertThat(stopTakeover).as("a clean stop hands over without waiting for the session timeout (%s)", figures)
          .isLessThan(killTakeover);
    } finally {
      for (ChildNode n : nodes) {
        if (n.isAlive()) {
          signal("CONT", n); // a paused JVM is continued before it is killed
          n.killAndWait();
        }
      }
    }
  }
}
