package io.cairn.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** A small HTTP client for a node's endpoint, with a bound on every request, and config files for tests. */
final class Http {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Http() {}

  /** A response: status code and body. */
  record Response(int code, String body) {
    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("not JSON: " + body, e);
      }
    }
  }

  static Response get(int port, String path) {
    return send(port, HttpRequest.newBuilder(uri(port, path)).GET());
  }

  static Response post(int port, String path, String body) {
    return send(port, HttpRequest.newBuilder(uri(port, path)).POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private static URI uri(int port, String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  private static Response send(int port, HttpRequest.Builder b) {
    try {
      HttpResponse<String> r = CLIENT.send(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A free port of 127.0.0.1 outside the kernel's range for outgoing connections (see {@link io.cairn.testkit.FreePort}). */
  static int freePort() {
    return io.cairn.testkit.FreePort.onLoopback();
  }

  /** Writes a cairn.yaml with a local store under {@code dir}, free HTTP and pgwire ports and {@code init}. */
  static Path config(Path dir, String cron, List<String> init, String... extraYaml) {
    StringBuilder y = new StringBuilder();
    y.append("store:\n  uri: \"file://").append(dir.resolve("store")).append("?create=true\"\n");
    y.append("engine:\n  workers: 2\n  tick:\n    max-records: 5000\n    max-duration: 50ms\n");
    y.append("snapshots:\n  cron: \"").append(cron).append("\"\n");
    y.append("http:\n  port: ").append(freePort()).append('\n');
    y.append("pgwire:\n  port: ").append(freePort()).append('\n'); // never the default 6875: nodes run side by side
    y.append("sources:\n  restart:\n    initial-backoff: 200ms\n    max-backoff: 2s\n");
    for (String e : extraYaml) {
      y.append(e).append('\n');
    }
    y.append("init:\n");
    for (String s : init) {
      y.append("  - \"").append(s.replace("\"", "\\\"")).append("\"\n");
    }
    try {
      Path f = dir.resolve("cairn.yaml");
      Files.writeString(f, y.toString());
      return f;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
