package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
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
 * the first member owns the store, a second stands by (status STANDBY, not ready, nothing written),
 * and takes the store over when the owner is killed with -9 (after Kafka's session timeout) and when
 * the owner stops cleanly (at once: it leaves the group). After each takeover the new owner's view
 * equals the naive oracle computed from the load generator's records: nothing lost, nothing counted
 * twice.
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
    var s = new LoadGeneratorConnector.Settings(KEYS, CATEGORIES, SEED, 10, LIMIT, RATE);
    Map<Long, Row> table = new HashMap<>();
    for (long i = 0; i < LIMIT; i++) {
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
    Http.Response r = Http.post(port, "/sql?format=json", "SELECT category, n, total FROM by_cat");
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
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Map<Long, long[]> last = Map.of();
    while (System.nanoTime() < deadline) {
      last = view(port);
      if (same(last, oracle)) {
        return;
      }
      Thread.sleep(200);
    }
    assertThat(text(last)).as("%s: view by_cat against the oracle", who).isEqualTo(text(oracle));
  }

  private static ChildNode start(Path dir, String name, Path config, int port) throws Exception {
    Path work = Files.createDirectories(dir.resolve(name));
    return ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx512m").directory(work)
        .env("CAIRN_HTTP_PORT", Integer.toString(port)).env("CAIRN_PGWIRE_PORT", "0").start(work.resolve("node.log"));
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
  void aStandbyTakesOverAfterAKillAndAfterACleanStopLosingNothing(@TempDir Path dir) throws Exception {
    KafkaBroker kafka = KafkaBroker.shared();
    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config, String.join("\n",
        "store:",
        "  uri: \"" + dir.resolve("store").toUri() + "\"",
        "group:",
        "  bootstrap-servers: \"" + kafka.bootstrapServers() + "\"",
        "  name: \"" + KafkaBroker.uniqueTopic("takeover") + "\"",
        "  session-timeout: " + SESSION.toSeconds() + "s",
        "init:",
        "  - \"CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + KEYS + ", categories = " + CATEGORIES + ", seed = " + SEED
            + ", limit = " + LIMIT + ", rate = " + RATE + ") ENVELOPE UPSERT\"",
        "  - \"CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category\"",
        ""));
    Map<Long, long[]> oracle = oracle();
    int pa = Http.freePort();
    int pb = Http.freePort();
    int pc = Http.freePort();
    ChildNode a = start(dir, "a", config, pa);
    ChildNode b = null;
    ChildNode c = null;
    try {
      a.awaitReady(pa, Duration.ofSeconds(90), "a, the first member");
      assertThat(Http.get(pa, "/status").json().path("role").asText()).isEqualTo("owner");
      b = start(dir, "b", config, pb);
      awaitStandby(b, pb, "b");
      Thread.sleep(1500); // a keeps ingesting; then a snapshot, and more records after it
      Http.Response snap = Http.post(pa, "/snapshot", "");
      assertThat(snap.code()).as(snap.body()).isEqualTo(200);
      Thread.sleep(1500);
      assertThat(Http.get(pb, "/status").json().path("state").asText()).as("b still stands by while a lives").isEqualTo("STANDBY");

      // 1. kill -9 of the owner: the group notices after the session timeout; b takes the store
      long t0 = System.nanoTime();
      a.killAndWait();
      b.awaitReady(pb, SESSION.plusSeconds(60), "b taking over from a killed owner");
      long killTakeover = (System.nanoTime() - t0) / 1_000_000;
      assertThat(Http.get(pb, "/status").json().path("role").asText()).isEqualTo("owner");
      awaitOracle(pb, oracle, "b after a's kill -9");

      // 2. a clean stop of the owner: it leaves the group, so c takes over without the session timeout
      c = start(dir, "c", config, pc);
      awaitStandby(c, pc, "c");
      long t1 = System.nanoTime();
      b.stop(Duration.ofSeconds(30));
      assertThat(b.exitValue()).as("b stopped by its SIGTERM (143), not killed after the grace period; log: %s", b.tail())
          .isEqualTo(143);
      c.awaitReady(pc, Duration.ofSeconds(60), "c taking over from a cleanly stopped owner");
      long stopTakeover = (System.nanoTime() - t1) / 1_000_000;
      awaitOracle(pc, oracle, "c after b's clean stop");
      String figures = String.format(java.util.Locale.ROOT,
          "takeover (kill -9 to the standby ready): %d ms with a %d s session timeout; (SIGTERM to the standby ready): %d ms%n",
          killTakeover, SESSION.toSeconds(), stopTakeover);
      LOG.info("Group takeover figures:\n{}", figures);
      Files.writeString(Path.of("target", "group-takeover-figures.txt"), figures);
      assertThat(stopTakeover).as("a clean stop hands over without waiting for the session timeout (%s)", figures)
          .isLessThan(killTakeover);
    } finally {
      for (ChildNode n : new ChildNode[] {a, b, c}) {
        if (n != null && n.isAlive()) {
          n.killAndWait();
        }
      }
    }
  }
}
