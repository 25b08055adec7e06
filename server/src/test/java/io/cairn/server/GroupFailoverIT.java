package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

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
 * with its own broker and Postgres server, child-JVM nodes: warm and hot standbys beside the owner.
 * Before each round new Kafka records and Postgres changes arrive; after each, the node that owns
 * the store has every view equal to the naive oracle (nothing lost, nothing counted twice, the slot
 * resumed), and SELECTs sent to the standbys every 100 ms never fail.
 *
 * <p>Rounds ({@link Kind}). In {@code mvn verify}: the owner paused past the session timeout (a
 * zombie, which still holds its replication connection: the test's Postgres ends it after a 5 s
 * {@code wal_sender_timeout}) and resumed — it must exit 5 having written no object naming its
 * epoch; the new owner killed with -9; the broker restarted (5 s down). The soak ({@code mvn
 * -Pgroup-failover-soak verify -pl server}, {@code -Dcairn.group-failover.rounds=N}) cycles through
 * every kind, starting a new member after each death so that the group stays three: also a clean
 * stop, a kill of the member taking over (the third takes over from it), a halt at the crash point
 * just before a manifest commit (every member but the first runs with {@code
 * cairn.crash-at=store.commit:3}; every owner has committed one snapshot when its round starts, and
 * the crash round takes two), and a kill -9 at a random moment of a snapshot.
 */
// a backstop above the rounds' own limit (assertTimeoutPreemptively below, which grows with the soak's
// rounds and names them): a hang anywhere, set-up included, fails this test by name
@Timeout(value = 3, unit = TimeUnit.HOURS)
class GroupFailoverIT {
  private static final Logger LOG = LoggerFactory.getLogger(GroupFailoverIT.class);
  private static final Duration SESSION = Duration.ofSeconds(6);
  private static final int SOAK_ROUNDS = Integer.getInteger("cairn.group-failover.rounds", 0);
  /**
   * Every owner's third manifest commit halts it: outside the crash rounds the test takes one
   * snapshot per owner, and at most one more (a kill during a snapshot), so only the crash round's
   * second snapshot reaches it.
   */
  private static final String CRASH_AT = "store.commit:3";

  /** How a round ends its owner. */
  enum Kind {
    PAUSE("pause"), KILL("kill"), BROKER("broker restart"), STOP("clean stop"), KILL_TAKING_OVER("kill of the member taking over"),
    CRASH_AT_COMMIT("crash point " + CRASH_AT), KILL_IN_SNAPSHOT("kill -9 during a snapshot");

    final String text;

    Kind(String text) {
      this.text = text;
    }
  }

  /** The members: index into {@code ports}, {@code nodes}, {@code modes}; the owner and the members standing by. */
  private static final class Group {
    final List<Integer> ports = new ArrayList<>();
    final List<ChildNode> nodes = new ArrayList<>();
    final List<String> modes = new ArrayList<>();
    final List<Integer> standing = new ArrayList<>();
    int owner;
  }

  @Test
  void ownersDieOneWayAfterAnotherOnKafkaAndPostgresLosingNothing(@TempDir Path dir) {
    List<Kind> kinds = new ArrayList<>();
    if (SOAK_ROUNDS <= 0) {
      kinds.addAll(List.of(Kind.PAUSE, Kind.KILL, Kind.BROKER));
    } else {
      for (int i = 0; i < SOAK_ROUNDS; i++) {
        kinds.add(Kind.values()[i % Kind.values().length]);
      }
    }
    // measured: about 20 s a round in verify (no new members), about 30 s in the soak
    Duration limit = Duration.ofMinutes(3).plus(Duration.ofSeconds(SOAK_ROUNDS <= 0 ? 60 : 90).multipliedBy(kinds.size()));
    assertTimeoutPreemptively(limit, () -> run(dir, kinds, SOAK_ROUNDS > 0), () -> "the group failover rounds took over " + limit);
  }

