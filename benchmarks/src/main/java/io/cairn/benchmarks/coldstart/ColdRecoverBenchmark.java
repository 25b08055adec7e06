package io.cairn.benchmarks.coldstart;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * What a restart with nothing to read costs over the JVM and the store: {@code cairn recover
 * --until-caught-up} in a fresh process against {@code cairn snapshots list} on the same store,
 * alternated, for a small Kafka view and a small Postgres view.
 *
 * <p>Runs the distribution's own {@code bin/cairn} (with its class-data archive when it has one),
 * as an operator does: a node is started with {@code cairn run}, catches up, takes a snapshot and
 * is stopped; then each round runs {@code snapshots list} and {@code recover --until-caught-up
 * --json} as new processes and times them from start to exit. The difference is what recovery
 * adds to a start: catalog, snapshot load, connecting and seeking the sources, and the catch-up
 * probe of a source with nothing new.
 *
 * <pre>
 *   java -cp "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *     io.cairn.benchmarks.coldstart.ColdRecoverBenchmark [rounds=7] [only=kafka,postgres]
 * </pre>
 * System property {@code cairn.bench.dist} names the unpacked distribution (default: the one
 * {@code ./cairn} builds); {@code -Dcairn.bench.hold=true} keeps the broker and the database up
 * afterwards, until a file {@code stop} appears in the work directory, to profile a recovery by hand.
 */
public final class ColdRecoverBenchmark {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  /** The environment of every command: the Postgres password as a secret. */
  static final Map<String, String> ENV = new java.util.concurrent.ConcurrentHashMap<>();

  private ColdRecoverBenchmark() {}

