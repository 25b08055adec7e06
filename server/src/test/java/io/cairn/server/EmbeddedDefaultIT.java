package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Process node = start(dir, port, "run.log", "run");
    try {
      HttpClient http = HttpClient.newHttpClient();
      String status = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline && status == null) {
        try {
          // HTTP answers from the first second; the node serves once /health/ready says 200
          if (http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready")).build(),
              HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
            status = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
          } else {
            Thread.sleep(200);
          }
        } catch (java.io.IOException notYet) {
          Thread.sleep(200);
        }
      }
      assertThat(status).as("node log: %s", log(dir, "run.log")).contains("revenue_by_category").contains("RUNNING");
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
      node.destroyForcibly();
      node.waitFor(10, TimeUnit.SECONDS);
    }
    Process recover = start(dir, port, "recover.log", "recover", "--until-caught-up");
    assertThat(recover.waitFor(120, TimeUnit.SECONDS)).isTrue();
    String out = log(dir, "recover.log");
    assertThat(recover.exitValue()).as(out).isZero();
    assertThat(out).contains("cairn recovery report").doesNotContain("full replay").containsPattern("catch-up: .* tick\\(s\\): reading the sources");
  }

  private static String post(HttpClient http, int port, String path, String body) throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  private static Process start(Path dir, int port, String logName, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m",
        "-cp", System.getProperty("java.class.path"), "io.cairn.server.cli.CairnCommand"));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(dir.resolve(logName).toFile());
    pb.environment().put("CAIRN_HTTP_PORT", Integer.toString(port));
    pb.environment().put("CAIRN_PGWIRE_PORT", "0"); // not the default 6875: other builds may be running
    return pb.start();
  }

  private static String log(Path dir, String name) throws Exception {
    Path f = dir.resolve(name);
    return Files.exists(f) ? Files.readString(f) : "";
  }
}
