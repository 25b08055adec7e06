package io.cairn.benchmarks.pgwire;

import io.cairn.node.config.CairnConfig;
import io.cairn.node.Node;
import io.cairn.testkit.FreePort;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One client, one connection, one query at a time: the latency of a SELECT over the PostgreSQL
 * wire protocol (pgjdbc, simple statement and prepared statement) against the same SELECT over
 * HTTP ({@code POST /sql?format=csv}, JDK HttpClient, keep-alive), on a node whose sources have
 * caught up (nothing ingesting). A timing loop, not JMH: figures are indicative.
 *
 * <p>Run: {@code mvn -B -q -pl benchmarks -am package -DskipTests} then {@code java -cp
 * "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*"
 * io.cairn.benchmarks.pgwire.PgWireVsHttpBenchmark [iterations]}.
 */
public final class PgWireVsHttpBenchmark {
  /**
   * The tick's max duration ({@code -Dtick.millis}, default 2). A one-shot SELECT reads between
   * ticks: with 100 ms ticks every read, over either protocol, waited about 100 ms (p50); a short
   * tick makes the protocols' own cost visible.
   */
  static final long TICK_MILLIS = Long.getLong("tick.millis", 2);

  private PgWireVsHttpBenchmark() {}

  public static void main(String[] args) throws Exception {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    Path dir = Files.createTempDirectory("pgwire-bench");
    String uri = dir.toAbsolutePath().toUri().toString().replaceFirst("^file:/+", "file:///") + "?create=true";
    List<String> init = List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 1000, categories = 20, seed = 1, limit = 20000, delete-percent = 0)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category");
    CairnConfig cfg = new CairnConfig(uri, Map.of(), 2, 50_000, Duration.ofMillis(TICK_MILLIS), "0 0 0 * * ?", ZoneId.of("UTC"), 10, 30,
        Duration.ofHours(1), "127.0.0.1", FreePort.onLoopback(), 0, init, 1 << 20, io.cairn.engine.runtime.RestartStrategy.DEFAULT,
        "127.0.0.1", FreePort.onLoopback(), 64);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.serve();
      System.out.printf(Locale.ROOT, "cairn pgwire vs HTTP, %d iterations each, one client, tick max-duration %d ms; Java %s, %d cores%n",
          iterations, TICK_MILLIS, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
      System.out.printf(Locale.ROOT, "%-44s %10s %10s %10s %10s%n", "query / path", "p50 µs", "p99 µs", "mean µs", "q/s");
      HttpClient http = HttpClient.newHttpClient();
      String url = "jdbc:postgresql://127.0.0.1:" + node.pgwirePort() + "/cairn?user=cairn";
      try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
          PreparedStatement ps = c.prepareStatement("SELECT * FROM gen WHERE id = ?")) {
        for (String q : List.of("SELECT * FROM by_cat", "SELECT * FROM gen WHERE id = 7", "SELECT * FROM gen")) {
          report(q + " / pgwire", iterations, () -> {
            int n = 0;
            try (ResultSet rs = s.executeQuery(q)) {
              while (rs.next()) {
                rs.getObject(1);
                n++;
              }
            }
            return n;
          });
          report(q + " / http", iterations, () -> {
            HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort() + "/sql?format=csv"))
                    .POST(HttpRequest.BodyPublishers.ofString(q)).build(),
                HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
              throw new IllegalStateException(r.body());
            }
            return (int) r.body().lines().count() - 1;
          });
        }
        long[] id = {0};
        report("SELECT * FROM gen WHERE id = ? / pgwire prepared", iterations, () -> {
          ps.setLong(1, id[0]++ % 1000);
          int n = 0;
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              n++;
            }
          }
          return n;
        });
      }
    }
  }

  interface Op {
    int run() throws Exception;
  }

  private static void report(String name, int iterations, Op op) throws Exception {
    for (int i = 0; i < Math.max(200, iterations / 5); i++) {
      op.run(); // warm-up
    }
    long[] t = new long[iterations];
    long t0 = System.nanoTime();
    for (int i = 0; i < iterations; i++) {
      long a = System.nanoTime();
      op.run();
      t[i] = System.nanoTime() - a;
    }
    long total = System.nanoTime() - t0;
    Arrays.sort(t);
    System.out.printf(Locale.ROOT, "%-44s %10.0f %10.0f %10.0f %10.0f%n", name, t[iterations / 2] / 1e3,
        t[(int) (iterations * 0.99)] / 1e3, total / 1e3 / iterations, iterations / (total / 1e9));
  }
}
