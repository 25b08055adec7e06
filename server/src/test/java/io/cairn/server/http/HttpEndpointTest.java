package io.cairn.server.http;

import io.cairn.node.NodeApi;
import io.cairn.node.NodeUnavailableException;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.sql.StatementBudget;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HTTP endpoint's bounds against a node stand-in: slow clients never starve status, a client
 * that disconnects cancels its statement, cheap refusals never wait behind busy SQL threads, a
 * node that cannot serve answers 503 and a statement out of time 504, and connections beyond the
 * limit push out the longest-stalled one.
 */
class HttpEndpointTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** A node stand-in whose SQL is {@code sql}. */
  static NodeApi api(Function<StatementBudget, String> sql) {
    return new NodeApi() {
      @Override
      public java.util.List<io.cairn.engine.sql.Result> execute(java.util.List<String> statements, StatementBudget budget) {
        if (statements.get(0).startsWith("fenced")) {
          throw new NodeUnavailableException(NodeUnavailableException.Reason.FENCED, "Cannot run statements: fenced by epoch 7");
        }
        return java.util.List.of(io.cairn.engine.sql.Result.message(sql.apply(budget)));
      }

      @Override
      public io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement) {
        throw new io.cairn.engine.sql.SqlException("Cannot subscribe: unknown view '" + statement.name() + "'");
      }

      @Override
      public long catalogPosition() {
        return 0;
      }

      @Override
      public java.util.List<io.cairn.engine.dataflow.Dataflow> dataflows() {
        return java.util.List.of();
      }

      @Override
      public Duration statementTimeout() {
        return Duration.ofSeconds(30);
      }

      @Override
      public String statusJson() {
        return "{\"state\": \"SERVING\"}";
      }

      @Override
      public String snapshotJson() {
        return "{}";
      }

      @Override
      public String prometheus() {
        return "";
      }

      @Override
      public String recoveryReportJson() {
        throw new NodeUnavailableException(NodeUnavailableException.Reason.NOT_READY, "not ready: recovering");
      }

      @Override
      public Health health() {
        return new Health(true, false, "RECOVERING", "recovering for 10 ms");
      }
    };
  }

  static HttpResponse<String> get(int port, String path) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10)).GET()
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(int port, String path, String body) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void slowHeaderClientsDoNotStarveStatus() throws Exception {
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, api(b -> "ok"))) {
      List<Socket> slow = new ArrayList<>();
      try {
        for (int i = 0; i < 300; i++) {
          Socket s = new Socket();
          s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
          s.getOutputStream().write('P'); // the first byte of a request whose rest never comes
          slow.add(s);
        }
        // the JDK server this replaced, with 8 threads and no header timeout, stopped answering here
        for (int i = 0; i < 20; i++) {
          long t0 = System.nanoTime();
          HttpResponse<String> r = get(http.port(), "/status");
          assertThat(r.statusCode()).isEqualTo(200);
          assertThat((System.nanoTime() - t0) / 1_000_000).as("status latency ms with 300 slow clients").isLessThan(2_000);
        }
        assertThat(http.openConnections()).isGreaterThanOrEqualTo(300);
      } finally {
        for (Socket s : slow) {
          s.close();
        }
      }
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aRequestThatDoesNotArriveInTimeIsClosed() throws Exception {
    HttpEndpoint.Limits limits = new HttpEndpoint.Limits(1 << 20, 100, Duration.ofMillis(500), Duration.ofSeconds(30), 2, 2);
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, limits, api(b -> "ok")); Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
      s.setSoTimeout(5000);
      s.getOutputStream().write("GET /sta".getBytes(StandardCharsets.US_ASCII));
      long t0 = System.nanoTime();
      assertThat(s.getInputStream().read()).as("closed by the node").isEqualTo(-1);
      assertThat((System.nanoTime() - t0) / 1_000_000).isBetween(300L, 3_000L);
      assertThat(http.counters().get("requestTimeouts")).isEqualTo(1);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aClientThatDisconnectsCancelsItsStatement() throws Exception {
    AtomicReference<StatementBudget> seen = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch stopped = new CountDownLatch(1);
    NodeApi api = api(budget -> {
      seen.set(budget);
      started.countDown();
      try {
        while (true) {
          budget.check();
          Thread.onSpinWait();
        }
      } finally {
        stopped.countDown();
      }
    });
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, api)) {
      Socket s = new Socket();
      s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
      s.getOutputStream().write("POST /sql HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\nSELECT 1".getBytes(StandardCharsets.US_ASCII));
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      long t0 = System.nanoTime();
      s.close();
      assertThat(stopped.await(5, TimeUnit.SECONDS)).as("the statement stopped after its client left").isTrue();
      assertThat((System.nanoTime() - t0) / 1_000_000).as("ms from the disconnect to the thread's release").isLessThan(1_000);
      assertThat(seen.get().ended()).isTrue();
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void refusalsDoNotWaitBehindBusySqlThreads() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    HttpEndpoint.Limits limits = new HttpEndpoint.Limits(1 << 20, 100, Duration.ofSeconds(10), Duration.ofSeconds(30), 2, 1);
    NodeApi api = api(budget -> {
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return "done";
    });
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, limits, api)) {
      List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> busy = new ArrayList<>();
      for (int i = 0; i < 3; i++) { // two running, one waiting: the SQL threads and their queue are full
        busy.add(CLIENT.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + http.port() + "/sql"))
            .POST(HttpRequest.BodyPublishers.ofString("SELECT 1")).build(), HttpResponse.BodyHandlers.ofString()));
      }
      Thread.sleep(500);
      HttpResponse<String> full = post(http.port(), "/sql", "SELECT 2");
      assertThat(full.statusCode()).isEqualTo(503);
      assertThat(full.body()).contains("http.sql-threads");
      HttpResponse<String> deep = post(http.port(), "/sql", "SELECT " + "(".repeat(100_000) + "1" + ")".repeat(100_000));
      assertThat(deep.statusCode()).isEqualTo(400);
      assertThat(deep.body()).contains("nested more than 64 levels deep");
      assertThat(deep.headers().firstValue(HttpEndpoint.SQLSTATE_HEADER)).hasValue("54001");
      assertThat(get(http.port(), "/status").statusCode()).isEqualTo(200);
      HttpResponse<String> ready = get(http.port(), "/health/ready");
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.body()).contains("recovering for 10 ms");
      assertThat(get(http.port(), "/health/live").statusCode()).isEqualTo(200);
      assertThat(get(http.port(), "/recovery").statusCode()).isEqualTo(503);
      release.countDown();
      for (var f : busy) {
        assertThat(f.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
      }
      HttpResponse<String> fenced = post(http.port(), "/sql", "fenced");
      assertThat(fenced.statusCode()).as("a fenced node is not the client's fault").isEqualTo(503);
      assertThat(fenced.body()).contains("epoch 7");
      assertThat(fenced.headers().firstValue(HttpEndpoint.SQLSTATE_HEADER)).as("the code pgwire sends").hasValue("57P01");
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aStatementOutOfTimeIs504() throws Exception {
    NodeApi api = api(budget -> {
      StatementBudget spent = StatementBudget.of(Duration.ofNanos(1));
      while (true) {
        spent.check();
      }
    });
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, api)) {
      HttpResponse<String> r = post(http.port(), "/sql", "SELECT 1");
      assertThat(r.statusCode()).isEqualTo(504);
      assertThat(r.body()).contains("canceling statement due to statement timeout");
      assertThat(r.headers().firstValue(HttpEndpoint.SQLSTATE_HEADER)).hasValue("57014");
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void atTheLimitTheLongestStalledConnectionGivesWay() throws Exception {
    HttpEndpoint.Limits limits = new HttpEndpoint.Limits(1 << 20, 10, Duration.ofSeconds(30), Duration.ofSeconds(30), 2, 2);
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, limits, api(b -> "ok"))) {
      List<Socket> stalled = new ArrayList<>();
      try {
        for (int i = 0; i < 10; i++) {
          Socket s = new Socket();
          s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
          s.getOutputStream().write('G');
          stalled.add(s);
        }
        Thread.sleep(1_200); // stalled for over a second: they may be replaced
        for (int i = 0; i < 5; i++) { // each on a new connection, which needs a place
          try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
            s.setSoTimeout(5000);
            s.getOutputStream().write("GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 200");
          }
        }
        // each stalled connection replaced makes room; a closed status connection frees its own place
        assertThat(http.counters().get("evicted")).isBetween(1L, 5L);
        assertThat(http.counters().get("refused")).isZero();
      } finally {
        for (Socket s : stalled) {
          s.close();
        }
      }
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aHundredMegabyteBodyGets413() throws Exception {
    try (HttpEndpoint http = new HttpEndpoint("127.0.0.1", 0, api(b -> "ok"))) {
      for (boolean declared : new boolean[] {true, false}) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress("127.0.0.1", http.port()), 5000);
          s.setSoTimeout(10_000);
          OutputStream out = s.getOutputStream();
          InputStream in = s.getInputStream();
          out.write(("POST /sql HTTP/1.1\r\nHost: x\r\n" + (declared ? "Content-Length: " + (100 << 20) : "Transfer-Encoding: chunked")
              + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
          byte[] mb = new byte[1 << 20];
          try {
            for (int i = 0; i < 100 && in.available() == 0; i++) {
              if (!declared) {
                out.write((Integer.toHexString(mb.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
              }
              out.write(mb);
              if (!declared) {
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
              }
            }
          } catch (java.io.IOException closed) {
            // answered and closed
          }
          assertThat(new String(in.readNBytes(12), StandardCharsets.US_ASCII)).as("declared %s", declared).isEqualTo("HTTP/1.1 413");
        }
      }
      assertThat(get(http.port(), "/status").statusCode()).isEqualTo(200);
    }
  }
}
