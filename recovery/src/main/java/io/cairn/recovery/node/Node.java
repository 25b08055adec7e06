package io.cairn.recovery.node;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.sql.SqlSession;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectStores;
import io.cairn.recovery.config.CairnConfig;
import io.cairn.recovery.http.HttpEndpoint;
import io.cairn.recovery.http.NodeApi;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cairn node: one engine, its catalog and snapshots on one object store.
 *
 * <p>Lifecycle ({@link State}): every start is a recovery — {@link #recover} reads the catalog,
 * takes the newest snapshot that verifies (falling back past corrupt ones, or replaying every
 * source from its beginning when there is none, said loudly), re-creates the dataflows in catalog
 * order up to the snapshot's catalog position, loads the snapshot's batches, applies the rest of
 * the catalog, resumes each source at {@code offsets(T)} and ticks until every source has caught
 * up; {@link #serve} then runs ticks in the background, takes snapshots on the schedule and
 * answers HTTP and the PostgreSQL wire protocol ({@link io.cairn.recovery.pgwire.PgWireServer}).
 * {@link #close} stops everything; a node killed instead loses nothing that a committed snapshot
 * plus the sources' retained data cannot give back.
 *
 * <p>Lock order (deadlock freedom): {@code snapshotLock} (one snapshot at a time) → the SQL
 * session's statement lock (DDL only) → the engine's tick lock → the engine lock. No code path
 * takes them in another order: a snapshot holds the engine lock only for the capture (which reads
 * the session's catalog position, a volatile value written under the engine lock, without its
 * statement lock), uploads with no engine lock held, and a SELECT takes only the engine lock,
 * for the read. So reads never wait behind an upload, and a snapshot never waits for a statement.
 *
 * <p>Status is read from values the engine publishes after each tick ({@link
 * Engine#sourceStatuses()}); nothing here calls into a source's client.
 */
public final class Node implements AutoCloseable, NodeApi {
  private static final Logger LOG = LoggerFactory.getLogger(Node.class);

  public enum State {
    RECOVERING,
    CAUGHT_UP,
    SERVING,
    CLOSED
  }

  /** How {@link #recover} behaves. */
  public record Options(
      boolean progress,
      Duration catchUpTimeout,
      Clock clock,
      java.util.function.UnaryOperator<ObjectStore> storeDecorator,
      io.cairn.engine.source.Secrets secrets,
      boolean takeover) {
    public static Options defaults() {
      return new Options(false, null, Clock.systemUTC(), s -> s, io.cairn.engine.source.Secrets.environment(), true);
    }

    public Options withProgress(boolean p) {
      return new Options(p, catchUpTimeout, clock, storeDecorator, secrets, takeover);
    }

    /** Stop catching up after {@code d} (null: no limit); the report then says not caught up. */
    public Options withCatchUpTimeout(Duration d) {
      return new Options(progress, d, clock, storeDecorator, secrets, takeover);
    }

    public Options withClock(Clock c) {
      return new Options(progress, catchUpTimeout, c, storeDecorator, secrets, takeover);
    }

    /** Wraps the object store the node opens (e.g. in a {@code MeteredObjectStore} to count requests). */
    public Options withStoreDecorator(java.util.function.UnaryOperator<ObjectStore> d) {
      return new Options(progress, catchUpTimeout, clock, d, secrets, takeover);
    }

    /** Where sources resolve {@code SECRET 'NAME'} references (default: the process environment). */
    public Options withSecrets(io.cairn.engine.source.Secrets s) {
      return new Options(progress, catchUpTimeout, clock, storeDecorator, s, takeover);
    }

    /**
     * Whether to take the store from a node that owns it (default true: the new node fences the
     * old one); false refuses to start while the owner looks alive.
     */
    public Options withTakeover(boolean t) {
      return new Options(progress, catchUpTimeout, clock, storeDecorator, secrets, t);
    }
  }

  private final CairnConfig config;
  private final Options options;
  private final ObjectStore store;
  private final SnapshotStore snapshots;
  private final Engine engine;
  private final SqlSession session;
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final AtomicReference<State> state = new AtomicReference<>(State.RECOVERING);
  private final CountDownLatch terminated = new CountDownLatch(1);
  private final Object snapshotLock = new Object();
  private volatile RecoveryReport report;
  private volatile Map<String, Object> lastSnapshot = Map.of();
  private HttpEndpoint http;
  private io.cairn.recovery.pgwire.PgWireServer pgwire;
  private AutoCloseable schedule;
  private java.util.concurrent.ScheduledExecutorService background;

  private Node(CairnConfig config, Options options) {
    this.config = config;
    this.options = options;
    ObjectStore raw = ObjectStores.open(config.storeUri(), config.storeProperties());
    ObjectStore decorated = options.storeDecorator().apply(CrashPoints.enabled() ? CrashPoints.wrap(raw) : raw);
    try {
      this.fence = StoreFence.acquire(decorated, options.clock(), options.takeover());
    } catch (RuntimeException e) {
      decorated.close();
      throw e;
    }
    this.store = fence.guard(decorated, this::onFenced);
    this.snapshots = SnapshotStore.open(store, config, options.clock());
    this.engine =
        Engine.builder()
            .workers(config.workers())
            .tickPolicy(new TickPolicy(config.tickMaxRecords(), config.tickMaxDuration()))
            .clock(options.clock())
            .secrets(options.secrets())
            .restartStrategy(config.sourceRestart())
            .build();
    CatalogLog log = snapshots.catalog();
    this.session = new SqlSession(engine, log, options.clock());
    session.setEpoch(fence.epoch());
  }

  private final StoreFence fence;
  private final java.util.concurrent.atomic.AtomicBoolean fencedOnce = new java.util.concurrent.atomic.AtomicBoolean();

  /** A newer node took the store: stop writing and shut down (on another thread: the caller may hold locks). */
  private void onFenced(StoreFence.FencedException e) {
    if (!fencedOnce.compareAndSet(false, true)) {
      return;
    }
    LOG.error("{}. Shutting down.", e.getMessage());
    Thread t = new Thread(this::close, "cairn-fenced");
    t.setDaemon(true);
    t.start();
  }

  /** Why this node stopped because another node took its store, or null. */
  public String fencedBy() {
    StoreFence.FencedException f = fence.fenced();
    return f == null ? null : f.getMessage();
  }

  /** The epoch this node owns the store with. */
  public long epoch() {
    return fence.epoch();
  }

  /**
   * Checks that the ports {@link #serve()} will listen on (HTTP, pgwire; 0 = off) can be bound
   * now. A start that is going to serve calls this before {@link #recover}: recovery takes the
   * store (fencing the node that owned it), so a start that would then fail to listen — a second
   * node on the same host with the same ports — must fail before it fences anyone.
   *
   * @throws IllegalStateException naming the key and the address in use
   */
  public static void requireListenPortsFree(CairnConfig config) {
    check(config.httpHost(), config.httpPort(), "http.port");
    check(config.pgwireHost(), config.pgwirePort(), "pgwire.port");
  }

  private static void check(String host, int port, String key) {
    if (port <= 0) {
      return;
    }
    try (java.net.ServerSocket s = new java.net.ServerSocket()) {
      s.bind(new java.net.InetSocketAddress(host, port));
    } catch (java.io.IOException e) {
      throw new IllegalStateException("Cannot start: " + host + ":" + port + " (" + key + ") cannot be bound: " + e.getMessage()
          + ". Is another cairn node running on this host? Give this one other ports (" + key + "; 0 turns the listener off). "
          + "Nothing was taken: the store's owner keeps running");
    }
  }

  /** Starts a node: recovery from the newest valid snapshot, then catch-up. */
  public static Node recover(CairnConfig config, Options options) {
    pgwirePassword(config); // a configuration error before any recovery work
    Node node = new Node(config, options);
    try {
      node.runRecovery();
      return node;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private void runRecovery() {
    long t0 = System.nanoTime();
    SnapshotStore.Recovered rec = snapshots.loadLatest();
    List<RecoveryReport.Fallback> fallbacks = new ArrayList<>();
    rec.rejected().forEach((id, why) -> {
      LOG.warn("Snapshot {} does not verify, falling back: {}", id, why);
      fallbacks.add(new RecoveryReport.Fallback(id, why));
    });
    long rowsLoaded = 0;
    Map<String, SourceOffsets> resumeFrom = Map.of();
    Engine.Restored restored = new Engine.Restored(List.of(), List.of());
    java.util.Set<String> inSnapshot = new java.util.HashSet<>();
    if (rec.found()) {
      long want = rec.manifest().catalogPosition();
      session.replay(want);
      if (session.position() < want) {
        throw new io.cairn.engine.catalog.CatalogIntegrityException(session.position(), "Cannot recover: snapshot "
            + rec.info().key() + " includes catalog entries up to " + (want - 1) + ", but the catalog in " + store.describe()
            + " ends at entry " + (session.position() - 1) + ": entries " + session.position() + ".." + (want - 1)
            + " are missing. Restore them (from a backup or object versions); cairn will not replay a shorter history");
      }
      String hash = rec.manifest().catalogHash();
      if (hash != null && !hash.equals(session.lastHash())) {
        throw new io.cairn.engine.catalog.CatalogIntegrityException(want - 1, "Cannot recover: catalog entry " + (want - 1)
            + " in " + store.describe() + " is not the entry snapshot " + rec.info().key() + " was taken with (it was "
            + "changed or replaced). Restore the original entry; cairn will not replay a different history");
      }
      EngineState st = rec.state();
      restored = engine.restore(st);
      engine.dataflows().forEach(d -> inSnapshot.add(d.name()));
      rowsLoaded = st.rows();
      resumeFrom = new LinkedHashMap<>(st.offsets());
      for (String s : restored.rereadSources()) {
        resumeFrom.remove(s);
      }
      LOG.info("Recovered snapshot {} as of tick {}: {} rows in {} ms", rec.info().key(), st.tick(), rowsLoaded, rec.loadMillis());
    } else {
      LOG.warn("NO SNAPSHOT FOUND in {}: FULL REPLAY — every source is read again from its beginning", store.describe());
    }
    session.replayAll();
    runInit();
    if (config.catchUpRateLimit() > 0) {
      for (String s : engine.sourceNames()) {
        engine.setReadRateLimit(s, config.catchUpRateLimit());
      }
    }
    // seek every source now, so that lost offsets or an unreachable source show in this report
    Map<String, Map<String, Long>> before = meters(engine.seekSources());
    long c0 = System.nanoTime();
    boolean caughtUp = catchUp();
    long catchUpMillis = (System.nanoTime() - c0) / 1_000_000;
    if (config.catchUpRateLimit() > 0) {
      for (String s : engine.sourceNames()) {
        engine.setReadRateLimit(s, 0);
      }
    }
    Map<String, Map<String, Long>> after = meters(engine.sourceStatuses());
    List<RecoveryReport.SourceReport> sources = new ArrayList<>();
    for (String s : engine.sourceNames()) {
      Map<String, Long> delta = new LinkedHashMap<>();
      Map<String, Long> b = before.getOrDefault(s, Map.of());
      after.getOrDefault(s, Map.of()).forEach((k, v) -> delta.put(k, v - b.getOrDefault(k, 0L)));
      SourceOffsets from = resumeFrom.getOrDefault(s, SourceOffsets.EMPTY);
      sources.add(new RecoveryReport.SourceReport(s, from.values(), delta.getOrDefault("records", 0L), delta));
    }
    List<RecoveryReport.DataflowReport> flows = new ArrayList<>();
    Map<String, io.cairn.engine.runtime.SourceStatus> statuses = engine.sourceStatuses();
    for (Dataflow d : engine.dataflows()) {
      String from = !inSnapshot.contains(d.name()) ? (rec.found() ? "new" : "full replay")
          : restored.rereadSources().contains(d.name()) ? "re-read from the source's beginning (no state in the snapshot)"
          : restored.recomputedViews().contains(d.name()) ? "recomputed from its inputs (no state in the snapshot)"
          : "snapshot";
      flows.add(new RecoveryReport.DataflowReport(d.name(), d.kind().name(), NodeStatus.displayState(d, statuses), NodeStatus.displayError(d, statuses), from));
    }
    long age = rec.found() ? Math.max(0, (options.clock().millis() - rec.info().lastModified().toEpochMilli()) / 1000) : 0;
    report =
        new RecoveryReport(
            rec.found() ? rec.manifest().snapshotId() : null,
            rec.found() ? rec.manifest().tick() : 0,
            age,
            rec.found() ? rec.manifest().catalogPosition() : 0,
            !rec.found(),
            fallbacks,
            rowsLoaded,
            rec.bytes(),
            rec.loadMillis(),
            catchUpMillis,
            caughtUp,
            (System.nanoTime() - t0) / 1_000_000,
            sources,
            flows);
    state.set(State.CAUGHT_UP);
    NodeMetrics.register(registry, engine, () -> report, () -> lastSnapshot);
  }

  /**
   * Runs the configured init statements once, when the catalog is empty. A start killed part-way
   * through init left a catalog that is exactly a prefix of the init statements: the rest are
   * run then. Any other catalog (a DROP, a statement someone ran) means init has run: nothing is
   * re-created, so a view dropped on purpose stays dropped.
   */
  private void runInit() {
    List<String> init = config.init();
    List<io.cairn.engine.catalog.CatalogEntry> entries = session.catalog().read(CatalogLog.FIRST_POSITION);
    int done = 0;
    while (done < entries.size() && done < init.size()
        && entries.get(done).sql().equals(io.cairn.engine.sql.SqlSession.normalize(init.get(done)))) {
      done++;
    }
    if (done < entries.size()) {
      if (!entries.isEmpty()) {
        LOG.debug("Catalog has {} entries: init statements already ran", entries.size());
      }
      return;
    }
    for (String stmt : init.subList(done, init.size())) {
      LOG.info("Running init statement: {}", stmt);
      session.execute(stmt);
    }
  }

  private boolean catchUp() {
    long deadline = options.catchUpTimeout() == null ? Long.MAX_VALUE : System.nanoTime() + options.catchUpTimeout().toNanos();
    try (CatchUpProgress progress = CatchUpProgress.start(options.progress())) {
      while (true) {
        engine.tick();
        CrashPoints.hit("recovery.tick");
        progress.update(engine.metrics().recordsIngested(), engine.lastClosedTick());
        if (engine.caughtUp()) {
          long failed = engine.sourceStatuses().values().stream()
              .filter(st -> st.state() != io.cairn.engine.runtime.SourceStatus.State.RUNNING).count()
              + engine.dataflows().stream().filter(d -> d.state() != Dataflow.State.RUNNING).count();
          progress.finish(failed == 0 ? "done" : "done, but " + failed + " source(s)/view(s) FAILED (see the report)");
          return true;
        }
        if (engine.sourceStatuses().values().stream().anyMatch(st -> st.state() == io.cairn.engine.runtime.SourceStatus.State.RESTARTING)) {
          // a source is waiting for its restart backoff: do not spin through empty ticks meanwhile
          java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
        }
        if (System.nanoTime() > deadline) {
          progress.finish("not caught up within " + options.catchUpTimeout());
          return false;
        }
      }
    }
  }

  private static Map<String, Map<String, Long>> meters(Map<String, io.cairn.engine.runtime.SourceStatus> statuses) {
    Map<String, Map<String, Long>> out = new HashMap<>();
    statuses.forEach((name, st) -> out.put(name, st.load()));
    return out;
  }

  /**
   * The pgwire password ({@code CAIRN_PGWIRE_PASSWORD}, null when unset).
   *
   * @throws io.cairn.recovery.config.ConfigException when the listener is off loopback and there is none
   */
  static String pgwirePassword(CairnConfig config) {
    String pw = System.getenv(io.cairn.recovery.config.ConfigLoader.PGWIRE_PASSWORD_ENV);
    pw = pw == null || pw.isEmpty() ? null : pw;
    if (config.pgwirePort() == 0 || pw != null) {
      return pw;
    }
    boolean loopback;
    try {
      loopback = java.net.InetAddress.getByName(config.pgwireHost()).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      throw new io.cairn.recovery.config.ConfigException("Bad configuration key 'pgwire.host': unknown host '" + config.pgwireHost() + "'");
    }
    if (!loopback) {
      throw new io.cairn.recovery.config.ConfigException("Bad configuration key 'pgwire.host': " + config.pgwireHost()
          + " is not a loopback address, so clients must authenticate: set " + io.cairn.recovery.config.ConfigLoader.PGWIRE_PASSWORD_ENV
          + " (checked by SCRAM-SHA-256; there is no TLS), or bind 127.0.0.1, or disable the listener with pgwire.port: 0");
    }
    return null;
  }

  /** Starts serving: ticks in the background, snapshots on the schedule, the HTTP endpoint, the pgwire listener. */
  public void serve() {
    engine.start();
    schedule = snapshots.schedule(config, this::scheduledSnapshot);
    if (config.httpPort() > 0) {
      http = new HttpEndpoint(config.httpHost(), config.httpPort(), config.httpMaxBodyBytes(), this);
    }
    if (config.pgwirePort() > 0) {
      pgwire = io.cairn.recovery.pgwire.PgWireServer.start(
          io.cairn.recovery.pgwire.PgWireServer.Settings.of(config.pgwireHost(), config.pgwirePort(), config.pgwireMaxConnections(),
              pgwirePassword(config)),
          new io.cairn.recovery.pgwire.PgWireServer.Backend() {
            @Override
            public List<io.cairn.engine.sql.Result> execute(String statement) {
              if (fence.fenced() != null) {
                throw fence.fenced();
              }
              return session.executeRequest(List.of(statement));
            }

            @Override
            public long catalogPosition() {
              return session.position();
            }

            @Override
            public List<io.cairn.recovery.pgwire.CatalogRelation> relations() {
              return session.engine().dataflows().stream()
                  .map(d -> new io.cairn.recovery.pgwire.CatalogRelation(d.id(), d.name(),
                      d.kind() == Dataflow.Kind.VIEW, d.schema()))
                  .toList();
            }
          });
    }
    background = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cairn-background");
      t.setDaemon(true);
      return t;
    });
    background.scheduleWithFixedDelay(() -> {
      try {
        fence.check();
      } catch (StoreFence.FencedException e) {
        onFenced(e);
      } catch (RuntimeException e) {
        LOG.debug("Epoch check failed (will retry): {}", e.getMessage());
      }
    }, 5, 5, java.util.concurrent.TimeUnit.SECONDS);
    background.execute(this::checkRetention);
    state.set(State.SERVING);
    LOG.info("cairn is serving: {} sources, {} views; snapshots '{}' ({}); store {}",
        engine.sourceNames().size(), engine.dataflows().size() - engine.sourceNames().size(), config.snapshotCron(),
        config.snapshotZone(), store.describe());
  }

  private volatile List<String> retentionWarnings = List.of();

  /**
   * Retention guard: warns when a source could lose, before the next snapshot, the data a restart
   * from the latest snapshot would need (a Kafka topic's retention shorter than the snapshot
   * interval). Runs at start and after each snapshot.
   */
  private void checkRetention() {
    Duration interval = snapshots.interval(config);
    List<String> warnings = new ArrayList<>();
    for (String name : engine.sourceNames()) {
      engine.sourceDefinition(name).ifPresent(def -> {
        try {
          if (def.connector().equals("kafka")) {
            io.cairn.connectors.kafka.KafkaRetentionGuard.check(def, options.secrets(), interval)
                .ifPresent(warnings::add);
          } else if (def.connector().equals("postgres")) {
            io.cairn.connectors.postgres.PostgresRetentionGuard.check(def, options.secrets(), interval, Duration.ofSeconds(1))
                .ifPresent(warnings::add);
          }
        } catch (RuntimeException e) {
          LOG.warn("Retention check of source {} failed: {}", name, e.getMessage());
        }
      });
    }
    retentionWarnings = List.copyOf(warnings);
  }

  private volatile String lastSnapshotError;

  private void scheduledSnapshot() {
    try {
      snapshotNow();
    } catch (RuntimeException e) {
      LOG.error("Scheduled snapshot failed; the previous snapshot stays the latest: {}", e.getMessage(), e);
    }
  }

  /** Blocks until {@link #close()}. */
  public void awaitTermination() throws InterruptedException {
    terminated.await();
  }

  /** What a snapshot captures between two ticks: the state, the catalog it goes with, and how long the engine was held. */
  private record Cut(EngineState state, long catalogPosition, String catalogHash, long pauseNanos) {}

  /**
   * Takes a snapshot now: captures the engine between two ticks (the pause), uploads in the
   * calling thread while the engine keeps ticking, commits, then lets the sources release what
   * the snapshot no longer needs, and applies retention. Returns the figures.
   */
  public Map<String, Object> snapshotNow() {
    synchronized (snapshotLock) {
      Cut cut = engine.betweenTicks(() -> {
        long p0 = System.nanoTime(); // the pause: the engine is held between two ticks
        EngineState captured = engine.capture();
        return new Cut(captured, session.position(), session.lastHash(), System.nanoTime() - p0);
      });
      EngineState st = cut.state();
      Map<String, Object> figures;
      try {
        figures = snapshots.write(st, cut.catalogPosition(), cut.catalogHash(), fence.epoch(), cut.pauseNanos());
        lastSnapshotError = null;
      } catch (RuntimeException e) {
        lastSnapshotError = java.time.Instant.now(options.clock()) + ": " + e.getMessage();
        throw e;
      }
      try {
        fence.check(); // a newer owner may have recovered from an older snapshot: never confirm offsets past it
      } catch (StoreFence.FencedException e) {
        onFenced(e);
        throw e;
      }
      engine.onSnapshotCommitted(st);
      lastSnapshot = figures;
      java.util.concurrent.ScheduledExecutorService bg = background;
      if (bg != null) {
        bg.execute(this::checkRetention); // off the snapshot's path: it samples the WAL rate for a second
      }
      try {
        snapshots.applyRetention();
      } catch (RuntimeException e) {
        LOG.warn("Retention after snapshot failed (will retry next time): {}", e.getMessage());
      }
      return figures;
    }
  }

  public Engine engine() {
    return engine;
  }

  public SqlSession session() {
    return session;
  }

  public RecoveryReport report() {
    return report;
  }

  public State state() {
    return state.get();
  }

  /** The pgwire port actually bound (when serving with a port), else -1. */
  public int pgwirePort() {
    return pgwire == null ? -1 : pgwire.port();
  }

  /** The HTTP port actually bound (when serving with a port). */
  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  // ------------------------------------------------------------------ NodeApi

  /** Runs statements and returns their results as text tables. */
  public String sql(String statements) {
    return sql(statements, "table");
  }

  @Override
  public String sql(String statements, String format) {
    if (!List.of("table", "json", "csv").contains(format)) {
      throw new IllegalArgumentException("Unknown SQL result format '" + format + "': use table, json or csv");
    }
    if (fence.fenced() != null) {
      throw fence.fenced();
    }
    List<io.cairn.engine.sql.Result> results = session.executeRequest(io.cairn.engine.sql.Statements.split(statements));
    if (format.equals("json")) {
      List<Map<String, Object>> out = new ArrayList<>();
      for (io.cairn.engine.sql.Result r : results) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("columns", r.columns());
        List<List<Object>> rows = new ArrayList<>();
        for (List<Object> row : r.rows()) {
          List<Object> vals = new ArrayList<>(row.size());
          for (Object v : row) {
            vals.add(v instanceof Double d && (d.isNaN() || d.isInfinite()) ? d.toString() : v); // JSON has no NaN
          }
          rows.add(vals);
        }
        one.put("rows", rows);
        one.put("message", r.message());
        out.add(one);
      }
      return json(out);
    }
    StringBuilder sb = new StringBuilder();
    for (io.cairn.engine.sql.Result r : results) {
      sb.append(format.equals("csv") ? r.renderCsv() : r.render());
    }
    return sb.toString();
  }

  @Override
  public String statusJson() {
    return json(NodeStatus.of(state.get().name(), engine, session.position(), lastSnapshot, lastSnapshotError, retentionWarnings));
  }

  @Override
  public String snapshotJson() {
    return json(snapshotNow());
  }

  @Override
  public String prometheus() {
    return registry.scrape();
  }

  @Override
  public String recoveryReportJson() {
    return report.toJson();
  }

  static String json(Object o) {
    try {
      return RecoveryReport.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    if (state.getAndSet(State.CLOSED) == State.CLOSED) {
      return;
    }
    try {
      if (schedule != null) {
        schedule.close();
      }
    } catch (Exception e) {
      LOG.warn("Stopping the snapshot schedule failed: {}", e.getMessage());
    }
    if (background != null) {
      background.shutdownNow();
    }
    if (http != null) {
      http.close();
    }
    if (pgwire != null) {
      pgwire.close();
    }
    engine.close();
    snapshots.close();
    fence.release();
    try {
      store.close();
    } catch (RuntimeException e) {
      LOG.warn("Closing the store failed: {}", e.getMessage());
    }
    terminated.countDown();
  }

  // ------------------------------------------------------------------ offline commands

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "Node[%s, %s]", state.get(), store.describe());
  }
}
