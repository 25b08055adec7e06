package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.testkit.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exactly-once Kafka sinks across kill -9: {@code cairn run} in a child JVM over the load
 * generator (upserts and deletes), a GROUP BY view, and two sinks of it — ENVELOPE UPSERT and
 * ENVELOPE DEBEZIUM — with a snapshot every 2 s. Each round the node is halted at a named crash
 * point (before a transaction's records are sent, after they are sent and before the commit,
 * right after a commit — before any snapshot holds it —, while reading the snapshot during
 * recovery) or killed at a random moment, and the next round recovers from the newest snapshot,
 * which is usually older than what the sinks had committed.
 *
 * <p>At the end a node runs without a crash point until the generator's last record is in both
 * sinks; then a {@code read_committed} consumer reads each sink's topic and its progress topic and
 * rebuilds the view record by record. It asserts, counted: every record's {@code before} is what
 * the rebuilt view holds for that key (a duplicate or a gap would break this), labels never go
 * back, and at every complete progress record the rebuilt view equals the naive oracle over the
 * generator's records up to the offsets that record names — and at the end equals the oracle
 * over all of them. It also asserts that every crash point was hit (the node's log says so).
 *
 * <p>Rounds: {@code -Dcairn.sink-kill.rounds=N} (default 10; the {@code sink-kill-soak} profile
 * runs 200).
 */
class SinkKillIT {
  private static final Logger LOG = LoggerFactory.getLogger(SinkKillIT.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long KEYS = 400;
  private static final long CATEGORIES = 7;
  private static final long SEED = 19;
  private static final long LIMIT = 80_000;
  private static final double RATE = 4_000;
  /** The kinds of round, in turn. */
  private static final String[] KINDS = {"sink.before-send", "sink.after-commit", "sink.before-commit", "kill", "store.get", "kill"};
  private static final Duration ROUND_BUDGET = Duration.ofSeconds(50);
  private static final Duration SETUP_AND_FINAL_BUDGET = Duration.ofMinutes(4);

  @Test
  void sinksHoldEveryChangeOnceAfterKills(@TempDir Path dir) {
    int rounds = Math.max(KINDS.length, Integer.getInteger("cairn.sink-kill.rounds", 10));
    Duration limit = SETUP_AND_FINAL_BUDGET.plus(ROUND_BUDGET.multipliedBy(rounds));
    assertTimeoutPreemptively(limit, () -> run(dir, rounds), () -> "SinkKillIT did not finish " + rounds + " rounds within " + limit);
  }

  private void run(Path dir, int rounds) throws Exception {
    long seed = Long.getLong("cairn.sink-kill.seed", System.nanoTime());
    Random random = new Random(seed);
    KafkaBroker kafka = KafkaBroker.shared();
    String upsertTopic = KafkaBroker.uniqueTopic("sink-upsert");
    String debeziumTopic = KafkaBroker.uniqueTopic("sink-debezium");
    String brokers = kafka.bootstrapServers();
    Path config = Http.config(dir, "0/2 * * * * ?", List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + KEYS + ", categories = " + CATEGORIES + ", seed = " + SEED + ", limit = " + LIMIT
            + ", rate = " + (long) RATE + ")",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category",
        "CREATE SINK up FROM by_cat INTO KAFKA (BROKERS '" + brokers + "', TOPIC '" + upsertTopic + "') FORMAT JSON ENVELOPE UPSERT",
        "CREATE SINK dbz FROM by_cat INTO KAFKA (BROKERS '" + brokers + "', TOPIC '" + debeziumTopic
            + "', max-records-per-transaction = 3) FORMAT JSON ENVELOPE DEBEZIUM"));
    int port = Integer.parseInt(java.nio.file.Files.readAllLines(config).stream().filter(l -> l.startsWith("  port:")).findFirst()
        .orElseThrow().replace("  port:", "").trim());
    LOG.info("Sink kill test: {} rounds, seed {}, topics {} and {}", rounds, seed, upsertTopic, debeziumTopic);
    Map<String, Integer> hits = new TreeMap<>();
    List<String> outcomes = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      String kind = KINDS[round % KINDS.length];
      Path log = dir.resolve("node-" + round + ".log");
      if (kind.equals("kill")) {
        ChildNode n = ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx384m").start(log);
        try {
          n.awaitReady(port, Duration.ofSeconds(60), "round " + round);
          Thread.sleep(300 + random.nextInt(2500));
        } finally {
          n.killAndWait();
        }
        hits.merge("kill", 1, Integer::sum);
        outcomes.add(round + ": kill -9");
        continue;
      }
      int at = kind.equals("store.get") ? 2 : 2 + random.nextInt(10);
      String point = kind + ":" + at;
      ChildNode n = ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx384m", "-Dcairn.crash-at=" + point).start(log);
      boolean exited;
      try {
        exited = n.waitFor(Duration.ofSeconds(40));
      } finally {
        n.killAndWait();
      }
      boolean crashed = exited && n.logText().contains("CRASH " + point);
      outcomes.add(round + ": " + point + (crashed ? " hit" : exited ? " exited without the crash point" : " not reached in 40 s, killed"));
      if (crashed) {
        hits.merge(kind, 1, Integer::sum);
      }
    }
    LOG.info("Rounds: {}", outcomes);
    // the final run: no crash point, until the last record is in both sinks
    ChildNode last = ChildNode.command("run", "--config", config.toString()).jvmOptions("-Xmx384m").start(dir.resolve("node-final.log"));
    try {
      last.awaitReady(port, Duration.ofSeconds(60), "final run");
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (true) {
        JsonNode st = JSON.readTree(Http.get(port, "/status").body());
        boolean genDone = st.path("sources").path("gen").path("offsets").path("offset").asLong() == LIMIT;
        boolean sinksDone = genDone && st.path("sinks").size() == 2;
        for (String s : new String[] {"up", "dbz"}) {
          JsonNode sk = st.path("sinks").path(s);
          sinksDone &= sk.path("state").asText().equals("RUNNING") && sk.path("pendingRows").asLong() == 0;
        }
        if (sinksDone && lastProgressAt(kafka, upsertTopic) == LIMIT && lastProgressAt(kafka, debeziumTopic) == LIMIT) {
          break;
        }
        assertThat(System.nanoTime()).as("the final run's sinks reach the generator's last record (status %s)", st).isLessThan(deadline);
        Thread.sleep(250);
      }
    } finally {
      last.stop(Duration.ofSeconds(20));
    }
    Check up = check(kafka, upsertTopic, true);
    Check dbz = check(kafka, debeziumTopic, false);
    LOG.info("Sink kill test: rounds {}; upsert {}; debezium {}", outcomes, up, dbz);
    System.out.println("SINK-KILL rounds=" + rounds + " hits=" + hits + " upsert=" + up + " debezium=" + dbz);
    for (String k : new TreeSet<>(List.of(KINDS))) {
      assertThat(hits).as("crash point or kill %s was hit at least once; rounds: %s", k, outcomes).containsKey(k);
    }
    for (Check c : List.of(up, dbz)) {
      assertThat(c.inconsistent).as("records whose before is not what the rebuilt view holds (duplicates or gaps) in %s", c).isZero();
      assertThat(c.mismatches).as("complete progress records where the rebuilt view differs from the oracle in %s", c).isEmpty();
      assertThat(c.labelsBack).as("labels that went back in %s", c).isZero();
      assertThat(c.ticksChecked).as("complete progress records checked against the oracle in %s", c).isGreaterThan(rounds);
      assertThat(c.records).as("records in %s", c).isPositive();
      assertThat(c.finalEqualsOracle).as("the rebuilt view equals the oracle over all %d records in %s", LIMIT, c).isTrue();
      assertThat(c.consumedAll).as("every data record belongs to a committed progress record in %s", c).isTrue();
    }
  }

  /** The generator's offset named by the newest progress record of {@code topic}, or -1. */
  private static long lastProgressAt(KafkaBroker kafka, String topic) {
    List<ConsumerRecord<byte[], byte[]>> ps = kafka.readAll(topic + "-progress", true);
    for (int i = ps.size() - 1; i >= 0; i--) {
      JsonNode p = parse(ps.get(i).value());
      if (p.path("complete").asBoolean()) {
        return p.path("offsets").path("gen").path("offset").asLong(-1);
      }
    }
    return -1;
  }

  /** What rebuilding one sink's view from its topic found. */
  static final class Check {
    final String topic;
    long records;
    long progressRecords;
    long ticksChecked;
    long inconsistent;
    long labelsBack;
    boolean finalEqualsOracle;
    boolean consumedAll;
    final List<String> mismatches = new ArrayList<>();

    Check(String topic) {
      this.topic = topic;
    }

    @Override
    public String toString() {
      return topic + ": " + records + " records, " + progressRecords + " progress records, " + ticksChecked + " complete ticks equal to the oracle checked, "
          + inconsistent + " inconsistent, " + labelsBack + " labels back, mismatches " + mismatches + ", final " + finalEqualsOracle;
    }
  }

  private static JsonNode parse(byte[] b) {
    try {
      return b == null ? null : JSON.readTree(b);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** category → [n, total] from a JSON row, or null. */
  private static List<Long> value(JsonNode row) {
    return row == null || row.isNull() ? null : List.of(row.get("n").asLong(), row.get("total").asLong());
  }

  private static Check check(KafkaBroker kafka, String topic, boolean upsert) {
    Check c = new Check(topic);
    List<ConsumerRecord<byte[], byte[]>> data = kafka.readAll(topic, true);
    List<ConsumerRecord<byte[], byte[]>> progress = kafka.readAll(topic + "-progress", true);
    c.progressRecords = progress.size();
    Map<Long, Map<Long, List<Long>>> oracle = oracleAt(progress);
    Map<Long, List<Long>> view = new TreeMap<>();
    int at = 0;
    long lastLabel = -1;
    boolean lastComplete = true;
    for (ConsumerRecord<byte[], byte[]> pr : progress) {
      JsonNode p = parse(pr.value());
      long label = p.path("tick").asLong();
      if (label < lastLabel || (label == lastLabel && lastComplete)) {
        c.labelsBack++;
      }
      lastLabel = label;
      lastComplete = p.path("complete").asBoolean();
      JsonNode pos = p.path("positions").path("0");
      long upTo = pos.isMissingNode() ? -1 : pos.asLong();
      while (at < data.size() && data.get(at).offset() < upTo) {
        ConsumerRecord<byte[], byte[]> r = data.get(at++);
        c.records++;
        long category = parse(r.key()).get("category").asLong();
        List<Long> before;
        List<Long> after;
        if (upsert) {
          Header h = r.headers().lastHeader("cairn-before");
          before = h == null ? null : value(parse(h.value()));
          after = value(parse(r.value()));
        } else {
          JsonNode v = parse(r.value());
          before = value(v.get("before"));
          after = value(v.get("after"));
        }
        Header t = r.headers().lastHeader("cairn-tick");
        if (t == null || Long.parseLong(new String(t.value(), StandardCharsets.US_ASCII)) != label) {
          c.labelsBack++;
        }
        if (!Objects.equals(view.get(category), before)) {
          c.inconsistent++;
        }
        if (after == null) {
          view.remove(category);
        } else {
          view.put(category, after);
        }
      }
      if (lastComplete) {
        long offset = p.path("offsets").path("gen").path("offset").asLong(-1);
        Map<Long, List<Long>> want = oracle.get(offset);
        c.ticksChecked++;
        if (!view.equals(want) && c.mismatches.size() < 5) {
          c.mismatches.add("tick " + label + " at offset " + offset + ": rebuilt " + view + ", oracle " + want);
        }
      }
    }
    c.consumedAll = at == data.size();
    c.finalEqualsOracle = view.equals(oracle.get(LIMIT));
    return c;
  }

  /** The view (category → [n, total]) after the generator's first N records, for every N a progress record names, and LIMIT. */
  private static Map<Long, Map<Long, List<Long>>> oracleAt(List<ConsumerRecord<byte[], byte[]>> progress) {
    TreeSet<Long> wanted = new TreeSet<>(List.of(LIMIT, 0L));
    for (ConsumerRecord<byte[], byte[]> pr : progress) {
      long o = parse(pr.value()).path("offsets").path("gen").path("offset").asLong(-1);
      if (o >= 0) {
        wanted.add(o);
      }
    }
    var s = new LoadGeneratorConnector.Settings(KEYS, CATEGORIES, SEED, 10, LIMIT, RATE);
    Map<Long, Row> table = new HashMap<>();
    Map<Long, long[]> agg = new TreeMap<>();
    Map<Long, Map<Long, List<Long>>> out = new HashMap<>();
    long i = 0;
    for (long w : wanted) {
      for (; i < w; i++) {
        var r = LoadGeneratorConnector.recordAt(s, i);
        Row old = r.row() == null ? table.remove(r.id()) : table.put(r.id(), r.row());
        if (old != null) {
          long[] a = agg.get(old.getLong(1));
          a[0]--;
          a[1] -= old.getLong(2);
          if (a[0] == 0) {
            agg.remove(old.getLong(1));
          }
        }
        if (r.row() != null) {
          long[] a = agg.computeIfAbsent(r.row().getLong(1), k -> new long[2]);
          a[0]++;
          a[1] += r.row().getLong(2);
        }
      }
      Map<Long, List<Long>> snap = new TreeMap<>();
      agg.forEach((k, a) -> snap.put(k, List.of(a[0], a[1])));
      out.put(w, snap);
    }
    return out;
  }
}
