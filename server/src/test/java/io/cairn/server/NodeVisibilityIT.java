package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.NodeUnavailableException;
import io.cairn.node.Node;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node is seen from the first second of its start (status, metrics and the probes answer while
 * it recovers and catches up; SQL says "not ready"), and a node another node has taken the store
 * from answers SQL with "unavailable" naming the epoch, not with a client error.
 */
class NodeVisibilityIT {

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void statusAnswersThroughRecoveryAndSqlWaitsForReadiness(@TempDir Path dir) throws Exception {
    // a catch-up of 3M generator records: seconds, during which the node must be seen
    CairnConfig cfg = ConfigLoader.load(Http.config(dir, "0 0 0 * * ?", List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 200000, limit = 3000000, seed = 3)",
        "CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category")), Map.of());
    CompletableFuture<Node> starting = CompletableFuture.supplyAsync(
        () -> Node.recover(cfg, Node.Options.defaults().withHttpWhileRecovering(true)));
    Set<String> statesSeen = new LinkedHashSet<>();
    List<String> sqlAnswers = new ArrayList<>();
    boolean sawNotReady = false;
    while (!starting.isDone()) {
      try {
        Http.Response status = Http.get(cfg.httpPort(), "/status");
        assertThat(status.code()).isEqualTo(200);
        JsonNode s = status.json();
        statesSeen.add(s.path("state").asText());
        if (!s.path("ready").asBoolean()) {
          assertThat(s.path("live").asBoolean()).isTrue();
          assertThat(s.path("notReady").asText()).isNotEmpty();
          Http.Response ready = Http.get(cfg.httpPort(), "/health/ready");
          Http.Response live = Http.get(cfg.httpPort(), "/health/live");
          Http.Response sql = Http.post(cfg.httpPort(), "/sql", "SELECT * FROM by_category");
          if (!starting.isDone()) {
            assertThat(live.code()).isEqualTo(200);
            if (ready.code() == 503) {
              sawNotReady = true;
            }
            sqlAnswers.add(sql.code() + " " + sql.body().strip());
          }
          assertThat(Http.get(cfg.httpPort(), "/metrics").code()).isEqualTo(200);
        }
      } catch (java.io.UncheckedIOException notListeningYet) {
        assertThat(statesSeen).as("the endpoint stopped listening after it had answered").isEmpty();
      }
      Thread.sleep(20);
    }
    try (Node node = starting.get(1, TimeUnit.MINUTES)) {
      assertThat(statesSeen).as("states seen while it started").contains("RECOVERING");
      assertThat(sawNotReady).as("/health/ready said 503 while it recovered").isTrue();
      assertThat(sqlAnswers).isNotEmpty();
      // while it starts and recovers: 503 "not ready", naming where it is (taking the store, then the
      // last recovery phase done); once caught up (recover() about to return) the views are complete
      // and a SELECT may be answered
      assertThat(sqlAnswers.get(0)).startsWith("503").contains("not ready");
      assertThat(sqlAnswers).as("an answer while it recovered names the phase")
          .anySatisfy(a -> assertThat(a).startsWith("503").contains("not ready").contains("last phase done"));
      assertThat(sqlAnswers).allSatisfy(a -> assertThat(a).satisfiesAnyOf(
          x -> assertThat(x).startsWith("503").contains("not ready").containsAnyOf("last phase done", "it is starting: reading the catalog"),
          x -> assertThat(x).startsWith("200").contains("(10 rows)")));
      node.serve();
      NodeUnderTrafficIT.await("ready", Duration.ofSeconds(30), () -> Http.get(cfg.httpPort(), "/health/ready").code() == 200);
      Http.Response sql = Http.post(cfg.httpPort(), "/sql", "SELECT * FROM by_category");
      assertThat(sql.code()).isEqualTo(200);
      assertThat(sql.body()).contains("(10 rows)");
      JsonNode s = Http.get(cfg.httpPort(), "/status").json();
      assertThat(s.path("state").asText()).isEqualTo("SERVING");
      assertThat(s.path("ready").asBoolean()).isTrue();
      assertThat(s.path("phase").asText()).isEqualTo("recovered");
    }
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void aFencedNodeAnswersUnavailableNamingTheEpoch(@TempDir Path dir) throws Exception {
    CairnConfig cfg = ConfigLoader.load(Http.config(dir, "0 0 0 * * ?", List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 100, limit = 1000, seed = 3)")), Map.of());
    Node first = Node.recover(cfg, Node.Options.defaults());
    first.serve();
    Path otherDir = java.nio.file.Files.createDirectories(dir.resolve("other"));
    CairnConfig other = ConfigLoader.load(Http.config(otherDir, "0 0 0 * * ?", List.of()), Map.of("CAIRN_STORE_URI", cfg.storeUri()));
    try (Node second = Node.recover(other, Node.Options.defaults())) {
      second.serve();
      // the first node finds out at its next write: a DDL statement
      assertThatThrownBy(() -> first.sql("CREATE MATERIALIZED VIEW x AS SELECT id FROM gen"))
          .isInstanceOf(NodeUnavailableException.class)
          .hasMessageContaining("epoch " + second.epoch())
          .satisfies(e -> assertThat(((NodeUnavailableException) e).reason()).isEqualTo(NodeUnavailableException.Reason.FENCED));
      // and from then on answers every statement so, SELECT included
      assertThatThrownBy(() -> first.sql("SELECT * FROM gen")).isInstanceOf(NodeUnavailableException.class)
          .hasMessageContaining("epoch " + second.epoch());
      assertThat(first.health().ready()).isFalse();
      assertThat(first.health().why()).contains("fenced");
    } finally {
      first.close();
    }
  }
}