  private void run(Path dir, List<Kind> kinds, boolean soak) throws Exception {
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
      Group g = new Group();
      StandbyReads reads = new StandbyReads(g.ports, "SELECT * FROM by_customer");
      Thread reader = new Thread(reads, "standby-reads");
      reader.setDaemon(true);
      Members members = new Members(dir, config, pg, g, soak);
      Map<String, Long> figures = new TreeMap<>();
      Map<Kind, Integer> checked = new java.util.EnumMap<>(Kind.class);
      java.util.Random random = new java.util.Random(42);
      try {
        // the first owner also takes the snapshot its schedule missed at its start (none was ever taken), so it
        // runs without the crash point; every later member has committed exactly one when its crash round comes
        g.owner = members.start("warm", false);
        g.nodes.get(g.owner).awaitReady(g.ports.get(g.owner), Duration.ofSeconds(120), "the first member");
        checkAgainstOracle(g.ports.get(g.owner), scenario, "the first owner");
        snapshot(g, g.owner);
        g.standing.add(members.start("warm"));
        g.standing.add(members.start("hot"));
        for (int i : g.standing) {
          awaitServing(g.nodes.get(i), g.ports.get(i), "member " + i + " (" + g.modes.get(i) + ")");
        }
        reads.watch(g.standing);
        reader.start();
        for (int round = 1; round <= kinds.size(); round++) {
          Kind kind = kinds.get(round - 1);
          String when = "round " + round + " (" + kind.text + ")";
          scenario.produce(100);
          scenario.changeCustomers(20);
          if (kind == Kind.BROKER) {
            // the group's coordinator goes away for 5 s: no member may take the store twice, none may be lost
            kafka.restart(Duration.ofSeconds(5));
            scenario.produce(50);
            int serving = awaitSingleReadyOwner(g, when);
            figures.put(String.format("%03d broker restart: owner %s", round, serving == g.owner ? "kept" : "moved to member " + serving), 0L);
            if (serving != g.owner) {
              // the group moved the store: the old owner serves until its epoch check fences it, then exits 5
              ChildNode old = g.nodes.get(g.owner);
              reads.unwatch(g.owner);
              assertThat(old.waitFor(Duration.ofSeconds(30))).as("the old owner is fenced; log: %s", old.tail()).isTrue();
              assertThat(old.exitValue()).as("fenced: exit 5; log: %s", old.tail()).isEqualTo(5);
              g.standing.remove(Integer.valueOf(serving));
              g.owner = serving;
              checkAgainstOracle(g.ports.get(g.owner), scenario, when);
              snapshot(g, g.owner);
              members.refill(reads);
            } else {
              checkAgainstOracle(g.ports.get(g.owner), scenario, when);
            }
            checked.merge(kind, 1, Integer::sum);
            LOG.info("Group failover: {} checked; owner is member {}", when, g.owner);
            continue;
          }
          ChildNode old = g.nodes.get(g.owner);
          reads.unwatch(g.owner);
          long oldEpoch = Http.get(g.ports.get(g.owner), "/status").json().path("epoch").asLong();
          long t0 = System.nanoTime();
          String detail = "";
          switch (kind) {
            case KILL -> old.killAndWait();
            case STOP -> {
              old.stop(Duration.ofSeconds(30));
              // (the JVM exits 143, 128 + SIGTERM, once its shutdown hooks have run)
              assertThat(old.exitValue()).as("a clean stop; log: %s", old.tail()).isIn(0, 143);
              assertThat(old.logText()).as("the stop ran its shutdown").contains("Stopped and left group");
            }
            case PAUSE -> GroupTakeoverIT.signal("STOP", old);
            case CRASH_AT_COMMIT -> {
              snapshot(g, g.owner); // its second commit
              Http.Response r = postQuietly(g.ports.get(g.owner), "/snapshot"); // its third: the crash point
              assertThat(old.waitFor(Duration.ofSeconds(60))).as("%s: the owner halts at the crash point (snapshot answered %s); log: %s",
                  when, r, old.tail()).isTrue();
              assertThat(old.exitValue()).as("halted at the crash point; log: %s", old.tail()).isEqualTo(137);
              assertThat(old.logText()).contains("CRASH " + CRASH_AT);
            }
            case KILL_IN_SNAPSHOT -> {
              int port = g.ports.get(g.owner);
              Thread snap = new Thread(() -> postQuietly(port, "/snapshot"), "snapshot-to-kill");
              snap.setDaemon(true);
              snap.start();
              long delay = 20 + random.nextInt(400);
              Thread.sleep(delay);
              old.killAndWait();
              assertThat(old.logText()).as("killed, not halted at the crash point").doesNotContain("CRASH ");
              detail = ", " + delay + " ms into the snapshot";
            }
            case KILL_TAKING_OVER -> {
              old.killAndWait();
              int taking = awaitTakingOver(g, when);
              reads.unwatch(taking);
              boolean during;
              try {
                during = Http.get(g.ports.get(taking), "/health/ready").code() != 200;
              } catch (RuntimeException busy) {
                during = true;
              }
              g.nodes.get(taking).killAndWait();
              g.standing.remove(Integer.valueOf(taking));
              detail = ", member " + taking + " killed " + (during ? "while taking over" : "just after taking over");
              figures.merge("kills of a member while it took over", during ? 1L : 0L, Long::sum);
            }
            default -> throw new IllegalStateException(kind.toString());
          }
          int next = awaitOneReady(g, SESSION.plusSeconds(90), when);
          figures.put(String.format("%03d %s (member %d, %s%s) ms", round, kind.text, next, g.modes.get(next), detail),
              (System.nanoTime() - t0) / 1_000_000);
          if (kind == Kind.PAUSE) {
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
          checkAgainstOracle(g.ports.get(next), scenario, when);
          snapshot(g, next);
          g.owner = next;
          checked.merge(kind, 1, Integer::sum);
          LOG.info("Group failover: {} checked; owner is member {}", when, g.owner);
          if (soak) {
            members.refill(reads);
          }
        }
        assertThat(checked.values().stream().mapToInt(Integer::intValue).sum()).as("rounds checked against the oracle: %s", checked)
            .isEqualTo(kinds.size());
        reads.stop();
        reader.join(10_000);
        assertThat(reads.failures).as("failed SELECTs on standbys").isEmpty();
        assertThat(reads.ok.get()).as("SELECTs on standbys").isGreaterThan(50);
        StringBuilder text = new StringBuilder();
        figures.forEach((k, v) -> text.append(k).append(": ").append(v).append('\n'));
        text.append(String.format(java.util.Locale.ROOT, "%d rounds checked (%s); %d SELECTs on standbys, 0 failed%n", kinds.size(),
            checked, reads.ok.get()));
        LOG.info("Group failover figures:\n{}", text);
        Files.writeString(Path.of("target", soak ? "group-failover-soak-figures.txt" : "group-failover-figures.txt"), text);
      } finally {
        reads.stop();
        for (ChildNode n : g.nodes) {
          if (n.isAlive()) {
            try {
              GroupTakeoverIT.signal("CONT", n);
            } catch (AssertionError exitedMeanwhile) {
              // it exited between the two calls
            }
            n.killAndWait();
          }
        }
      }
    }
  }

