package io.cairn.server;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code cairn} in a child JVM of the test, as an operator runs it: this JVM's {@code java} and
 * class path running {@code io.cairn.server.cli.CairnCommand} with the given arguments, standard
 * output and error together in a log file.
 *
 * <pre>{@code
 * ChildNode node = ChildNode.command("run", "--config", config.toString())
 *     .jvmOptions("-Xmx512m").env("PGPASSWORD", pg.password()).start(log);
 * try {
 *   node.awaitReady(httpPort, Duration.ofSeconds(120), "round 3");
 *   ...
 * } finally {
 *   node.killAndWait();
 * }
 * }</pre>
 *
 * <p>One test thread starts and stops a node; {@link #onExit()}, {@link #isAlive()} and the log may
 * be read from any thread. Every wait is bounded: {@link #awaitReady} by its argument, {@link
 * #killAndWait()} by {@link #EXIT_WAIT}, {@link #stop} by its grace period. A failed wait for
 * readiness is an {@link AssertionError} carrying the last answer of {@code /health/ready} and the
 * tail of the node's log.
 */
final class ChildNode {
  /** How long {@link #killAndWait()} waits for the killed JVM to exit. */
  static final Duration EXIT_WAIT = Duration.ofSeconds(10);
  private static final Duration POLL = Duration.ofMillis(100);
  private static final int TAIL_LINES = 30;

  private final Process process;
  private final Path log;

  private ChildNode(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  /** A node that will run {@code cairn <args>}; add JVM options and environment, then {@link Builder#start}. */
  static Builder command(String... args) {
    return new Builder(List.of(args));
  }

  /** How to start a child node: the JVM options, the environment, the working directory. */
  static final class Builder {
    private final List<String> args;
    private final List<String> jvmOptions = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private Path directory;

    private Builder(List<String> args) {
      this.args = args;
    }

    /** JVM options, before the class path (e.g. {@code -Xmx512m}, {@code -Dcairn.crash-at=...}). */
    Builder jvmOptions(String... options) {
      jvmOptions.addAll(List.of(options));
      return this;
    }

    /** An environment variable of the child, in addition to this JVM's environment. */
    Builder env(String name, String value) {
      env.put(name, value);
      return this;
    }

    /** The child's working directory (default: this JVM's). */
    Builder directory(Path dir) {
      this.directory = dir;
      return this;
    }

    /** Starts the child JVM, its output (standard output and error) in {@code log}. */
    ChildNode start(Path log) throws IOException {
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      cmd.addAll(jvmOptions);
      cmd.add("-cp");
      cmd.add(System.getProperty("java.class.path"));
      cmd.add("io.cairn.server.cli.CairnCommand");
      cmd.addAll(args);
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      if (directory != null) {
        pb.directory(directory.toFile());
      }
      pb.environment().putAll(env);
      return new ChildNode(pb.start(), log);
    }
  }

  /**
   * Waits until the node answers {@code GET /health/ready} on {@code port} with 200 (recovered,
   * serving, every source caught up), polling every 100 ms.
   *
   * @param who names the node or the round in the failure message
   * @throws AssertionError if the node exits first or is not ready within {@code within}, with the
   *     last answer and the tail of the log
   */
  void awaitReady(int port, Duration within, String who) throws InterruptedException {
    awaitReady(port, within, who, notReady -> {});
  }

  /**
   * As {@link #awaitReady(int, Duration, String)}, and each answer other than 200 is handed to
   * {@code whileNotReady} (which may assert on it: an {@link AssertionError} it throws ends the
   * wait). A request that fails (the node not listening yet) is not handed on.
   */
  void awaitReady(int port, Duration within, String who, Consumer<Http.Response> whileNotReady) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    String last = "no answer yet";
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new AssertionError(who + ": node exited before it was ready (code " + process.exitValue() + "), last /health/ready: "
            + last + "\n" + tail());
      }
      try {
        Http.Response r = Http.get(port, "/health/ready");
        if (r.code() == 200) {
          return;
        }
        last = r.code() + " " + r.body().strip();
        whileNotReady.accept(r);
      } catch (RuntimeException notYet) {
        last = "not listening: " + notYet.getMessage();
      }
      Thread.sleep(POLL.toMillis());
    }
    throw new AssertionError(who + ": node not ready within " + within.toSeconds() + " s, last /health/ready: " + last + "\n"
        + tail());
  }

  /** kill -9 (SIGKILL); returns at once, without waiting for the JVM to exit. */
  void kill() {
    process.destroyForcibly();
  }

  /** kill -9, then waits up to {@link #EXIT_WAIT} for the JVM to exit. */
  void killAndWait() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Asks the node to stop (SIGTERM) and waits up to {@code grace}; then kill -9. */
  void stop(Duration grace) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
    }
  }

  /** Waits up to {@code timeout} for the JVM to exit; true if it has. */
  boolean waitFor(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Completes when the JVM has exited. */
  CompletableFuture<Process> onExit() {
    return process.onExit();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code; throws {@link IllegalThreadStateException} while the JVM runs. */
  int exitValue() {
    return process.exitValue();
  }

  long pid() {
    return process.pid();
  }

  Path log() {
    return log;
  }

  /** The whole log so far ("" if the node has written none). */
  String logText() throws IOException {
    return Files.exists(log) ? Files.readString(log) : "";
  }

  /** The last 30 lines of the log. */
  String tail() {
    return tail(log);
  }

  /** The last 30 lines of {@code log} (or why it cannot be read). */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join(File.separator.equals("/") ? "\n" : "\r\n", lines.subList(Math.max(0, lines.size() - TAIL_LINES), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ": " + e + ")";
    }
  }
}