  /** One timed round of one scenario. */
  record Round(long listMillis, long recoverMillis, Map<String, Long> phases, long rowsLoaded) {}

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    List<String> only = args.length > 1 ? Arrays.asList(args[1].split(",")) : List.of("kafka", "postgres");
    Path dist = Path.of(System.getProperty("cairn.bench.dist", "dist/target/cairn-0.1.0-SNAPSHOT/cairn-0.1.0-SNAPSHOT")).toAbsolutePath();
    Path bin = dist.resolve("bin/cairn");
    if (!Files.isExecutable(bin)) {
      throw new IllegalStateException("No distribution at " + dist + " (run ./cairn --version first, or set -Dcairn.bench.dist)");
    }
    System.out.println("class-data archive: " + (Files.exists(dist.resolve("lib/cairn.jsa")) ? "present" : "none"));
    Path work = Files.createTempDirectory("cairn-cold-");
    Map<String, List<Round>> results = new LinkedHashMap<>();
    try (KafkaBroker kafka = KafkaBroker.startInChildJvm(); PostgresServer pg = PostgresServer.start()) {
      if (only.contains("kafka")) {
        kafka.createTopic("orders", 3);
        List<ProducerRecord<byte[], byte[]>> recs = new ArrayList<>();
        for (int i = 0; i < 20_000; i++) {
          int id = i % 5_000;
          recs.add(new ProducerRecord<>("orders", i % 3, bytes("{\"id\":" + id + "}"),
              bytes("{\"id\":" + id + ",\"customer\":" + (i % 97) + ",\"amount\":" + i + "}")));
        }
        kafka.produceAll(recs);
        Path cfg = config(work, "kafka", List.of(
            "CREATE SOURCE orders FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = 'orders') FORMAT JSON ENVELOPE UPSERT "
                + "(id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))",
            "CREATE MATERIALIZED VIEW by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer"));
        results.put("kafka", measure(bin, work, "kafka", cfg, rounds));
      }
      if (only.contains("postgres")) {
        ENV.put("BENCH_PG_PASSWORD", pg.password());
        String db = pg.createDatabase("shop");
        try (Connection c = pg.connect(db); Statement s = c.createStatement()) {
          s.execute("CREATE TABLE items (id BIGINT PRIMARY KEY, cat BIGINT NOT NULL, amount BIGINT NOT NULL)");
          s.execute("ALTER TABLE items REPLICA IDENTITY FULL");
          s.execute("INSERT INTO items SELECT g, g % 50, g * 3 FROM generate_series(1, 10000) g");
        }
        Path cfg = config(work, "postgres", List.of(
            "CREATE SOURCE items FROM POSTGRES (host = '127.0.0.1', port = " + pg.port() + ", database = '" + db + "', user = '"
                + pg.user() + "', password = SECRET 'BENCH_PG_PASSWORD', table = 'public.items', slot = 'cairn_items', publication = 'cairn_items')",
            "CREATE MATERIALIZED VIEW by_cat AS SELECT cat, COUNT(*) AS n, SUM(amount) AS total FROM items GROUP BY cat"));
        results.put("postgres", measure(bin, work, "postgres", cfg, rounds));
      }
      if (Boolean.getBoolean("cairn.bench.hold")) { // keeps the broker and the database up, to profile a recovery by hand
        System.out.println("holding the servers until " + work.resolve("stop") + " exists; PGPASSWORD for the commands: "
            + ENV.getOrDefault("BENCH_PG_PASSWORD", "-"));
        while (!Files.exists(work.resolve("stop"))) {
          Thread.sleep(500);
        }
      }
    }
    System.out.println();
    System.out.println("| view | rounds | snapshots list (median) | recover --until-caught-up (median) | recover − list (median of rounds) | phases (median ms) |");
    System.out.println("|---|---|---|---|---|---|");
    for (Map.Entry<String, List<Round>> e : results.entrySet()) {
      List<Round> rs = e.getValue();
      long list = median(rs.stream().mapToLong(Round::listMillis).toArray());
      long rec = median(rs.stream().mapToLong(Round::recoverMillis).toArray());
      long diff = median(rs.stream().mapToLong(r -> r.recoverMillis() - r.listMillis()).toArray());
      Map<String, Long> phases = new LinkedHashMap<>();
      rs.get(0).phases().keySet().forEach(k -> phases.put(k, median(rs.stream().mapToLong(r -> r.phases().getOrDefault(k, 0L)).toArray())));
      System.out.printf(Locale.ROOT, "| %s (%,d rows) | %d | %d ms | %d ms | **%d ms** | %s |%n", e.getKey(), rs.get(0).rowsLoaded(), rs.size(),
          list, rec, diff, phases);
    }
    System.out.println("work directory (logs, stores): " + work);
  }

  static Path config(Path work, String name, List<String> init) throws IOException {
    Path dir = Files.createDirectories(work.resolve(name));
    StringBuilder y = new StringBuilder();
    y.append("store:\n  uri: file://").append(dir.resolve("store")).append('\n');
    y.append("http:\n  port: ").append(freePort()).append('\n');
    y.append("pgwire:\n  port: 0\n");
    y.append("init:\n");
    for (String s : init) {
      y.append("  - \"").append(s.replace("\\", "\\\\").replace("\"", "\\\"")).append("\"\n");
    }
    Path cfg = dir.resolve("cairn.yaml");
    Files.writeString(cfg, y.toString());
    return cfg;
  }

  private static List<Round> measure(Path bin, Path work, String name, Path cfg, int rounds) throws Exception {
    Path dir = cfg.getParent();
    snapshotOnce(bin, cfg, Map.of(), Duration.ZERO);
    run(bin, dir, List.of("recover", "-c", cfg.toString(), "--until-caught-up")); // warms the page cache, not the JVM
    List<Round> out = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      long t0 = System.nanoTime();
      run(bin, dir, List.of("snapshots", "list", "-c", cfg.toString()));
      long list = (System.nanoTime() - t0) / 1_000_000;
      long t1 = System.nanoTime();
      String report = run(bin, dir, List.of("recover", "-c", cfg.toString(), "--until-caught-up", "--json"));
      long rec = (System.nanoTime() - t1) / 1_000_000;
      JsonNode r = JSON.readTree(report.substring(report.indexOf('{')));
      Map<String, Long> phases = new LinkedHashMap<>();
      r.path("phaseMillis").fields().forEachRemaining(f -> phases.put(f.getKey(), f.getValue().asLong()));
      phases.put("catch-up", r.path("catchUpMillis").asLong());
      out.add(new Round(list, rec, phases, r.path("rowsLoaded").asLong()));
      System.out.printf(Locale.ROOT, "%s round %d: list %d ms, recover %d ms, difference %d ms, phases %s%n", name, i + 1, list, rec, rec - list, phases);
    }
    return out;
  }

  /**
   * {@code cairn run} on {@code cfg} as a child process (extra environment {@code env} beside the
   * Postgres secret), waits until every source has caught up, lets it serve for {@code idle}, asks
   * for a snapshot ({@code POST /snapshot}) and stops it with SIGTERM, as an operator does. Its log
   * is {@code node.log} beside the configuration.
   */
  static void snapshotOnce(Path bin, Path cfg, Map<String, String> env, Duration idle) throws Exception {
    Path dir = cfg.getParent();
    int port = Integer.parseInt(Files.readAllLines(cfg).stream().filter(l -> l.trim().startsWith("port:")).findFirst().orElseThrow()
        .trim().substring(5).trim());
    ProcessBuilder nb = new ProcessBuilder(bin.toString(), "run", "-c", cfg.toString()).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(dir.resolve("node.log").toFile());
    nb.environment().putAll(ENV);
    nb.environment().putAll(env);
    Process node = nb.start();
    try {
      waitCaughtUp(port, node, dir);
      Thread.sleep(idle.toMillis());
      HttpResponse<String> snap = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/snapshot"))
          .POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofMinutes(10)).build(), HttpResponse.BodyHandlers.ofString());
      if (snap.statusCode() != 200) {
        throw new IllegalStateException(cfg + ": snapshot failed: " + snap.body());
      }
    } finally {
      node.destroy(); // SIGTERM: the node stops as an operator stops it
      if (!node.waitFor(60, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
    }
  }

  static void waitCaughtUp(int port, Process node, Path dir) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      if (!node.isAlive()) {
        throw new IllegalStateException("the node exited; see " + dir.resolve("node.log"));
      }
      try {
        HttpResponse<String> s = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/status"))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        if (s.statusCode() == 200) {
          JsonNode sources = JSON.readTree(s.body()).path("sources");
          boolean all = sources.size() > 0;
          for (JsonNode src : sources) {
            all &= src.path("caughtUp").asBoolean(false);
          }
          if (all) {
            return;
          }
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("the node did not catch up in 120 s; see " + dir.resolve("node.log"));
  }

  static String run(Path bin, Path dir, List<String> args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(bin.toString());
    cmd.addAll(args);
    Path out = Files.createTempFile(dir, "cmd-", ".out");
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(false).redirectOutput(out.toFile())
        .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("commands.err").toFile()));
    pb.environment().putAll(ENV);
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", args) + " did not finish in 120 s");
    }
    String text = Files.readString(out);
    Files.delete(out);
    if (p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", args) + " exited " + p.exitValue() + ": " + text + " (see " + dir.resolve("commands.err") + ")");
    }
    return text;
  }

  static long median(long[] v) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static int freePort() throws IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