  /** Starts members; in the soak, every member halts at its second manifest commit ({@link #CRASH_AT}). */
  private record Members(Path dir, Path config, PostgresServer pg, Group g, boolean soak) {
    int start(String mode) throws Exception {
      return start(mode, soak);
    }

    int start(String mode, boolean crashPoint) throws Exception {
      return startMember(dir, config, pg, g.ports, g.nodes, g.modes, mode, crashPoint ? List.of("-Dcairn.crash-at=" + CRASH_AT) : List.of());
    }

    /** Starts members until two stand by (warm and hot by turns), each serving a snapshot, watched by {@code reads}. */
    void refill(StandbyReads reads) throws Exception {
      while (g.standing.size() < 2) {
        int fresh = start(g.nodes.size() % 2 == 0 ? "warm" : "hot");
        g.standing.add(fresh);
        awaitServing(g.nodes.get(fresh), g.ports.get(fresh), "member " + fresh + " (" + g.modes.get(fresh) + ")");
        reads.watch(List.of(fresh));
      }
    }
  }

  /** A snapshot by hand on member {@code i}, which must answer 200 (its log tail otherwise). */
  private static void snapshot(Group g, int i) {
    Http.Response r = postQuietly(g.ports.get(i), "/snapshot");
    assertThat(r == null ? -1 : r.code()).as("a snapshot on member %d: %s; log: %s", i, r == null ? "no answer" : r.body(),
        g.nodes.get(i).tail()).isEqualTo(200);
  }

  /** POST with an empty body; a connection the node closes (it halted or was killed) answers null. */
  private static Http.Response postQuietly(int port, String path) {
    try {
      return Http.post(port, path, "");
    } catch (RuntimeException gone) {
      return null;
    }
  }

  /** Waits until a standing member says it is taking over the store (or already serves as owner); returns it. */
  private static int awaitTakingOver(Group g, String when) throws InterruptedException {
    long deadline = System.nanoTime() + SESSION.plusSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      for (int i : List.copyOf(g.standing)) {
        try {
          String state = Http.get(g.ports.get(i), "/status").json().path("state").asText();
          if (!state.equals("STANDBY")) {
            return i;
          }
        } catch (RuntimeException busy) {
          // answering late
        }
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no member began to take over within " + SESSION.plusSeconds(60) + " " + when);
  }

  private static int startMember(Path dir, Path config, PostgresServer pg, List<Integer> ports, List<ChildNode> nodes, List<String> modes,
      String mode, List<String> jvmOptions) throws Exception {
    int i = nodes.size();
    int port = Http.freePort();
    Path work = Files.createDirectories(dir.resolve("m" + i));
    List<String> options = new ArrayList<>(List.of("-Xmx512m"));
    options.addAll(jvmOptions);
    nodes.add(ChildNode.command("run", "--config", config.toString()).jvmOptions(options.toArray(String[]::new)).directory(work)
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
        "joined", scenario.expectedJoined(), "by_region", scenario.expectedByRegion(), "top_gen", scenario.expectedTopGen());
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
  private static void awaitServing(ChildNode node, int port, String who) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    String last = "no answer";
    while (true) {
      try {
        var st = Http.get(port, "/status").json();
        last = st.toString();
        if (st.path("state").asText().equals("STANDBY") && st.path("standby").has("snapshot")) {
          return;
        }
      } catch (RuntimeException notListeningYet) {
        // the JVM is starting
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(who + " does not stand by serving a snapshot within 90 s; last status: " + last + "\n" + node.tail());
      }
      Thread.sleep(100);
    }
  }


  /** Waits until exactly one member answers ready and every other live member stands by (or has exited); returns it. */
  private static int awaitSingleReadyOwner(Group g, String when) throws InterruptedException {
    List<Integer> ports = g.ports;
    List<ChildNode> nodes = g.nodes;
    List<Integer> standing = g.standing;
    int owner = g.owner;
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

  private static int awaitOneReady(Group g, Duration within, String when) throws InterruptedException {
    List<Integer> ports = g.ports;
    List<ChildNode> nodes = g.nodes;
    List<Integer> standing = g.standing;
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
