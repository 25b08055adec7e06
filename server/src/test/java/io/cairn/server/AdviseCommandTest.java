package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.node.Node;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.server.cli.CairnCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code cairn advise} and {@code GET /advise} on a serving node, and the errors for bad input and no node. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class AdviseCommandTest {
  record Run(int exit, String out, String err) {}

  static Run cairn(String... args) {
    PrintStream out = System.out;
    PrintStream err = System.err;
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
    try {
      int code = CairnCommand.execute(args);
      return new Run(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
  }

  @Test
  void badTargetsAreBadUsageAndNoNodeIsAFailureNamingTheAddress(@TempDir Path dir) {
    String cfg = Http.config(dir, "0 0 0 * * ?", List.of()).toString();
    Run abc = cairn("advise", "--config", cfg, "--target-recovery", "abc");
    assertThat(abc.exit()).isEqualTo(2);
    assertThat(abc.err()).contains("Invalid value for --target-recovery: target recovery time 'abc' is not a duration", "e.g. 90s, 2m");
    Run zero = cairn("advise", "--config", cfg, "--target-recovery", "0");
    assertThat(zero.exit()).isEqualTo(2);
    assertThat(zero.err()).contains("target recovery time '0' must be more than zero");
    for (String huge : new String[] {"99999999999d", "9223372036854775807ms", "366d"}) { // once a 500: long overflow
      Run r = cairn("advise", "--config", cfg, "--target-recovery", huge);
      assertThat(r.exit()).as(huge).isEqualTo(2);
      assertThat(r.err()).as(huge).contains("target recovery time '" + huge + "'");
    }
    Run negative = cairn("advise", "--config", cfg, "--target-recovery", "-2m");
    assertThat(negative.exit()).isEqualTo(2);
    assertThat(negative.err()).contains("'-2m' must be more than zero");
    Run missing = cairn("advise", "--config", cfg);
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err()).contains("Missing required option: '--target-recovery=DURATION'");
    Run noNode = cairn("advise", "--config", cfg, "--target-recovery", "2m");
    assertThat(noNode.exit()).isEqualTo(1);
    assertThat(noNode.err()).contains("Cannot reach the node at http://127.0.0.1:", "is `cairn run` running?");
  }

  @Test
  void aServingNodeAdvisesAsTextAndAsJson(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, "0 0 0 * * ?", List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 100, seed = 1, rate = 400)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category"));
    String cfgArg = yaml.toString();
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.serve();
      Run early = cairn("advise", "--config", cfgArg, "--target-recovery", "2m");
      assertThat(early.exit()).isEqualTo(1);
      assertThat(early.err()).contains("Cannot advise yet", "ask again in a few seconds");
      Thread.sleep(5_500);
      Run text = cairn("advise", "--config", cfgArg, "--target-recovery", "2m");
      assertThat(text.exit()).as(text.err()).isZero();
      assertThat(text.out()).contains("cairn advise: a snapshot schedule for a recovery within 2m", "recommended:",
          "snapshots.cron", "current:", "gen", "assumed: source 'gen' replays 500,000 records/s");
      Run json = cairn("advise", "--config", cfgArg, "--target-recovery", "90s", "--json");
      assertThat(json.exit()).as(json.err()).isZero();
      JsonNode j = new ObjectMapper().readTree(json.out());
      assertThat(j.get("targetMillis").asLong()).isEqualTo(90_000);
      assertThat(j.get("feasible").asBoolean()).as(json.out()).isTrue();
      assertThat(j.at("/recommended/configKey").asText()).isEqualTo("snapshots.cron");
      assertThat(j.at("/recommended/worstRecoveryMillis").asLong()).isLessThanOrEqualTo(90_000);
      assertThat(j.at("/sources/0/ingestRecordsPerSecond").asDouble()).as("rate = 400").isBetween(200.0, 600.0);
      assertThat(j.at("/model/sourcesReplay").asText()).contains("one after another");
      assertThat(j.get("retention")).as("the load generator has no retention").isEmpty();

      HttpClient client = HttpClient.newHttpClient();
      HttpResponse<String> bad = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cfg.httpPort()
          + "/advise?target=abc")).GET().build(), HttpResponse.BodyHandlers.ofString());
      assertThat(bad.statusCode()).isEqualTo(400);
      assertThat(bad.body()).contains("target recovery time 'abc' is not a duration");
      HttpResponse<String> none = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cfg.httpPort()
          + "/advise")).GET().build(), HttpResponse.BodyHandlers.ofString());
      assertThat(none.statusCode()).isEqualTo(400);
      assertThat(none.body()).contains("the target recovery time is missing");
      JsonNode status = new ObjectMapper().readTree(cairn("status", "--config", cfgArg, "--json").out());
      assertThat(status.at("/sources/gen/ingest/recordsPerSecond").asDouble()).isPositive();
    }
  }
}
