package io.cairn.testkit.postgres;

import io.cairn.testkit.FreePort;
import io.cairn.testkit.TempDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A real PostgreSQL 15 server for tests, started from Debian's binaries
 * ({@code /usr/lib/postgresql/15/bin}, or the directory named by the system property / environment
 * variable {@code CAIRN_PG_BIN}): {@code initdb} into a fresh temporary directory, {@code pg_ctl
 * start} on a free port bound to 127.0.0.1 with {@code wal_level=logical}. initdb and pg_ctl refuse
 * to run as root, so when the JVM runs as root they are run as the OS user {@code postgres} through
 * {@code runuser -u postgres --} on a directory owned by that user.
 *
 * <p>The superuser is {@code cairn} with a random password (password authentication over TCP,
 * {@code scram-sha-256}); it may create replication slots and publications.
 *
 * <p>Use the shared instance: {@code PostgresServer pg = PostgresServer.shared();} — started lazily
 * once per JVM and stopped (data directory deleted) by a shutdown hook. Tests that need isolation
 * create their own database with {@link #createDatabase(String)}. A private instance can be started
 * with {@link #start()} and must be {@link #close() closed}.
 *
 * <p>Other modules get this class from the testkit:
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>io.cairn</groupId><artifactId>cairn-testkit</artifactId><scope>test</scope>
 * </dependency>
 * }</pre>
 *
 * and then {@code PostgresServer pg = PostgresServer.shared(); String db = pg.createUniqueDatabase("x");
 * Connection c = pg.connect(db);} — a {@code postgres} source reaches it with options {@code host =
 * pg.host()}, {@code port = pg.port()}, {@code database = db}, {@code user = pg.user()}, {@code
 * password = SECRET 'NAME'} where the test's {@code Secrets} resolve {@code NAME} to {@link #password()}.
 */
public final class PostgresServer implements AutoCloseable {
  public static final String USER = "cairn";
  private static final String DEFAULT_BIN = "/usr/lib/postgresql/15/bin";
  private static volatile PostgresServer shared;

  private final Path baseDir;
  private final Path dataDir;
  private final Path bin;
  private final int port;
  private final String password;
  private final boolean asPostgresUser;
  private volatile boolean running;
  private String opts;

  private PostgresServer(Path baseDir, Path bin, int port, String password, boolean asPostgresUser) {
    this.baseDir = baseDir;
    this.dataDir = baseDir.resolve("data");
    this.bin = bin;
    this.port = port;
    this.password = password;
    this.asPostgresUser = asPostgresUser;
  }

  /** The JVM-wide server, started on first use and stopped at JVM exit. */
  public static PostgresServer shared() {
    PostgresServer s = shared;
    if (s == null) {
      synchronized (PostgresServer.class) {
        s = shared;
        if (s == null) {
          s = start();
          PostgresServer started = s;
          Runtime.getRuntime().addShutdownHook(new Thread(started::close, "cairn-postgres-stop"));
          shared = s;
        }
      }
    }
    return s;
  }

  /** Starts a private server; the caller must close it. */
  public static PostgresServer start() {
    String binProp = System.getProperty("CAIRN_PG_BIN", System.getenv().getOrDefault("CAIRN_PG_BIN", DEFAULT_BIN));
    Path bin = Path.of(binProp);
    if (!Files.isExecutable(bin.resolve("initdb")) || !Files.isExecutable(bin.resolve("pg_ctl"))) {
      throw new IllegalStateException("Cannot start PostgreSQL: no initdb/pg_ctl in " + bin
          + " (install Debian's postgresql-15 or set CAIRN_PG_BIN)");
    }
    boolean root = "root".equals(System.getProperty("user.name"));
    Path base;
    try {
      base = Files.createTempDirectory("cairn-pg-",
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start PostgreSQL: cannot create a temporary directory", e);
    }
    String password = UUID.randomUUID().toString().replace("-", "");
    PostgresServer server = new PostgresServer(base, bin, FreePort.onLoopback(), password, root);
    try {
      server.initAndStart();
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
  }

  private void initAndStart() {
    try {
      Path pwFile = baseDir.resolve("pw");
      Files.writeString(pwFile, password + "\n", StandardCharsets.UTF_8);
      if (asPostgresUser) {
        run(List.of("chown", "-R", "postgres:postgres", baseDir.toString()), 30);
      }
      run(cmd(bin.resolve("initdb").toString(), "-D", dataDir.toString(), "-U", USER, "--pwfile=" + pwFile,
          "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"), 120);
      Files.deleteIfExists(pwFile);
      opts = String.join(" ",
          "-p " + port,
          "-c listen_addresses=127.0.0.1",
          "-c unix_socket_directories=" + baseDir,
          "-c wal_level=logical",
          "-c max_wal_senders=20",
          "-c max_replication_slots=20",
          "-c max_connections=100",
          "-c fsync=off",
          "-c synchronous_commit=off",
          "-c full_page_writes=off",
          "-c shared_buffers=64MB",
          "-c wal_sender_timeout=0");
      run(cmd(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-l", baseDir.resolve("server.log").toString(),
          "-w", "-t", "60", "-o", opts, "start"), 90);
      running = true;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start PostgreSQL in " + baseDir, e);
    }
  }

  private List<String> cmd(String... args) {
    List<String> out = new ArrayList<>();
    if (asPostgresUser) {
      out.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    out.addAll(List.of(args));
    return out;
  }

  private void run(List<String> command, int timeoutSeconds) throws IOException {
    Path log = Files.createTempFile("cairn-pg-cmd-", ".log");
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("Cannot run " + command.get(asPostgresUser ? 4 : 0) + ": timed out after "
            + timeoutSeconds + " s; output: " + Files.readString(log));
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("Cannot run " + String.join(" ", command) + ": exit " + p.exitValue()
            + "; output: " + Files.readString(log) + serverLogTail());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while running " + command, e);
    } finally {
      Files.deleteIfExists(log);
    }
  }

  private String serverLogTail() {
    try {
      Path log = baseDir.resolve("server.log");
      if (!Files.exists(log)) {
        return "";
      }
      List<String> lines = Files.readAllLines(log);
      return "; server log: " + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "";
    }
  }

  public String host() {
    return "127.0.0.1";
  }

  public int port() {
    return port;
  }

  public String user() {
    return USER;
  }

  public String password() {
    return password;
  }

  /** JDBC URL of {@code database}. */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  /** A new JDBC connection to {@code database} (autocommit on); the caller closes it. */
  public Connection connect(String database) {
    try {
      return DriverManager.getConnection(jdbcUrl(database), USER, password);
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot connect to PostgreSQL database " + database + " on port " + port + ": " + e.getMessage(), e);
    }
  }

  /** Creates database {@code name} (lower-case letters, digits, underscore) and returns its name. */
  public String createDatabase(String name) {
    if (!name.matches("[a-z_][a-z0-9_]*")) {
      throw new IllegalArgumentException("Cannot create database '" + name + "': use lower-case letters, digits and '_'");
    }
    try (Connection c = connect("postgres"); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
      return name;
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot create database " + name + ": " + e.getMessage(), e);
    }
  }

  /** A database name not used before in this JVM, created on this server. */
  public String createUniqueDatabase(String prefix) {
    return createDatabase((prefix + "_" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT).replace('-', '_'));
  }

  /**
   * Stops the server ({@code pg_ctl stop -m fast}: clients are disconnected, as in a failover or
   * a restart for maintenance), keeps it down for {@code down}, and starts it again on the same
   * port with the same data.
   */
  public synchronized void restart(java.time.Duration down) {
    try {
      run(cmd(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "fast", "-w", "-t", "30", "stop"), 60);
      Thread.sleep(down.toMillis());
      run(cmd(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-l", baseDir.resolve("server.log").toString(),
          "-w", "-t", "60", "-o", opts, "start"), 90);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot restart PostgreSQL in " + baseDir, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while restarting PostgreSQL", e);
    }
  }

  /** Stops the server (fast shutdown) and deletes its directory. Idempotent. */
  @Override
  public synchronized void close() {
    try {
      if (running) {
        running = false;
        run(cmd(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "immediate", "-w", "-t", "30", "stop"), 60);
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("Cannot stop PostgreSQL in " + baseDir + ": " + e.getMessage());
    } finally {
      TempDirs.deleteQuietly(baseDir);
    }
  }

  @Override
  public String toString() {
    return "PostgresServer[127.0.0.1:" + port + ", dir=" + baseDir + "]";
  }
}
