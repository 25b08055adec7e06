package io.cairn.server.cli;

import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;

/**
 * {@code cairn class-cache}: the training run behind the launcher's class-data archive
 * ({@code lib/cairn.jsa}). A restart spends most of its first seconds loading and verifying
 * classes (measured: a cold {@code cairn recover} of a 23k-row snapshot took 4.3–5.1 s, of which
 * snapshot load, catalog and seek 2.1–2.6 s; with the archive 2.8–3.0 s and 0.9–1.1 s). The
 * launcher runs this command with {@code -XX:ArchiveClassesAtExit}; the JVM writes every class it
 * loaded into the archive when the command exits, and later starts map them instead of loading
 * them.
 *
 * <p>So this run walks the paths a restart walks, against nothing outside a temporary directory: a
 * node on a local store (init SQL, a full replay, a snapshot written), a second node recovering
 * from that snapshot (Parquet read, catalog replay, restore, seek, catch-up, SQL), the Kafka
 * client pointed at a port nothing listens on (its classes load, its calls fail fast), and the
 * same two nodes on an S3 store served by {@link TrainingS3} ({@link #trainOnS3}: a cold start on
 * S3 otherwise loaded about a thousand classes of the client's response path from the jars). A Postgres source cannot run without a database: the classes of its jars
 * (Debezium, Kafka Connect, the JDBC driver) are loaded without running it ({@link #loadConnectorClasses}).
 */
@Command(name = "class-cache", mixinStandardHelpOptions = true,
    description = "Write the class-data archive that makes later starts faster (lib/cairn.jsa; the launcher runs this "
        + "once after a build; run it again after changing the JDK).")
final class ClassCache implements Callable<Integer> {

  @Override
  public Integer call() throws Exception {
    String archive = System.getProperty("cairn.class-cache.archive");
    if (archive != null) {
      Files.deleteIfExists(Path.of(archive)); // the JVM writes a new one as it exits
    }
    Path dir = Files.createTempDirectory("cairn-class-cache");
    try {
      train(dir);
    } finally {
      deleteTree(dir);
    }
    if (archive == null) {
      System.out.println("Ran the class-cache training; no archive was asked for (bin/cairn class-cache asks for one).");
    }
    return 0;
  }

  private static void train(Path dir) throws IOException {
    int closedPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    Path yaml = dir.resolve("cairn.yaml");
    Files.writeString(yaml, String.join("\n",
        "store:",
        "  uri: \"" + dir.resolve("store").toUri() + "\"",
        "pgwire:",
        "  port: 0",
        "sources:",
        "  restart:",
        "    max-attempts: 1",
        "init:",
        "  - \"CREATE SOURCE orders FROM LOAD GENERATOR (keys = 100000, categories = 20, rate = 100000)\"",
        "  - \"" + CairnConfig.DEFAULT_INIT.get(1) + "\"",
        "  - \"CREATE SOURCE events FROM KAFKA (brokers = '127.0.0.1:" + closedPort + "', topic = 'events', "
            + "request-timeout-ms = '300') FORMAT JSON ENVELOPE UPSERT (id BIGINT, n BIGINT, PRIMARY KEY (id))\"",
        "  - \"CREATE MATERIALIZED VIEW events_by_n AS SELECT n, COUNT(*) AS c FROM events GROUP BY n\"",
        ""));
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    Node.Options options = Node.Options.defaults().withProgress(false).withCatchUpTimeout(Duration.ofSeconds(1));
    try (Node first = Node.recover(cfg, options)) {
      first.sql("SELECT * FROM revenue_by_category");
      first.snapshotNow();
    }
    try (Node second = Node.recover(cfg, options)) {
      second.sql("SELECT category, revenue FROM revenue_by_category WHERE orders > 0");
      second.report().toText();
      second.report().toJson();
    }
    try {
      trainOnS3(dir, options);
    } catch (IOException | RuntimeException e) {
      // the archive is still written; it then lacks part of the S3 client's classes
      System.err.println("cairn class-cache: the S3 part of the training failed (starts on S3 will load more classes): " + e);
    }
    loadConnectorClasses();
    trainConnectors();
  }

  /** Each connector's start-up code that the training's servers (none, or a closed port) do not reach. */
  private static void trainConnectors() {
    for (io.cairn.engine.source.SourceConnector c : java.util.ServiceLoader.load(io.cairn.engine.source.SourceConnector.class)) {
      c.trainClassCache();
    }
  }

  /**
   * A node that writes a snapshot to an S3 store, and one that recovers from it, both over the S3
   * client against {@link TrainingS3}: the requests and response parsing of a restart on S3.
   * Returns the number of objects the store then holds.
   */
  static int trainOnS3(Path dir, Node.Options options) throws IOException {
    try (TrainingS3 s3 = TrainingS3.start()) {
      Path yaml = dir.resolve("cairn-s3.yaml");
      Files.writeString(yaml, String.join("\n",
          "store:",
          "  uri: \"s3://class-cache/training?endpoint=" + s3.endpoint() + "\"",
          "  properties:",
          "    s3.region: us-east-1",
          "    s3.path-style-access: true",
          "    s3.access-key-id: training",
          "    s3.secret-access-key: training",
          "    s3.retry.max-attempts: 1",
          "pgwire:",
          "  port: 0",
          "init:",
          "  - \"CREATE SOURCE orders FROM LOAD GENERATOR (keys = 1000, categories = 20, rate = 100000)\"",
          "  - \"" + CairnConfig.DEFAULT_INIT.get(1) + "\"",
          ""));
      CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
      try (Node first = Node.recover(cfg, options)) {
        first.snapshotNow();
      }
      try (Node second = Node.recover(cfg, options)) {
        if (second.report().snapshotId() == null) {
          throw new IllegalStateException("the second node on S3 found no snapshot to recover from");
        }
      }
      return s3.objectCount();
    }
  }

  /** Jars of the Postgres source (Debezium, Kafka Connect, the JDBC driver): the training cannot start it. */
  private static final List<String> CONNECTOR_JARS =
      List.of("debezium-", "postgresql-", "connect-api-", "connect-runtime-", "connect-json-", "connect-transforms-");

  /**
   * Loads (without initialising) every class of the Postgres source's jars, so that the archive
   * holds them: a Postgres source connects when it is opened, and the training has no database.
   * A class whose optional dependencies are absent is skipped.
   */
  private static void loadConnectorClasses() throws IOException {
    ClassLoader loader = ClassCache.class.getClassLoader();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      String name = Path.of(entry).getFileName().toString();
      if (!name.endsWith(".jar") || CONNECTOR_JARS.stream().noneMatch(name::startsWith)) {
        continue;
      }
      try (java.util.jar.JarFile jar = new java.util.jar.JarFile(entry)) {
        for (java.util.jar.JarEntry e : java.util.Collections.list(jar.entries())) {
          String n = e.getName();
          if (!n.endsWith(".class") || n.startsWith("META-INF/") || n.endsWith("module-info.class") || n.endsWith("package-info.class")) {
            continue;
          }
          try {
            Class.forName(n.substring(0, n.length() - ".class".length()).replace('/', '.'), false, loader);
          } catch (ClassNotFoundException | LinkageError skipped) {
            // a class that needs an optional library the distribution does not ship: never loaded at run time either
          }
        }
      }
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
