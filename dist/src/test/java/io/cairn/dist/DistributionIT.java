package io.cairn.dist;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tarball as a user gets it: unpacked into an empty folder and run with nothing but bash and
 * the JDK — the PATH holds only the JDK's {@code bin}, HOME is an empty folder (no Maven, no
 * {@code ~/.m2}) — {@code bin/cairn run}, then {@code bin/cairn sql} and {@code bin/cairn status
 * --json} against it; and what its {@code lib/} holds: no test or benchmark code.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES) // a node started from the unpacked tarball; not measured here
class DistributionIT {
  record Result(int exit, String out) {}

  @Test
  void theUnpackedTarballRunsWithOnlyAJdk(@TempDir Path dir) throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    Path bin = unpack(dir);

    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config, "store:\n  uri: \"file://" + dir.resolve("data") + "\"\nhttp:\n  port: " + port + "\npgwire:\n  port: 0\n"
        + "init:\n  - \"CREATE SOURCE orders FROM LOAD GENERATOR (keys = 1000, categories = 5, seed = 1, limit = 5000)\"\n"
        + "  - \"CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM orders GROUP BY category\"\n");
    Process run = start(bin, home, dir.resolve("run.log"), "run", "--config", config.toString());
    try {
      JsonNode status = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (System.nanoTime() < deadline) {
        assertThat(run.isAlive()).as("bin/cairn run is alive: %s", log(dir.resolve("run.log"))).isTrue();
        Result r = cairn(bin, home, "status", "--json", "--config", config.toString());
        if (r.exit() == 0) {
          status = new ObjectMapper().readTree(r.out());
          if (status.path("state").asText().equals("SERVING")) {
            break;
          }
        }
        Thread.sleep(500);
      }
      assertThat(status).as("status --json answered: %s", log(dir.resolve("run.log"))).isNotNull();
      assertThat(status.path("state").asText()).isEqualTo("SERVING");
      assertThat(status.path("sources").has("orders")).isTrue();
      Result sql = cairn(bin, home, "sql", "--config", config.toString(), "SELECT * FROM by_cat");
      assertThat(sql.exit()).as(sql.out()).isZero();
      assertThat(sql.out()).contains("category").contains(" n").contains("rows)");
      assertThat(Files.list(home).count()).as("nothing written to HOME (no ~/.m2)").isZero();
    } finally {
      run.destroy(); // SIGTERM: the shutdown hook closes the node
      if (!run.waitFor(30, TimeUnit.SECONDS)) {
        run.destroyForcibly();
      }
    }
  }

  @Test
  void classCacheWritesAnArchiveThatLaterStartsLoadFrom(@TempDir Path dir) throws Exception {
    Path home = Files.createDirectories(dir.resolve("home"));
    Path bin = unpack(dir);
    Path archive = bin.getParent().getParent().resolve("lib").resolve("cairn.jsa");
    Result made = cairn(bin, home, Map.of(), "class-cache");
    assertThat(made.exit()).as(made.out()).isZero();
    assertThat(made.out()).contains("Wrote " + archive);
    assertThat(archive).isNotEmptyFile();

    Path config = dir.resolve("cairn.yaml");
    Files.writeString(config, "store:\n  uri: \"file://" + dir.resolve("data") + "\"\npgwire:\n  port: 0\n");
    Path classes = dir.resolve("classes.log");
    Map<String, String> logClasses = Map.of("CAIRN_JAVA_OPTS", "-Xlog:class+load=info:file=" + classes);
    Result list = cairn(bin, home, logClasses, "snapshots", "list", "--config", config.toString());
    assertThat(list.exit()).as(list.out()).isZero();
    assertThat(list.out()).as("nothing but the command's own output").startsWith("no snapshots in");
    long shared = sharedClasses(classes);
    assertThat(shared).as("classes mapped from the archive").isGreaterThan(1000);

    Result off = cairn(bin, home, Map.of("CAIRN_JAVA_OPTS", "-Xlog:class+load=info:file=" + classes, "CAIRN_CLASS_CACHE", "off"),
        "snapshots", "list", "--config", config.toString());
    assertThat(off.exit()).as(off.out()).isZero();
    assertThat(sharedClasses(classes)).as("CAIRN_CLASS_CACHE=off").isZero();

    // an archive that does not fit (another JDK, other jars, damaged) is ignored without a word:
    // first one damaged behind an intact header (without the launcher's checksum check the JVM
    // maps it and crashes), then one that is not an archive at all
    Files.setPosixFilePermissions(archive, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(archive, java.nio.file.StandardOpenOption.WRITE)) {
      byte[] junk = new byte[64 * 4096];
      java.util.Arrays.fill(junk, (byte) 0x5a);
      ch.write(java.nio.ByteBuffer.wrap(junk), ch.size() / 3);
    }
    Result damaged = cairn(bin, home, logClasses, "snapshots", "list", "--config", config.toString());
    assertThat(damaged.exit()).as(damaged.out()).isZero();
    assertThat(damaged.out()).startsWith("no snapshots in");
    assertThat(sharedClasses(classes)).isZero();
    Files.write(archive, "not an archive".getBytes(StandardCharsets.UTF_8));
    Result garbage = cairn(bin, home, logClasses, "snapshots", "list", "--config", config.toString());
    assertThat(garbage.exit()).as(garbage.out()).isZero();
    assertThat(garbage.out()).startsWith("no snapshots in");
    assertThat(sharedClasses(classes)).isZero();
  }

  /**
   * Packages that must not be in any jar of lib/: the test servers, the benchmarks, JMH, the test
   * harnesses' former homes in the product modules, and the engine test-jar's property-test kit.
   */
  private static final List<String> FORBIDDEN_PACKAGES = List.of(
      "io/cairn/testkit/", "io/cairn/benchmarks/", "org/openjdk/jmh/",
      "io/cairn/objectstore/testing/", "io/cairn/connectors/testing/", "io/cairn/engine/testkit/");

  @Test
  void libHoldsNoTestkitBenchmarkJmhOrTestJarClasses(@TempDir Path dir) throws Exception {
    Path lib = unpack(dir).getParent().getParent().resolve("lib");
    List<Path> jars;
    try (Stream<Path> s = Files.list(lib)) {
      jars = s.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().toList();
    }
    assertThat(jars).as("jars in %s", lib).isNotEmpty()
        .anySatisfy(j -> assertThat(j.getFileName().toString()).startsWith("cairn-server-"))
        .anySatisfy(j -> assertThat(j.getFileName().toString()).startsWith("cairn-node-"))
        .anySatisfy(j -> assertThat(j.getFileName().toString()).startsWith("cairn-pgwire-"));
    List<String> offenders = new ArrayList<>();
    for (Path jar : jars) {
      offenders.addAll(offenders(jar));
    }
    assertThat(offenders)
        .as("classes in %s that belong to the testkit, the benchmarks, JMH or a test-jar (jar: offending entries)", lib)
        .isEmpty();
  }

  /** What in {@code jar} is test or benchmark code: "name.jar: entry, entry, …", or nothing. */
  private static List<String> offenders(Path jar) throws IOException {
    String name = jar.getFileName().toString();
    List<String> bad = new ArrayList<>();
    if (name.endsWith("-tests.jar") || name.endsWith("-test.jar")) {
      bad.add("(a test-jar)");
    }
    try (JarFile jf = new JarFile(jar.toFile())) {
      for (JarEntry e : (Iterable<JarEntry>) jf.stream()::iterator) {
        String entry = e.getName();
        if (!entry.endsWith(".class")) {
          continue;
        }
        String simple = entry.substring(entry.lastIndexOf('/') + 1, entry.length() - ".class".length());
        boolean forbidden = FORBIDDEN_PACKAGES.stream().anyMatch(entry::startsWith);
        // a cairn test class: what a test-jar of a cairn module holds
        boolean testClass = entry.startsWith("io/cairn/") && simple.matches("[^$]*(Test|Tests|IT)(\\$.*)?");
        if (forbidden || testClass) {
          bad.add(entry);
        }
      }
    }
    if (bad.isEmpty()) {
      return List.of();
    }
    int shown = Math.min(bad.size(), 10);
    return List.of(name + ": " + String.join(", ", bad.subList(0, shown))
        + (bad.size() > shown ? " … (" + bad.size() + " entries)" : ""));
  }

  /** Classes the JVM took from the dynamic (top) class-data archive, from a -Xlog:class+load file. */
  private static long sharedClasses(Path log) throws IOException {
    try (Stream<String> lines = Files.lines(log)) {
      return lines.filter(l -> l.contains("source: shared objects file (top)")).count();
    }
  }

  /** Unpacks the tarball into {@code dir}/opt; returns its bin/cairn. */
  private static Path unpack(Path dir) throws Exception {
    Path tarball;
    try (Stream<Path> s = Files.list(Path.of("target"))) {
      tarball = s.filter(p -> p.getFileName().toString().matches("cairn-.*\\.tar\\.gz")).findFirst().orElseThrow();
    }
    Path unpack = Files.createDirectories(dir.resolve("opt"));
    Process tar = new ProcessBuilder("tar", "xzf", tarball.toAbsolutePath().toString(), "-C", unpack.toString()).inheritIO().start();
    assertThat(tar.waitFor()).isZero();
    Path cairnHome;
    try (Stream<Path> s = Files.list(unpack)) {
      cairnHome = s.findFirst().orElseThrow();
    }
    assertThat(cairnHome.resolve("lib").resolve("cairn.jsa")).as("the tarball carries no class-data archive").doesNotExist();
    Path bin = cairnHome.resolve("bin").resolve("cairn");
    assertThat(Files.isExecutable(bin)).isTrue();
    return bin;
  }

  private static Process start(Path bin, Path home, Path log, String... args) throws IOException {
    return start(bin, home, log, Map.of(), args);
  }

  private static Process start(Path bin, Path home, Path log, Map<String, String> env, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add("/bin/bash");
    cmd.add(bin.toString());
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().clear();
    pb.environment().put("PATH", Path.of(System.getProperty("java.home"), "bin").toString());
    pb.environment().put("HOME", home.toString());
    pb.environment().putAll(env);
    return pb.start();
  }

  private static Result cairn(Path bin, Path home, String... args) throws Exception {
    return cairn(bin, home, Map.of(), args);
  }

  private static Result cairn(Path bin, Path home, Map<String, String> env, String... args) throws Exception {
    Path out = Files.createTempFile("cairn-cli", ".out");
    try {
      Process p = start(bin, home, out, env, args);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("bin/cairn " + String.join(" ", args) + " did not finish in 60 s");
      }
      return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }

  private static String log(Path p) {
    try {
      List<String> lines = Files.readAllLines(p);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }
}
