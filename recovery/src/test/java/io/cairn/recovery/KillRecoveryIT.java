package io.cairn.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.connectors.testing.kafka.KafkaBroker;
import io.cairn.objectstore.testing.S3ProxyServer;
import io.cairn.recovery.config.CairnConfig;
import io.cairn.recovery.config.ConfigLoader;
import io.cairn.recovery.node.Node;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kill -9 harness: the node runs {@code cairn run} in a child JVM over a Kafka topic and the load
 * generator, with upsert, join and aggregate views and a snapshot every second on a real S3
 * server; it is killed — at random moments (ingest, snapshot capture and upload) and at named
 * crash points (during a batch upload, between batch upload and manifest commit, while reading
 * during recovery, while catching up) — and restarted, with more Kafka records produced between
 * rounds. Finally a node recovers in this JVM and every view must equal the naive oracle over all
 * input: no update lost, none counted twice.
 *
 * <p>Rounds: {@code -Dcairn.kill.rounds=N} (default 20; the {@code kill-soak} profile runs hundreds).
 */
class KillRecoveryIT {
  private static final Logger LOG = LoggerFactory.getLogger(KillRecoveryIT.class);
  private static final String[] CRASH_POINTS = {
    "store.put:1", "store.commit:1", "store.get:3", "recovery.tick:2", "store.put:5", "store.commit:2"
  };

  @Test
  void viewsEqualTheOracleAfterRepeatedKills(@TempDir Path dir) throws Exception {
    int rounds = Integer.getInteger("cairn.kill.rounds", 20);
    long seed = Long.getLong("cairn.kill.seed", System.nanoTime());
    LOG.info("Kill test: {} rounds, seed {}", rounds, seed);
    Random random = new Random(seed);
    S3ProxyServer s3 = S3ProxyServer.shared();
    String bucket = s3.createBucket();
    Scenario scenario = new Scenario(KafkaBroker.shared(), 120_000, seed);
    scenario.produce(2000);
    Map<String, String> props =
        Map.of("s3.access-key-id", s3.accessKeyId(), "s3.secret-access-key", s3.secretAccessKey(), "s3.region", s3.region());
    Path config = scenario.writeConfig(dir, s3.uri(bucket, "kill"), props, "* * * * * ?");

    List<String> outcomes = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      String crashAt = round % 3 == 2 ? CRASH_POINTS[(round / 3) % CRASH_POINTS.length] : null;
      Path log = dir.resolve("node-" + round + ".log");
      Process p = startNode(config, crashAt, log);
      if (crashAt == null) {
        long wait = 800 + random.nextInt(3500);
        if (p.waitFor(wait, TimeUnit.MILLISECONDS)) {
          throw new AssertionError("node exited early (code " + p.exitValue() + "): " + tail(log));
        }
        p.destroyForcibly(); // SIGKILL
        outcomes.add("round " + round + ": killed after " + wait + " ms");
      } else {
        boolean exited = p.waitFor(20, TimeUnit.SECONDS);
        if (!exited) {
          p.destroyForcibly();
        }
        outcomes.add("round " + round + ": crash point " + crashAt + (exited && p.exitValue() == 137 ? " hit" : " not reached, killed"));
      }
      p.waitFor(10, TimeUnit.SECONDS);
      scenario.produce(300 + random.nextInt(700));
    }
    LOG.info("Kill rounds:\n  {}", String.join("\n  ", outcomes));

    CairnConfig cfg = ConfigLoader.load(config, Map.of());
    try (Node node = Node.recover(cfg, Node.Options.defaults().withCatchUpTimeout(Duration.ofMinutes(3)))) {
      LOG.info("Final recovery:\n{}", node.report().toText());
      assertThat(node.report().caughtUp()).as("caught up").isTrue();
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
    }
  }

  static Process startNode(Path config, String crashAt, Path log) throws Exception {
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
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  static String tail(Path log) throws Exception {
    List<String> lines = Files.readAllLines(log);
    return String.join(File.separator.equals("/") ? "\n" : "\r\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
  }
}
