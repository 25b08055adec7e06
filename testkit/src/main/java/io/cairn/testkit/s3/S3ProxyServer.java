package io.cairn.testkit.s3;

import io.cairn.testkit.FreePort;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3 server for tests: s3proxy 4.1.0 (filesystem backend) in a child JVM on 127.0.0.1.
 * s3proxy 4.1.0 is the first version whose {@code If-None-Match: *} writes are atomic.
 *
 * <p>Use the per-JVM singleton, started on first use and stopped by a shutdown hook:
 * <pre>{@code
 * S3ProxyServer s3 = S3ProxyServer.shared();
 * String bucket = s3.createBucket();                       // a fresh, uniquely named bucket
 * // s3.endpoint(), s3.accessKeyId(), s3.secretAccessKey(), s3.region(); s3.client() for set-up
 * }</pre>
 * An {@code S3ObjectStore} on it comes from object-store's test-jar:
 * {@code S3ProxyStores.newStore(s3, bucket, "prefix")} or {@code S3ProxyStores.configFor(s3, bucket)}
 * (this module depends on no cairn module, so that object-store's own tests can use it).
 *
 * <p>It lives in the testkit module: tests depend on it with test scope, the benchmarks at compile
 * scope; no product jar carries it. The server jar
 * ({@code org.gaul:s3proxy:4.1.0:jar:jar-with-dependencies}) is found, in order, at the system
 * property {@value #JAR_PROPERTY}, at {@code target/s3proxy/} of the working directory or of
 * {@code ../testkit}, or in the local Maven repository (~/.m2, or {@code maven.repo.local}).
 * Building testkit once puts it there; otherwise run
 * {@code mvn dependency:get -Dartifact=org.gaul:s3proxy:4.1.0:jar:jar-with-dependencies}.
 * The child's output goes to {@code <basedir>/s3proxy.log}; its data lives under
 * {@code target/s3proxy-data-*} (or the temp directory) and is deleted on stop.
 */
public final class S3ProxyServer implements AutoCloseable {
  public static final String VERSION = "4.1.0";
  public static final String JAR_PROPERTY = "cairn.s3proxy.jar";
  private static final String JAR_NAME = "s3proxy-" + VERSION + "-jar-with-dependencies.jar";
  private static final String REGION = "us-east-1";
  private static final AtomicInteger BUCKETS = new AtomicInteger();
  private static volatile S3ProxyServer shared;

  private final Path baseDir;
  private final Path dataDir;
  private final String accessKeyId = "cairn-test-" + UUID.randomUUID().toString().substring(0, 8);
  private final String secretAccessKey = UUID.randomUUID().toString();
  private Process process;
  private URI endpoint;
  private S3Client admin;

  private S3ProxyServer(Path baseDir) {
    this.baseDir = baseDir;
    this.dataDir = baseDir.resolve("data");
  }

  /** The server shared by this JVM, started on first call; a shutdown hook stops it. */
  public static S3ProxyServer shared() {
    S3ProxyServer s = shared;
    if (s == null) {
      synchronized (S3ProxyServer.class) {
        s = shared;
        if (s == null) {
          s = start();
          S3ProxyServer started = s;
          Runtime.getRuntime().addShutdownHook(new Thread(started::close, "s3proxy-stop"));
          shared = s;
        }
      }
    }
    return s;
  }

  /** Starts a new server the caller must {@link #close()}. Prefer {@link #shared()}. */
  public static S3ProxyServer start() {
    Path jar = locateJar();
    Path parent = Files.isDirectory(Path.of("target")) ? Path.of("target") : Path.of(System.getProperty("java.io.tmpdir"));
    S3ProxyServer server;
    try {
      server = new S3ProxyServer(Files.createTempDirectory(parent.toAbsolutePath(), "s3proxy-data-"));
      Files.createDirectories(server.dataDir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start s3proxy: cannot create its data directory: " + e, e);
    }
    IllegalStateException last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        server.launch(jar);
        return server;
      } catch (IllegalStateException e) {
        // most likely the free port was taken between probing and binding: try another
        last = e;
        server.stopProcess();
      }
    }
    server.close();
    throw last;
  }

  private void launch(Path jar) {
    int port = FreePort.onLoopback();
    endpoint = URI.create("http://127.0.0.1:" + port);
    Properties props = new Properties();
    props.setProperty("s3proxy.endpoint", endpoint.toString());
    props.setProperty("s3proxy.authorization", "aws-v2-or-v4");
    props.setProperty("s3proxy.identity", accessKeyId);
    props.setProperty("s3proxy.credential", secretAccessKey);
    props.setProperty("s3proxy.ignore-unknown-headers", "true");
    props.setProperty("jclouds.provider", "filesystem");
    props.setProperty("jclouds.filesystem.basedir", dataDir.toString());
    Path propsFile = baseDir.resolve("s3proxy.properties");
    Path log = baseDir.resolve("s3proxy.log");
    try (Writer w = Files.newBufferedWriter(propsFile, StandardCharsets.UTF_8)) {
      props.store(w, "cairn test s3proxy");
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      List<String> cmd = new ArrayList<>(List.of(java, "-Xmx1g", "-XX:+UseParallelGC",
          "-Dlogback.configurationFile=" + writeLogbackConfig(), "-jar", jar.toString(),
          "--properties", propsFile.toString()));
      process = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start s3proxy from " + jar + ": " + e, e);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("s3proxy exited with " + process.exitValue() + " before listening on "
            + endpoint + "; log: " + tail(log));
      }
      if (accepts(port)) {
        admin = S3Client.builder()
            .endpointOverride(endpoint)
            .forcePathStyle(true)
            .region(Region.of(REGION))
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKeyId, secretAccessKey)))
            .build();
        return;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for s3proxy", e);
      }
    }
    throw new IllegalStateException("s3proxy did not listen on " + endpoint + " within 60 s; log: " + tail(log));
  }

  private Path writeLogbackConfig() throws IOException {
    Path f = baseDir.resolve("s3proxy-logback.xml");
    Files.writeString(f, """
        <configuration>
          <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
            <encoder><pattern>%d{HH:mm:ss.SSS} %-5level %logger{36} - %msg%n</pattern></encoder>
          </appender>
          <root level="WARN"><appender-ref ref="OUT"/></root>
        </configuration>
        """);
    return f;
  }

  static Path locateJar() {
    List<Path> candidates = new ArrayList<>();
    String prop = System.getProperty(JAR_PROPERTY);
    if (prop != null && !prop.isBlank()) {
      candidates.add(Path.of(prop));
    }
    candidates.add(Path.of("target", "s3proxy", JAR_NAME));
    candidates.add(Path.of("..", "testkit", "target", "s3proxy", JAR_NAME));
    String repo = System.getProperty("maven.repo.local");
    if (repo != null && !repo.isBlank()) {
      candidates.add(Path.of(repo, "org", "gaul", "s3proxy", VERSION, JAR_NAME));
    }
    candidates.add(Path.of(System.getProperty("user.home"), ".m2", "repository", "org", "gaul", "s3proxy", VERSION, JAR_NAME));
    for (Path p : candidates) {
      if (Files.isRegularFile(p)) {
        return p.toAbsolutePath();
      }
    }
    throw new IllegalStateException("Cannot start s3proxy: " + JAR_NAME + " not found at " + candidates
        + "; fetch it with: mvn dependency:get -Dartifact=org.gaul:s3proxy:" + VERSION + ":jar:jar-with-dependencies");
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  public URI endpoint() {
    return endpoint;
  }

  public String region() {
    return REGION;
  }

  public String accessKeyId() {
    return accessKeyId;
  }

  public String secretAccessKey() {
    return secretAccessKey;
  }

  /** The directory s3proxy stores buckets in (one sub-directory per bucket). */
  public Path dataDir() {
    return dataDir;
  }

  /** An SDK client with the server's credentials, for test set-up and inspection. */
  public S3Client client() {
    return admin;
  }

  /** Creates a bucket with a fresh unique name and returns the name. */
  public String createBucket() {
    String name = "cairn-test-" + BUCKETS.incrementAndGet() + "-" + UUID.randomUUID().toString().substring(0, 8);
    createBucket(name);
    return name;
  }

  public void createBucket(String name) {
    admin.createBucket(b -> b.bucket(name.toLowerCase(Locale.ROOT)));
  }

  /** A "s3://" URI for {@code bucket} on this server (credentials go in properties). */
  public String uri(String bucket, String prefix) {
    return "s3://" + bucket + "/" + prefix + "?endpoint=" + endpoint;
  }

  private void stopProcess() {
    Process p = process;
    if (p == null) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** Stops the child JVM and deletes its data. Idempotent. */
  @Override
  public synchronized void close() {
    if (admin != null) {
      admin.close();
      admin = null;
    }
    stopProcess();
    try (Stream<Path> files = Files.walk(baseDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort
        }
      });
    } catch (IOException ignored) {
      // best effort
    }
  }
}
