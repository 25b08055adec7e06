package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code cairn run} with no configuration at all, in a fresh directory: the embedded default
 * (local store in ./cairn-data, a load generator, an example view) comes up and answers SQL over
 * HTTP; after kill -9, {@code cairn recover --until-caught-up} recovers from the snapshot taken.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // measured 6 s
class EmbeddedDefaultIT {
  @Test
  void runWithNoConfigThenKillAndRecover(@TempDir Path dir) throws Exception {
    int port = Http.freePort();
    ChildNode node = start(dir, port, "run.log", "run");
    try {
      HttpClient http = HttpClient.newHttpClient();
      // HTTP answers from the first second; the node serves once /health/ready says 200
      node.awaitReady(port, Duration.ofSeconds(60), "cairn run with no configuration");
      String status = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertThat(status).as("node log: %s", node.logText()).contains("revenue_by_category").contains("RUNNING");
      String rows = post(http, port, "/sql", "SELECT * FROM revenue_by_category");
      assertThat(rows).contains("category").contains("revenue");
      String snap = post(http, port, "/snapshot", "");
      assertThat(snap).contains("snapshotId");
      assertThat(Files.isDirectory(dir.resolve("cairn-data").resolve("snapshots"))).isTrue();
      String metrics = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
          HttpResponse.BodyHandlers.ofString()).body();
      assertThat(metrics).contains("cairn_ticks");
      // the load generator has been read and computed by now: both sums are above zero
      assertThat(metrics).containsPattern("cairn_tick_reading_seconds_total [0-9.eE-]*[1-9]")
          .containsPattern("cairn_tick_computing_seconds_total [0-9.eE-]*[1-9]");
    } finally {
      node.killAndWait();
    }
    ChildNode recover = start(dir, port, "recover.log", "recover", "--until-caught-up");
    assertThat(recover.waitFor(Duration.ofSeconds(120))).isTrue();
    String out = recover.logText();
    assertThat(recover.exitValue()).as(out).isZero();
    assertThat(out).contains("cairn recovery report").doesNotContain("full replay").containsPattern("catch-up: .* tick\\(s\\): reading the sources");
  }

  private static String post(HttpClient http, int port, String path, String body) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  /** {@code cairn <args>} in a child JVM in {@code dir}, HTTP on {@code port}, pgwire on an ephemeral port. */
  private static ChildNode start(Path dir, int port, String logName, String... args) throws Exception {
    // pgwire not on the default 6875: other builds may be running
    return ChildNode.command(args).jvmOptions("-Xmx512m").directory(dir).env("CAIRN_HTTP_PORT", Integer.toString(port))
        .env("CAIRN_PGWIRE_PORT", "0").start(dir.resolve(logName));
  }
}
