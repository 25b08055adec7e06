package io.cairn.pgwire;

import io.cairn.engine.sql.Result;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PostgreSQL wire-protocol (v3) listener, so that psql, pgjdbc and BI tools can query a node's
 * sources and views.
 *
 * <p>Design: one acceptor thread; each connection is served by one thread of a bounded pool
 * ({@code maxConnections} plus {@value #RESERVE} threads, so that a cancel request or a refusal
 * can still be answered when every session is taken). A connection past {@code maxConnections}
 * sessions gets ErrorResponse 53300 and is closed; one past the pool itself is closed at once.
 * Statements go to a {@link Backend} one at a time; the protocol state of a connection (prepared
 * statements, portals) is owned by its thread alone. A read-only statement (SELECT, SHOW,
 * EXPLAIN) runs on a thread of a second bounded pool while the connection's thread waits for it,
 * so that a cancel can abandon it: the client gets 57014 at once, the statement's budget is
 * cancelled (so its work stops within milliseconds and frees its thread) and its result, if any, is
 * dropped when it completes (when that pool is exhausted, the statement runs in the connection's
 * thread). A DDL statement always runs to its end in the connection's thread. The only
 * cross-thread call into a connection is {@link PgConnection#cancel}, which sets a flag.
 *
 * <p>Bounds: a frontend message above {@code maxMessageBytes} gets ErrorResponse 54000 and closes
 * that connection only; a startup packet that is malformed, or not sent within {@value
 * #STARTUP_TIMEOUT_MILLIS} ms, closes that connection only; a connection idle longer than {@code
 * idleTimeout} gets ErrorResponse 57P05 and is closed, and one whose client has not read what was
 * sent for as long (a write blocked that long) is closed by a watchdog that checks every second.
 *
 * <p>Authentication: when {@code password} is set, every client must prove it knows it with
 * SCRAM-SHA-256 ({@link ScramSha256}: the password never crosses the network); when it is not,
 * every client is trusted, which is allowed only on a loopback address (a listener on any other
 * address refuses to start without a password). There is no TLS: an SSLRequest is answered 'N',
 * so queries and results cross the network unencrypted.
 */
public final class PgWireServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PgWireServer.class);
  /** Threads beyond {@code maxConnections} in each pool: cancel requests and refusals are answered when every session is taken. */
  public static final int RESERVE = 4;
  static final int STARTUP_TIMEOUT_MILLIS = 10_000;
  /** The default largest frontend message: 1 MiB. */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 1 << 20;
  /** The default idle timeout of a connection. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(30);

  /** What the listener runs statements against. Implementations are thread-safe. */
  public interface Backend {
    /**
     * Executes one statement (no trailing semicolon needed).
     *
     * @throws io.cairn.engine.sql.SqlException for a statement that cannot be parsed, planned or applied
     */
    List<Result> execute(String statement);

    /**
     * Executes one statement within {@code budget} (the session's statement timeout; a cancel
     * request ends it): a read stops at its next check, a DDL statement is refused if the budget
     * ended before it began. By default the budget is checked once, before {@link #execute(String)}.
     *
     * @throws io.cairn.engine.sql.StatementCanceledException when the budget ended
     */
    default List<Result> execute(String statement, io.cairn.engine.sql.StatementBudget budget) {
      budget.check();
      return execute(statement);
    }

    /**
     * Starts a {@code SUBSCRIBE} (the connection closes its reader); none by default.
     *
     * @throws io.cairn.engine.sql.SqlException when there is no such view
     */
    default io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement) {
      throw new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "SUBSCRIBE is not supported here");
    }

    /** The statement timeout of a session that has not set {@code statement_timeout} (null: none). */
    default Duration statementTimeout() {
      return io.cairn.engine.sql.StatementBudget.DEFAULT_TIMEOUT;
    }

    /** The catalog position: result types cached for a statement are valid while it is unchanged. */
    long catalogPosition();

    /**
     * The sources and views that catalog queries (psql's {@code \d}, JDBC {@code DatabaseMetaData})
     * show, in catalog order; none by default. Called once per catalog query; must not block on
     * a running statement.
     */
    default List<CatalogRelation> relations() {
      return List.of();
    }
  }

  /**
   * The listener's settings.
   *
   * @param host address to bind (a non-loopback address requires {@code password})
   * @param port port to bind, 0 for any free port
   * @param maxConnections most concurrent sessions
   * @param maxMessageBytes largest frontend message accepted
   * @param idleTimeout how long a connection may wait between messages
   * @param password the password every client must send, or null to trust clients (loopback {@code host} only)
   */
  public record Settings(String host, int port, int maxConnections, int maxMessageBytes, Duration idleTimeout, String password) {
    public Settings {
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(idleTimeout, "idleTimeout");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("Cannot configure pgwire: port " + port + " is outside [0, 65535]");
      }
      if (maxConnections < 1) {
        throw new IllegalArgumentException("Cannot configure pgwire: max connections " + maxConnections + " < 1");
      }
      if (maxMessageBytes < 1024) {
        throw new IllegalArgumentException("Cannot configure pgwire: max message size " + maxMessageBytes + " < 1024");
      }
    }

    public static Settings of(String host, int port, int maxConnections, String password) {
      return new Settings(host, port, maxConnections, DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_IDLE_TIMEOUT, password);
    }

    @Override
    public String toString() {
      return "Settings[" + host + ":" + port + ", maxConnections=" + maxConnections + ", maxMessageBytes=" + maxMessageBytes
          + ", idleTimeout=" + idleTimeout + ", password=" + (password == null ? "none" : "set") + "]";
    }
  }

  private final Settings settings;
  private final Backend backend;
  private final boolean requirePassword;
  private final ServerSocket server;
  private final ThreadPoolExecutor pool;
  private final ThreadPoolExecutor queries;
  private final Thread acceptor;
  private final java.util.concurrent.ScheduledExecutorService watchdog;
  private final Map<Integer, PgConnection> byPid = new ConcurrentHashMap<>();
  private final AtomicInteger sessions = new AtomicInteger();
  private final AtomicInteger nextPid = new AtomicInteger(1);
  private final SecureRandom random = new SecureRandom();
  private final ResultTypes types;
  private final ScramSha256 scram;
  private volatile boolean closed;

  /** Binds and starts accepting. */
  public static PgWireServer start(Settings settings, Backend backend) {
    return new PgWireServer(settings, backend);
  }

  private PgWireServer(Settings settings, Backend backend) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.backend = Objects.requireNonNull(backend, "backend");
    this.types = new ResultTypes(backend);
    InetAddress addr;
    try {
      addr = InetAddress.getByName(settings.host());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start pgwire listener: unknown host '" + settings.host() + "'", e);
    }
    this.requirePassword = settings.password() != null && !settings.password().isEmpty();
    this.scram = requirePassword ? new ScramSha256(settings.password()) : null;
    if (!requirePassword && !addr.isLoopbackAddress()) {
      throw new IllegalArgumentException("Cannot start pgwire listener on " + settings.host()
          + ": it is not a loopback address, so a password is required (set CAIRN_PGWIRE_PASSWORD)");
    }
    try {
      server = new ServerSocket();
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(addr, settings.port()), 128);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start pgwire listener on " + settings.host() + ":" + settings.port() + ": " + e.getMessage(), e);
    }
    AtomicInteger n = new AtomicInteger();
    pool = new ThreadPoolExecutor(0, settings.maxConnections() + RESERVE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
      Thread t = new Thread(r, "cairn-pgwire-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    AtomicInteger q = new AtomicInteger();
    queries = new ThreadPoolExecutor(0, settings.maxConnections() + RESERVE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
      Thread t = new Thread(r, "cairn-pgwire-query-" + q.incrementAndGet());
      t.setDaemon(true);
      return t;
    }, new ThreadPoolExecutor.CallerRunsPolicy());
    acceptor = new Thread(this::acceptLoop, "cairn-pgwire-acceptor");
    acceptor.setDaemon(true);
    acceptor.start();
    watchdog = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cairn-pgwire-watchdog");
      t.setDaemon(true);
      return t;
    });
    long limit = settings.idleTimeout().toNanos();
    watchdog.scheduleWithFixedDelay(() -> {
      long now = System.nanoTime();
      for (PgConnection c : byPid.values()) {
        if (c.stuckWriting(now, limit)) {
          LOG.warn("pgwire: closing a connection whose client has not read its results for {}", settings.idleTimeout());
          c.closeSocket();
        }
      }
    }, 1, 1, TimeUnit.SECONDS);
    LOG.info("pgwire listener on {}:{} ({} authentication, at most {} connections)", settings.host(), port(),
        requirePassword ? "password" : "trust", settings.maxConnections());
  }

  /** The port actually bound. */
  public int port() {
    return server.getLocalPort();
  }

  /** Sessions currently open (after startup). */
  public int sessions() {
    return sessions.get();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (!closed) {
          LOG.warn("pgwire accept failed: {}", e.getMessage());
          try {
            Thread.sleep(100); // e.g. out of file descriptors: do not spin
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        continue;
      }
      try {
        s.setTcpNoDelay(true);
        pool.execute(() -> new PgConnection(this, s).run());
      } catch (RejectedExecutionException | SocketException e) {
        LOG.warn("pgwire: refusing a connection from {}: every connection thread is busy", s.getRemoteSocketAddress());
        closeQuietly(s);
      }
    }
  }

  // ------------------------------------------------------------------ for connections

  Settings settings() {
    return settings;
  }

  Backend backend() {
    return backend;
  }

  ResultTypes types() {
    return types;
  }

  ScramSha256 scram() {
    return scram;
  }

  boolean requirePassword() {
    return requirePassword;
  }

  /**
   * Runs a read-only statement on the query pool and waits for it, giving up (the result is
   * dropped when it comes) as soon as {@code canceled} says so.
   *
   * @throws java.util.concurrent.CancellationException when canceled
   */
  List<Result> executeCancellable(String statement, io.cairn.engine.sql.StatementBudget budget,
      java.util.function.BooleanSupplier canceled) {
    java.util.concurrent.Future<List<Result>> f = queries.submit(() -> backend.execute(statement, budget));
    while (true) {
      try {
        return f.get(20, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        if (canceled.getAsBoolean() || closed) {
          // the statement stops at its next budget check and frees its thread; the client is answered now
          budget.cancel(io.cairn.engine.sql.StatementCanceledException.USER_REQUEST);
          f.cancel(false);
          throw new java.util.concurrent.CancellationException("canceled");
        }
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof RuntimeException re) {
          throw re;
        }
        if (e.getCause() instanceof Error err) {
          throw err;
        }
        throw new IllegalStateException(e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        f.cancel(false);
        throw new java.util.concurrent.CancellationException("interrupted");
      }
    }
  }

  /** Takes a session slot, or returns false when {@code maxConnections} are open. */
  boolean tryOpenSession() {
    while (true) {
      int c = sessions.get();
      if (c >= settings.maxConnections()) {
        return false;
      }
      if (sessions.compareAndSet(c, c + 1)) {
        return true;
      }
    }
  }

  /** Registers a session and returns its (pid, secret). */
  int[] register(PgConnection c) {
    int pid = nextPid.getAndIncrement();
    int secret = random.nextInt();
    byPid.put(pid, c);
    return new int[] {pid, secret};
  }

  void closeSession(int pid) {
    if (byPid.remove(pid) != null) {
      sessions.decrementAndGet();
    }
  }

  /** A CancelRequest: cancels the running query of the session with that pid if the secret matches. */
  void cancel(int pid, int secret) {
    PgConnection c = byPid.get(pid);
    if (c != null) {
      c.cancel(secret);
    }
  }

  static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      LOG.warn("Closing the pgwire listener failed: {}", e.getMessage());
    }
    for (PgConnection c : byPid.values()) {
      c.closeSocket();
    }
    pool.shutdownNow();
    queries.shutdownNow();
    watchdog.shutdownNow();
    try {
      acceptor.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
