package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.node.Node;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

/**
 * SUBSCRIBE against a serving node, in each form a client meets it — a streamed HTTP response of
 * newline-delimited JSON, pgwire's {@code COPY (SUBSCRIBE …) TO STDOUT} read row by row through
 * pgjdbc, and psql's {@code DECLARE … CURSOR FOR SUBSCRIBE} with {@code FETCH} — each subscribing
 * while the generator is still writing (upserts and deletes), adding up the snapshot and every
 * change, and comparing what it adds up to with the naive oracle over the generator's records: no
 * change missing, none twice, ticks in order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SubscribeIT {
  private static final long KEYS = 300;
  private static final long CATEGORIES = 7;
  private static final long SEED = 11;
  private static final long LIMIT = 30_000;
  private static final double RATE = 6_000;
  private static final ObjectMapper JSON = new ObjectMapper();
  private Node node;

  private CairnConfig start(Path dir, String... extraYaml) {
    Path yaml = Http.config(dir, "0 0 0 * * ?", List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + KEYS + ", categories = " + CATEGORIES + ", seed = " + SEED + ", limit = " + LIMIT
            + ", rate = " + (long) RATE + ")",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category",
        "CREATE SOURCE fast FROM LOAD GENERATOR (keys = 1000000, seed = 3, rate = 20000)"), extraYaml);
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    node = Node.recover(cfg, Node.Options.defaults());
    node.serve();
    return cfg;
  }

  @AfterEach
  void stop() {
    if (node != null) {
      node.close();
    }
  }

  /** by_cat after every record of the generator: category → [n, total]. */
  private static Map<Long, List<Long>> oracle() {
    var s = new LoadGeneratorConnector.Settings(KEYS, CATEGORIES, SEED, 10, LIMIT, RATE);
    Map<Long, Row> table = new HashMap<>();
    for (long i = 0; i < LIMIT; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        table.remove(r.id());
      } else {
        table.put(r.id(), r.row());
      }
    }
    Map<Long, List<Long>> out = new TreeMap<>();
    table.values().forEach(r -> {
      List<Long> a = out.getOrDefault(r.getLong(1), List.of(0L, 0L));
      out.put(r.getLong(1), List.of(a.get(0) + 1, a.get(1) + r.getLong(2)));
    });
    return out;
  }

  /** Adds up changes to by_cat (row → multiplicity), checking ticks never go back and multiplicities never below 0. */
  private static final class Tally {
    final Map<List<Long>, Long> rows = new HashMap<>();
    long lastTick = -1;
    long changes;
    long progress;
    long retractions;

    void change(long tick, long diff, long category, long n, long total) {
      assertThat(tick).as("ticks in order").isGreaterThanOrEqualTo(lastTick);
      lastTick = tick;
      changes++;
      retractions += diff < 0 ? 1 : 0;
      List<Long> row = List.of(category, n, total);
      long m = rows.getOrDefault(row, 0L) + diff;
      assertThat(m).as("multiplicity of %s at tick %d", row, tick).isNotNegative();
      if (m == 0) {
        rows.remove(row);
      } else {
        rows.put(row, m);
      }
    }

    void progressed(long tick) {
      assertThat(tick).as("a progress row after its tick's changes").isGreaterThanOrEqualTo(lastTick);
      lastTick = tick;
      progress++;
    }

    /** The view as added up: category → [n, total]; each row once. */
    Map<Long, List<Long>> view() {
      Map<Long, List<Long>> out = new TreeMap<>();
      rows.forEach((row, m) -> {
        assertThat(m).as("row %s", row).isEqualTo(1L);
        assertThat(out.put(row.get(0), List.of(row.get(1), row.get(2)))).as("one row per category").isNull();
      });
      return out;
    }
  }

  /** by_cat as a SELECT over HTTP answers it now. */
  private static Map<Long, List<Long>> selected(int port) throws Exception {
    Http.Response r = Http.post(port, "/sql?format=json", "SELECT category, n, total FROM by_cat");
    Map<Long, List<Long>> out = new TreeMap<>();
    if (r.code() == 200) {
      r.json().get(0).path("rows").forEach(row -> out.put(row.get(0).asLong(), List.of(row.get(1).asLong(), row.get(2).asLong())));
    }
    return out;
  }

  @Test
  void anHttpSubscriberAddsUpToTheOracle(@TempDir Path dir) throws Exception {
    CairnConfig cfg = start(dir);
    Map<Long, List<Long>> oracle = oracle();
    HttpClient client = HttpClient.newHttpClient();
    HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cfg.httpPort() + "/sql"))
        .POST(HttpRequest.BodyPublishers.ofString("SUBSCRIBE TO by_cat WITH (PROGRESS = true)")).build();
    HttpResponse<Stream<String>> res = client.send(req, HttpResponse.BodyHandlers.ofLines());
    assertThat(res.statusCode()).isEqualTo(200);
    assertThat(res.headers().firstValue("content-type")).hasValue("application/x-ndjson");
    Tally t = new Tally();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    try (Stream<String> lines = res.body()) {
      Iterator<String> it = lines.iterator();
      // a tick's changes are whole at its progress row: the added-up view is checked there
      boolean done = false;
      while (!done) {
        assertThat(System.nanoTime()).as("the subscription adds up to the oracle within 90 s: %s", t.rows).isLessThan(deadline);
        JsonNode line = JSON.readTree(it.next());
        if (line.path("progressed").asBoolean()) {
          t.progressed(line.path("tick").asLong());
          done = t.changes > 0 && t.view().equals(oracle);
          if (done) {
            // status and metrics count the subscription while it streams
            assertThat(Http.get(cfg.httpPort(), "/status").json().path("dataflows").path("by_cat").path("subscribers").asInt()).isEqualTo(1);
            assertThat(Http.get(cfg.httpPort(), "/metrics").body()).contains("cairn_subscriptions 1.0");
          }
        } else {
          JsonNode row = line.path("row");
          t.change(line.path("tick").asLong(), line.path("diff").asLong(), row.path("category").asLong(), row.path("n").asLong(),
              row.path("total").asLong());
        }
      }
    }
    assertThat(t.view()).isEqualTo(oracle);
    assertThat(t.retractions).as("changes retract what they replace").isPositive();
    assertThat(t.progress).as("progress rows").isPositive();
  }

  /** Reads one HTTP subscription's lines into {@code t} until {@code until} holds at a progress row; returns the first tick seen. */
  private static long read(Iterator<String> it, Tally t, java.util.function.Predicate<Tally> until, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    long first = -1;
    while (true) {
      assertThat(System.nanoTime()).as("%s within 90 s: %s", what, t.rows).isLessThan(deadline);
      JsonNode line = JSON.readTree(it.next());
      long tick = line.path("tick").asLong();
      first = first < 0 ? tick : first;
      if (line.path("progressed").asBoolean()) {
        t.progressed(tick);
        if (until.test(t)) {
          return first;
        }
      } else {
        JsonNode row = line.path("row");
        t.change(tick, line.path("diff").asLong(), row.path("category").asLong(), row.path("n").asLong(), row.path("total").asLong());
      }
    }
  }

  /**
   * What a subscriber can rely on across a restart (README, "SUBSCRIBE"): its stream ends with the
   * node; when it subscribes again, the first rows are the whole view at the new node's tick — a
   * tick numbered from the recovered snapshot's, so it may be lower than the last tick it saw — and
   * replacing its copy with them and adding up what follows gives the oracle.
   */
  @Test
  void aSubscriberThatReconnectsAfterARestartReplacesItsCopyAndAddsUpToTheOracle(@TempDir Path dir) throws Exception {
    CairnConfig cfg = start(dir);
    Map<Long, List<Long>> oracle = oracle();
    HttpClient client = HttpClient.newHttpClient();
    HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cfg.httpPort() + "/sql"))
        .POST(HttpRequest.BodyPublishers.ofString("SUBSCRIBE by_cat WITH (PROGRESS = true)")).build();
    Tally before = new Tally();
    try (Stream<String> lines = client.send(req, HttpResponse.BodyHandlers.ofLines()).body()) {
      Iterator<String> it = lines.iterator();
      read(it, before, t -> t.progress >= 5, "five ticks before the snapshot");
      node.snapshotNow();
      read(it, before, t -> t.progress >= 15, "ten ticks after the snapshot");
      node.close(); // the restart: the stream ends with the node
      node = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      boolean ended = false;
      while (!ended && System.nanoTime() < deadline) {
        try {
          ended = !it.hasNext() || it.next() == null;
        } catch (RuntimeException closed) {
          ended = true;
        }
      }
      assertThat(ended).as("the stream ends when the node stops").isTrue();
    }
    long lastTickSeen = before.lastTick;
    node = Node.recover(cfg, Node.Options.defaults());
    node.serve();
    Tally after = new Tally(); // the copy is replaced, not added to
    try (Stream<String> lines = client.send(req, HttpResponse.BodyHandlers.ofLines()).body()) {
      long first = read(lines.iterator(), after, t -> t.changes > 0 && t.view().equals(oracle), "the reconnected subscription adds up to the oracle");
      System.out.println("SUBSCRIBE-RECONNECT last tick before the restart " + lastTickSeen + ", first tick after " + first);
    }
    assertThat(after.view()).isEqualTo(oracle);
  }

  @Test
  void aCopyOverPgwireAddsUpToTheOracleAndEndsOnCancel(@TempDir Path dir) throws Exception {
    start(dir);
    Map<Long, List<Long>> oracle = oracle();
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + node.pgwirePort() + "/cairn?user=cairn")) {
      CopyOut copy = c.unwrap(PGConnection.class).getCopyAPI().copyOut("COPY (SUBSCRIBE by_cat WITH (PROGRESS)) TO STDOUT");
      assertThat(copy.getFieldCount()).as("tick, progressed, diff, category, n, total").isEqualTo(6);
      Tally t = new Tally();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      boolean done = false;
      while (!done) {
        assertThat(System.nanoTime()).as("COPY adds up to the oracle within 90 s: %s", t.rows).isLessThan(deadline);
        String[] f = new String(copy.readFromCopy(), StandardCharsets.UTF_8).stripTrailing().split("\t", -1);
        assertThat(f).hasSize(6);
        if (f[1].equals("t")) {
          assertThat(f[2]).as("a progress row has no diff").isEqualTo("\\N");
          t.progressed(Long.parseLong(f[0]));
          done = t.changes > 0 && t.view().equals(oracle);
        } else {
          t.change(Long.parseLong(f[0]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]));
        }
      }
      assertThat(node.engine().subscribers("by_cat")).as("the COPY's subscription").isEqualTo(1);
      // a cancel ends the stream (57014, as PostgreSQL ends a COPY) and its subscription
      copy.cancelCopy();
      long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (node.engine().subscribers("by_cat") > 0) {
        assertThat(System.nanoTime()).as("the cancelled COPY's subscription is closed").isLessThan(gone);
        Thread.sleep(20);
      }
    }
    // (pgjdbc leaves a cancelled COPY's last answers unread on its connection: a new one reads the view)
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + node.pgwirePort() + "/cairn?user=cairn");
        var st = c.createStatement(); var rs = st.executeQuery("SELECT category, n, total FROM by_cat")) {
      // a SUBSCRIBE sent as a prepared query cannot stream: the error says which forms do
      try (var ps = c.prepareStatement("SUBSCRIBE by_cat")) {
        ps.executeQuery();
        throw new AssertionError("a prepared SUBSCRIBE answered");
      } catch (java.sql.SQLException e) {
        assertThat(e.getSQLState()).isEqualTo("0A000");
        assertThat(e.getMessage()).contains("COPY (SUBSCRIBE ...) TO STDOUT");
      }
      Map<Long, List<Long>> got = new TreeMap<>();
      while (rs.next()) {
        got.put(rs.getLong(1), List.of(rs.getLong(2), rs.getLong(3)));
      }
      assertThat(got).isEqualTo(oracle);
    }
  }

  @Test
  void psqlFetchesFromASubscribeCursor(@TempDir Path dir) throws Exception {
    CairnConfig cfg = start(dir);
    Map<Long, List<Long>> oracle = oracle();
    // once the generator is done, a cursor's first FETCH ALL holds the snapshot: the oracle
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!selected(cfg.httpPort()).equals(oracle)) {
      assertThat(System.nanoTime()).as("the generator is done within 60 s").isLessThan(deadline);
      Thread.sleep(200);
    }
    PgWireIT.Run run = PgWireIT.psql(node.pgwirePort(), null,
        "BEGIN; DECLARE c CURSOR FOR SUBSCRIBE by_cat; FETCH ALL c WITH (TIMEOUT = '5s'); FETCH ALL c WITH (TIMEOUT = '0s'); COMMIT;");
    assertThat(run.exit()).as(run.err()).isZero();
    Tally t = new Tally();
    for (String line : run.out().strip().split("\n")) {
      if (!line.contains("|")) {
        continue; // psql prints BEGIN, DECLARE CURSOR and COMMIT too
      }
      String[] f = line.split("\\|");
      t.change(Long.parseLong(f[0]), Long.parseLong(f[2]), Long.parseLong(f[3]), Long.parseLong(f[4]), Long.parseLong(f[5]));
    }
    assertThat(t.view()).isEqualTo(oracle);
    // the same through pgjdbc, whose statements are prepared (the extended protocol) by default
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + node.pgwirePort() + "/cairn?user=cairn")) {
      c.setAutoCommit(false);
      try (var st = c.createStatement()) {
        st.execute("DECLARE c CURSOR FOR SUBSCRIBE by_cat");
        Tally j = new Tally();
        for (int round = 0; round < 8; round++) { // from the fifth alike, pgjdbc prepares the FETCH server-side (prepareThreshold)
          try (var rs = st.executeQuery("FETCH ALL c WITH (TIMEOUT = '" + (round == 0 ? "5s" : "0s") + "')")) {
            assertThat(rs.getMetaData().getColumnName(1)).isEqualTo("tick");
            assertThat(rs.getMetaData().getColumnCount()).isEqualTo(6);
            while (rs.next()) {
              j.change(rs.getLong(1), rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getLong(6));
            }
          }
        }
        assertThat(j.view()).as("FETCH through pgjdbc").isEqualTo(oracle);
        st.execute("CLOSE c");
      }
      c.commit();
    }
    // outside a transaction block, and for anything but SUBSCRIBE, DECLARE is refused with PostgreSQL's codes
    PgWireIT.Run outside = PgWireIT.psql(node.pgwirePort(), null, "DECLARE c CURSOR FOR SUBSCRIBE by_cat");
    assertThat(outside.exit()).isNotZero();
    assertThat(outside.err()).contains("can only be used in transaction blocks");
    PgWireIT.Run unknown = PgWireIT.psql(node.pgwirePort(), null, "SUBSCRIBE nope");
    assertThat(unknown.err()).contains("unknown view 'nope'");
  }

  @Test
  void aSubscriberThatStopsReadingIsEndedAndNothingElseWaits(@TempDir Path dir) throws Exception {
    CairnConfig cfg = start(dir, "sql:\n  subscribe-max-rows: 2000\n");
    // a client that sends SUBSCRIBE and never reads what comes back
    try (java.net.Socket stuck = new java.net.Socket("127.0.0.1", cfg.httpPort())) {
      String body = "SUBSCRIBE fast WITH (SNAPSHOT = false)";
      stuck.getOutputStream().write(("POST /sql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
          .getBytes(StandardCharsets.US_ASCII));
      stuck.getOutputStream().flush();
      // and one that reads
      HttpClient client = HttpClient.newHttpClient();
      HttpResponse<Stream<String>> reading = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cfg.httpPort() + "/sql"))
          .POST(HttpRequest.BodyPublishers.ofString("SUBSCRIBE by_cat WITH (PROGRESS)")).build(), HttpResponse.BodyHandlers.ofLines());
      Iterator<String> lines = reading.body().iterator();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (node.engine().subscribers("fast") != 1) {
        assertThat(System.nanoTime()).as("the stuck client's subscription starts").isLessThan(deadline);
        Thread.sleep(20);
      }
      long tickAtStart = node.engine().lastClosedTick();
      long t0 = System.nanoTime();
      long linesRead = 0;
      while (node.engine().subscribers("fast") > 0) {
        assertThat(System.nanoTime()).as("the stuck subscriber is ended within 60 s").isLessThan(deadline);
        lines.next(); // the reading subscriber keeps getting its rows meanwhile
        linesRead++;
      }
      System.out.printf("stuck subscriber ended after %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      assertThat(node.engine().lastClosedTick()).as("the engine ticked on").isGreaterThan(tickAtStart + 5);
      for (int i = 0; i < 20; i++) {
        lines.next();
        linesRead++;
      }
      assertThat(linesRead).isGreaterThan(20);
      assertThat(node.engine().subscribers("by_cat")).as("the reading subscriber is still there").isEqualTo(1);
      // what the stuck client finds when it reads at last: its rows up to the bound, then why it was ended
      stuck.setSoTimeout(30_000);
      long t1 = System.nanoTime();
      String all = new String(stuck.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      System.out.printf("read %d bytes in %d ms%n", all.length(), (System.nanoTime() - t1) / 1_000_000);
      assertThat(all).startsWith("HTTP/1.1 200 OK");
      assertThat(all).contains("\"sqlstate\":\"53400\"").contains("fell behind").contains("the bound is 2000 rows");
    }
  }
}
