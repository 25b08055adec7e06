package io.cairn.recovery.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP endpoint (JDK HttpServer; binds 127.0.0.1 unless configured otherwise):
 * {@code POST /sql} (body: statements), {@code GET /status}, {@code POST /snapshot}, {@code GET
 * /metrics} (Prometheus), {@code GET /recovery}. Errors are 400 with the message as body.
 */
public final class HttpEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);
  private final HttpServer server;

  public HttpEndpoint(String host, int port, NodeApi api) {
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 16);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start HTTP endpoint on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    server.setExecutor(Executors.newFixedThreadPool(8, r -> {
      Thread t = new Thread(r, "cairn-http");
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/sql", ex -> handle(ex, "POST", () -> api.sql(body(ex)), "text/plain"));
    server.createContext("/status", ex -> handle(ex, "GET", api::statusJson, "application/json"));
    server.createContext("/snapshot", ex -> handle(ex, "POST", api::snapshotJson, "application/json"));
    server.createContext("/metrics", ex -> handle(ex, "GET", api::prometheus, "text/plain; version=0.0.4"));
    server.createContext("/recovery", ex -> handle(ex, "GET", api::recoveryReportJson, "application/json"));
    server.start();
    LOG.info("HTTP endpoint listening on http://{}:{}", host, port());
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static String body(HttpExchange ex) {
    try {
      return new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void handle(HttpExchange ex, String method, Supplier<String> action, String type) throws IOException {
    int code;
    String body;
    if (!ex.getRequestMethod().equalsIgnoreCase(method)) {
      code = 405;
      body = "Use " + method + " for " + ex.getRequestURI().getPath() + "\n";
    } else {
      try {
        body = action.get();
        code = 200;
      } catch (IllegalArgumentException | IllegalStateException e) {
        code = 400;
        body = e.getMessage() + "\n";
      } catch (RuntimeException e) {
        LOG.warn("HTTP {} failed", ex.getRequestURI(), e);
        code = 500;
        body = e.getClass().getSimpleName() + ": " + e.getMessage() + "\n";
      }
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", code == 200 ? type : "text/plain");
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
