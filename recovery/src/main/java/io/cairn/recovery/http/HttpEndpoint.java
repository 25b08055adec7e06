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
 * /metrics} (Prometheus), {@code GET /recovery}.
 *
 * <p>Bounds: a request body above {@code maxBodyBytes} is refused with 413 without being kept:
 * the 413 is sent at once (with {@code Connection: close}), then up to {@value
 * #MAX_SWALLOW_BYTES} bytes of what the client still sends are read and discarded before the
 * connection closes, so a client that is still sending (a 50 MB body) reliably receives the 413
 * and stops, instead of a connection reset (closing a socket with unread input makes the kernel
 * reset it and drop the response; Tomcat swallows for the same reason). Reading a request may take at most 30 s and an idle connection is closed after 30 s
 * (the JDK server's {@code sun.net.httpserver.maxReqTime} and {@code idleInterval}, set unless
 * already set); 8 handler threads, so a slow snapshot or SELECT does not hold up status polls.
 * Errors: a bad statement or request is 400 with the message (at most {@value #MAX_ERROR_CHARS}
 * characters, never the whole input echoed), anything else 500; the handler thread survives
 * every error, a {@link StackOverflowError} included.
 */
public final class HttpEndpoint implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoint.class);
  static final int MAX_ERROR_CHARS = 2000;
  /** The default request body limit: 1 MiB. */
  public static final int DEFAULT_MAX_BODY_BYTES = 1 << 20;
  /** How much of a refused body is read and discarded so that the 413 reaches the client. */
  static final int MAX_SWALLOW_BYTES = 64 << 20;
  private final HttpServer server;
  private final int maxBodyBytes;

  static {
    if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
      System.setProperty("sun.net.httpserver.maxReqTime", "30");
    }
    if (System.getProperty("sun.net.httpserver.idleInterval") == null) {
      System.setProperty("sun.net.httpserver.idleInterval", "30000");
    }
  }

  public HttpEndpoint(String host, int port, NodeApi api) {
    this(host, port, DEFAULT_MAX_BODY_BYTES, api);
  }

  public HttpEndpoint(String host, int port, int maxBodyBytes, NodeApi api) {
    this.maxBodyBytes = maxBodyBytes;
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
    server.createContext("/sql", ex -> {
      String format = queryParam(ex, "format", "table");
      handle(ex, "POST", () -> api.sql(body(ex, maxBodyBytes), format), NodeApi.sqlContentType(format));
    });
    server.createContext("/status", ex -> handle(ex, "GET", api::statusJson, "application/json"));
    server.createContext("/snapshot", ex -> handle(ex, "POST", api::snapshotJson, "application/json"));
    server.createContext("/metrics", ex -> handle(ex, "GET", api::prometheus, "text/plain; version=0.0.4"));
    server.createContext("/recovery", ex -> handle(ex, "GET", api::recoveryReportJson, "application/json"));
    server.start();
    LOG.info("HTTP endpoint listening on http://{}:{}", host, port());
  }

  /** The value of query parameter {@code name} (no decoding beyond the raw query), or {@code def}. */
  private static String queryParam(HttpExchange ex, String name, String def) {
    String q = ex.getRequestURI().getRawQuery();
    if (q == null) {
      return def;
    }
    for (String kv : q.split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0 && kv.substring(0, eq).equals(name)) {
        return java.net.URLDecoder.decode(kv.substring(eq + 1), java.nio.charset.StandardCharsets.UTF_8);
      }
    }
    return def;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** A request whose body is over the limit. */
  static final class TooLarge extends RuntimeException {
    TooLarge(String message) {
      super(message);
    }
  }

  /** Reads and discards at most {@link #MAX_SWALLOW_BYTES} of what is left of the body (a read error ends it). */
  private static void swallow(HttpExchange ex) {
    byte[] buf = new byte[64 << 10];
    long left = MAX_SWALLOW_BYTES;
    try {
      var in = ex.getRequestBody();
      while (left > 0) {
        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
        if (n < 0) {
          return;
        }
        left -= n;
      }
    } catch (IOException e) {
      // the client went away: nothing left to read
    }
  }

  private static String body(HttpExchange ex, int limit) {
    String declared = ex.getRequestHeaders().getFirst("Content-Length");
    if (declared != null) {
      try {
        if (Long.parseLong(declared.trim()) > limit) {
          throw new TooLarge("Request body of " + declared.trim() + " bytes is over the limit of " + limit
              + " bytes (http.max-body)");
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("Bad Content-Length header");
      }
    }
    try {
      byte[] bytes = ex.getRequestBody().readNBytes(limit + 1);
      if (bytes.length > limit) {
        throw new TooLarge("Request body is over the limit of " + limit + " bytes (http.max-body)");
      }
      return new String(bytes, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String clip(String message) {
    String m = message == null ? "" : message;
    return m.length() <= MAX_ERROR_CHARS ? m : m.substring(0, MAX_ERROR_CHARS) + "... (" + (m.length() - MAX_ERROR_CHARS) + " more characters)";
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
      } catch (TooLarge e) {
        code = 413;
        body = e.getMessage() + "\n";
      } catch (io.cairn.engine.sql.SqlException | IllegalArgumentException | IllegalStateException e) {
        code = 400;
        body = clip(e.getMessage()) + "\n";
      } catch (StackOverflowError e) {
        code = 400;
        body = "Cannot execute request: it is nested too deeply\n";
      } catch (RuntimeException e) {
        LOG.warn("HTTP {} failed", ex.getRequestURI(), e);
        code = 500;
        body = clip(e.getClass().getSimpleName() + ": " + e.getMessage()) + "\n";
      }
    }
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", code == 200 ? type : "text/plain");
    if (code == 413) {
      ex.getResponseHeaders().set("Connection", "close");
    }
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
      if (code == 413) {
        // the answer leaves first, so a client still sending sees it and stops; what it sent
        // meanwhile is read and discarded before the close (unread input makes the close a reset)
        out.flush();
        swallow(ex);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
