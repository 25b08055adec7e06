package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * Failover of a group of three on Kafka and Postgres (the kill test's workload, {@link Scenario}: a
 * load generator, a Kafka topic of upserts and tombstones, a Postgres table over CDC, four views),
 * with its own broker and Postgres server, child-JVM nodes: one warm and one hot standby beside the
 * owner. Rounds: the owner paused past the session timeout (a zombie, which still holds its
 * replication connection: the test's Postgres ends it after a 5 s {@code wal_sender_timeout}) and
 * resumed — it must exit 5 having written no object naming its epoch; the new owner killed with -9;
 * the broker restarted (5 s down) under the last one. Before each round new Kafka records and Postgres changes
 * arrive; after each, the node that owns the store has every view equal to the naive oracle
 * (nothing lost, nothing counted twice, the slot resumed), and SELECTs sent to the standbys every
 * 100 ms never fail.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class GroupFailoverIT {
  private static final Logger LOG = LoggerFactory.getLogger(GroupFailoverIT.class);
  private static final Duration SESSION = Duration.ofSeconds(6);

  @Test
  void ownersDieOneWayAfterAnotherOnKafkaAndPostgresLosingNothing(@TempDir Path dir) throws Exception {
    try (KafkaBroker kafka = KafkaBroker.start(); PostgresServer pg = PostgresServer.start()) {
      Scenario scenario = new Scenario(kafka, pg, 20_000, 7);
      scenario.produce(200);
      scenario.changeCustomers(30);
      Path config = scenario.writeConfig(dir, dir.resolve("store").toUri().toString(), Map.of(), "0 0 0 * * ?");
      // (no store properties: a local store)
      Files.writeString(config, Files.readString(config).replace("  properties:\nengine:", "engine:") + String.join("\n",
          "group:",
          "  bootstrap-servers: \"" + kafka.bootstrapServers() + "\"",
          "  session-timeout: " + SESSION.toSeconds() + "s",
          "standby:",
          "  refresh-interval: 1s",
          ""));
      try (var c = pg.connect("postgres"); var st = c.createStatement()) {
        // a frozen owner's replication connection ends after this, so that another member can resume the slot
        // (the test server turns the timeout off on its command line, which beats ALTER SYSTEM; a role's setting
        // applies to the connections the role opens from now on, replication ones included)
        st.execute("ALTER ROLE " + pg.user() + " SET wal_sender_timeout = '5s'");
      }
      List<Integer> ports = new ArrayList<>();
      List<ChildNode> nodes = new ArrayList<>();
      List<String> modes = new ArrayList<>();
      StandbyReads reads = new StandbyReads(ports, "SELECT * FROM by_customer");
      Thread reader = new Thread(reads, "standby-reads");
      reader.setDaemon(true);
      Map<String, Long> figures = new TreeMap<>();
      try {
        int owner = startMember(dir, config, pg, ports, nodes, modes, "warm");
        nodes.get(owner).awaitReady(ports.get(owner), Duration.ofSeconds(120), "the first member");
        checkAgainstOracle(ports.get(owner), scenario, "the first owner");
        assertThat(Http.post(ports.get(owner), "/snapshot", "").code()).isEqualTo(200);
        List<Integer> standing = new ArrayList<>();
        standing.add(startMember(dir, config, pg, ports, nodes, modes, "warm"));
        standing.add(startMember(dir, config, pg, ports, nodes, modes, "hot"));
        for (int i : standing) {
          awaitServing(ports.get(i), "member " + i + " (" + modes.get(i) + ")");
        }
        reads.watch(standing);
        reader.start();

        // (clean stops, and a hundred rounds, run in GroupTakeoverIT and its soak profile)
        List<String> kinds = List.of("pause", "kill", "broker");
        for (int round = 1; round <= kinds.size(); round++) {
          String kind = kinds.get(round - 1);
          scenario.produce(100);
          scenario.changeCustomers(20);
          if (kind.equals("broker")) {
            // the group's coordinator goes away for 5 s: no member may take the store twice, none may be lost
            kafka.restart(Duration.ofSeconds(5));
            scenario.produce(50);
            int serving = awaitSingleReadyOwner(ports, nodes, standing, owner, "after the broker restart");
            figures.put(round + " broker restart: owner " + (serving == owner ? "kept" : "moved to member " + serving), 0L);
            if (serving != owner) {
              // the group moved the store: the old owner serves until its epoch check fences it, then exits 5
              ChildNode old = nodes.get(owner);
              reads.unwatch(owner);
              assertThat(old.waitFor(Duration.ofSeconds(30))).as("the old owner is fenced; log: %s", old.tail()).isTrue();
              assertThat(old.exitValue()).as("fenced: exit 5; log: %s", old.tail()).isEqualTo(5);
              standing.remove(Integer.valueOf(serving));
              owner = serving;
              int fresh = startMember(dir, config, pg, ports, nodes, modes, "warm");
              standing.add(fresh);
              awaitServing(ports.get(fresh), "member " + fresh);
              reads.watch(List.of(fresh));
            }
            checkAgainstOracle(ports.get(owner), scenario, "round " + round + " (broker restart)");
            LOG.info("Group failover: round {} (broker restart) checked; owner is member {}", round, owner);
            continue;
          }
          ChildNode old = nodes.get(owner);
          reads.unwatch(owner);
          long oldEpoch = Http.get(ports.get(owner), "/status").json().path("epoch").asLong();
          long t0 = System.nanoTime();
          switch (kind) {
            case "kill" -> old.killAndWait();
            case "stop" -> old.stop(Duration.ofSeconds(30));
            default -> GroupTakeoverIT.signal("STOP", old);
          }
          int next = awaitOneReady(nodes, ports, standing, SESSION.plusSeconds(90), "round " + round + " (" + kind + ")");
          figures.put(round + " " + kind + " (member " + next + ", " + modes.get(next) + ") ms", (System.nanoTime() - t0) / 1_000_000);
          if (kind.equals("pause")) {
            Map<Path, Long> before = GroupTakeoverIT.listing(dir.resolve("store"));
            GroupTakeoverIT.signal("CONT", old);
            assertThat(old.waitFor(Duration.ofSeconds(30))).as("the resumed zombie stops; log: %s", old.tail()).isTrue();
            assertThat(old.exitValue()).as("fenced: exit 5; log: %s", old.tail()).isEqualTo(5);
            Map<Path, Long> after = GroupTakeoverIT.listing(dir.resolve("store"));
            for (Map.Entry<Path, Long> e : after.entrySet()) {
              if (!e.getValue().equals(before.get(e.getKey())) && e.getKey().toString().endsWith(".json")) {
                assertThat(Files.readString(e.getKey())).as("%s is not the zombie's (epoch %d)", e.getKey(), oldEpoch)
                    .doesNotContainPattern("\"epoch\"\\s*:\\s*" + oldEpoch + "\\b");
              }
            }
          }
          checkAgainstOracle(ports.get(next), scenario, "round " + round + " (" + kind + ")");
          assertThat(Http.post(ports.get(next), "/snapshot", "").code()).isEqualTo(200);
          owner = next;
          LOG.info("Group failover: round {} ({}) checked; owner is member {}", round, kind, owner);
        }
        reads.stop();
        reader.join(10_000);
        assertThat(reads.failures).as("failed SELECTs on standbys").isEmpty();
        assertThat(reads.ok.get()).as("SELECTs on standbys").isGreaterThan(50);
        String text = figures + String.format(java.util.Locale.ROOT, "; %d SELECTs on standbys, 0 failed%n", reads.ok.get());
        LOG.info("Group failover figures: {}", text);
        Files.writeString(Path.of("target", "group-failover-figures.txt"), text);
      } finally {
        reads.stop();
        for (ChildNode n : nodes) {
          if (n.isAlive()) {
            GroupTakeoverIT.signal("CONT", n);
            n.killAndWait();
          }
        }
      }
    }
  }

  private static int startMember(Path dir, Path config, PostgresServer pg, List<Integer> ports, List<ChildNode> nodes, List<String> modes,
      String mode) throws Exception {
    int i = nodes.size();
    int port = Http.freePort();
    Path work = Files.createDirectories(dir.resolve("m" + i));
    nodes.add(ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx512m").directory(work)
        .env("CAIRN_HTTP_PORT", Integer.toString(port)).env("CAIRN_PGWIRE_PORT", "0").env("CAIRN_STANDBY_MODE", mode)
        .env("PGPASSWORD", pg.password()).start(work.resolve("node.log")));
    ports.add(port);
    modes.add(mode);
    return i;
  }

  /** Every view equals the oracle on the node on {@code port}, within 90 s (the sources catching up). */
  private static void checkAgainstOracle(int port, Scenario scenario, String when) throws Exception {
    Map<String, List<Row>> want = Map.of(
        "by_category", scenario.expectedByCategory(), "by_customer", scenario.expectedByCustomer(),
        "joined", scenario.expectedJoined(), "by_region", scenario.expectedByRegion());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    Map<String, List<Row>> got = Map.of();
    while (System.nanoTime() < deadline) {
      got = new TreeMap<>();
      for (String view : want.keySet()) {
        got.put(view, KillRecoveryIT.select(port, "SELECT * FROM " + view));
      }
      if (got.equals(new TreeMap<>(want))) {
        return;
      }
      Thread.sleep(200);
    }
    for (String view : want.keySet()) {
      assertThat(got.get(view)).as("%s: %s against the oracle", when, view).containsExactlyElementsOf(want.get(view));
    }
  }

  /** Waits until the member on {@code port} stands by serving a snapshot. */
  private static void awaitServing(int port, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      try {
        var st = Http.get(port, "/status").json();
        if (st.path("state").asText().equals("STANDBY") && st.path("standby").has("snapshot")) {
          return;
        }
      } catch (RuntimeException notListeningYet) {
        // the JVM is starting
      }
      assertThat(System.nanoTime()).as("%s stands by serving a snapshot within 90 s", who).isLessThan(deadline);
      Thread.sleep(100);
    }
  }

  /** Waits until exactly one member answers ready and every other live member stands by (or has exited); returns it. */
  private static int awaitSingleReadyOwner(List<Integer> ports, List<ChildNode> nodes, List<Integer> standing, int owner, String when)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      List<Integer> ready = new ArrayList<>();
      boolean othersStandBy = true;
      List<Integer> live = new ArrayList<>(standing);
      live.add(owner);
      for (int i : live) {
        if (!nodes.get(i).isAlive()) {
          continue;
        }
        try {
          if (Http.get(ports.get(i), "/health/ready").code() == 200) {
            ready.add(i);
          } else if (!Http.get(ports.get(i), "/status").json().path("state").asText().equals("STANDBY")) {
            othersStandBy = false;
          }
        } catch (RuntimeException busy) {
          othersStandBy = false;
        }
      }
      if (ready.size() == 1 && othersStandBy) {
        return ready.get(0);
      }
      // two ready for a moment is allowed: an owner the group moved on from serves until its epoch check fences it
      assertThat(System.nanoTime()).as("one owner ready, the others standing by, within 90 s %s", when).isLessThan(deadline);
      Thread.sleep(200);
    }
  }

  private static int awaitOneReady(List<ChildNode> nodes, List<Integer> ports, List<Integer> standing, Duration within, String when)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      for (int i : List.copyOf(standing)) {
        assertThat(nodes.get(i).isAlive()).as("member %d alive %s; log: %s", i, when, nodes.get(i).tail()).isTrue();
        try {
          if (Http.get(ports.get(i), "/health/ready").code() == 200) {
            standing.remove(Integer.valueOf(i));
            return i;
          }
        } catch (RuntimeException busy) {
          // busy taking over
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no standby took the store within " + within + " " + when);
  }

}
