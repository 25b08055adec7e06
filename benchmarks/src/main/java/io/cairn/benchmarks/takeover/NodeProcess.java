package io.cairn.benchmarks.takeover;

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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code cairn run --config <yaml>} in a child JVM, as an operator starts it, with a small HTTP
 * client for its endpoint on 127.0.0.1. Output (standard output and error) goes to a log file.
 *
 * <p>One thread starts and stops a node. Every request is bounded ({@link #REQUEST_TIMEOUT}); a
 * request to a node that is not listening throws {@link UncheckedIOException}. {@link #kill()} is
 * kill -9 and waits for the JVM to exit, so the caller's clock starts at the kill, not at the exit.
 */
public final class NodeProcess implements AutoCloseable {
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final int TAIL_LINES = 30;

  private final String name;
  private final Process process;
  private final int port;
  private final Path log;
  private final long startedNanos;

  private NodeProcess(String name, Process process, int port, Path log, long startedNanos) {
    this.name = name;
    this.process = process;
    this.port = port;
    this.log = log;
    this.startedNanos = startedNanos;
  }

  /** A response: status code and body. */
  public record Response(int code, String body) {
    JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot parse the node's answer as JSON: " + body, e);
      }
    }
  }

  /**
   * Starts {@code cairn run --config config} in a child JVM with HTTP on {@code port}, pgwire on a
   * free port, {@code jvmOptions} before the class path and its log in {@code dir/<name>.log}.
   */
  static NodeProcess start(String name, Path config, int port, String classPath, List<String> jvmOptions, Path dir) throws IOException {
    return start(name, config, port, classPath, jvmOptions, dir, java.util.Map.of());
  }

  /** As {@link #start(String, Path, int, String, List, Path)}, with {@code env} added to the child's environment. */
  public static NodeProcess start(String name, Path config, int port, String classPath, List<String> jvmOptions, Path dir,
      java.util.Map<String, String> env) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", absolute(classPath), "io.cairn.server.cli.CairnCommand", "run", "--config", config.toString()));
    Path log = dir.resolve(name + ".log");
    Path work = Files.createDirectories(dir.resolve(name));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).directory(work.toFile());
    pb.environment().put("CAIRN_HTTP_PORT", Integer.toString(port));
    pb.environment().put("CAIRN_PGWIRE_PORT", "0");
    pb.environment().putAll(env);
    long t = System.nanoTime();
    return new NodeProcess(name, pb.start(), port, log, t);
  }

  /** The class path with every entry absolute: the node runs in its own directory. */
  static String absolute(String classPath) {
    List<String> out = new ArrayList<>();
    for (String e : classPath.split(java.io.File.pathSeparator)) {
      if (!e.isEmpty()) {
        out.add(Path.of(e).toAbsolutePath().toString());
      }
    }
    return String.join(java.io.File.pathSeparator, out);
  }

  String name() {
    return name;
  }

  /** {@link System#nanoTime()} just before the JVM was started. */
  long startedNanos() {
    return startedNanos;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Response get(String path) {
    return send(HttpRequest.newBuilder(uri(path)).GET(), REQUEST_TIMEOUT);
  }

  Response post(String path, String body) {
    return post(path, body, REQUEST_TIMEOUT);
  }

  /** A POST with its own bound (a snapshot of a large state takes longer than a query). */
  Response post(String path, String body, Duration timeout) {
    return send(HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body)), timeout);
  }

  /** {@code GET /status} as JSON, or null while the node does not answer (starting, or busy). */
  JsonNode statusOrNull() {
    try {
      Response r = get("/status");
      return r.code() == 200 ? r.json() : null;
    } catch (UncheckedIOException notListening) {
      return null;
    }
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  private static Response send(HttpRequest.Builder b, Duration timeout) {
    try {
      HttpResponse<String> r = CLIENT.send(b.timeout(timeout).build(), HttpResponse.BodyHandlers.ofString());
      return new Response(r.statusCode(), r.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while waiting for the node's answer", e);
    }
  }

  /** Throws with the tail of the log if the JVM has exited. */
  public void requireAlive(String while_) {
    if (!process.isAlive()) {
      throw new IllegalStateException("Node " + name + " exited (code " + process.exitValue() + ") " + while_ + "; its log ends:\n"
          + tail());
    }
  }

  /** kill -9 (SIGKILL), then waits up to 30 s for the JVM to exit. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The last lines of the log (or why it cannot be read). */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }

  public static int freePort() {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
