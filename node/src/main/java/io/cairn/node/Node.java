package io.cairn.node;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.sql.SqlSession;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectStores;
import io.cairn.node.config.CairnConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
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
 * up; {@link #serve} then runs ticks in the background, takes snapshots on the schedule and starts
 * the {@link Frontend}s found on the class path (the server module's HTTP endpoint and PostgreSQL
 * wire protocol listener), each over this node's {@link NodeApi}; the node names none of them.
 * {@link #close} stops everything; a node killed instead loses nothing that a committed snapshot
 * plus the sources' retained data cannot give back.
 *
 * <p>Parts: {@link Recovery} (what a start does before serving), {@link SnapshotService} (the one
 * capture path, scheduled or on request), {@link SnapshotStore} (the store's snapshots and
 * catalog), {@link StoreFence} (one writer per store), {@link NodeStatus} and {@link NodeMetrics}
 * (what status and /metrics show), {@link OfflineStore} (commands without a running node).
 *
 * <p>Lock order (deadlock freedom): {@code SnapshotService}'s lock (one snapshot at a time) → the SQL
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
    /** A member of a group that does not own the store: serves reads from the newest snapshot it loaded ({@link Standby}). */
    STANDBY,
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
      boolean takeover,
      boolean httpWhileRecovering) {
    public static Options defaults() {
      return new Options(false, null, Clock.systemUTC(), s -> s, io.cairn.engine.source.Secrets.environment(), true, false);
    }

    public Options withProgress(boolean p) {
      return new Options(p, catchUpTimeout, clock, storeDecorator, secrets, takeover, httpWhileRecovering);
    }

    /** Stop catching up after {@code d} (null: no limit); the report then says not caught up. */
    public Options withCatchUpTimeout(Duration d) {
      return new Options(progress, d, clock, storeDecorator, secrets, takeover, httpWhileRecovering);
    }

    public Options withClock(Clock c) {
      return new Options(progress, catchUpTimeout, c, storeDecorator, secrets, takeover, httpWhileRecovering);
    }

    /** Wraps the object store the node opens (e.g. in a {@code MeteredObjectStore} to count requests). */
    public Options withStoreDecorator(java.util.function.UnaryOperator<ObjectStore> d) {
      return new Options(progress, catchUpTimeout, clock, d, secrets, takeover, httpWhileRecovering);
    }

    /** Where sources resolve {@code SECRET 'NAME'} references (default: the process environment). */
    public Options withSecrets(io.cairn.engine.source.Secrets s) {
      return new Options(progress, catchUpTimeout, clock, storeDecorator, s, takeover, httpWhileRecovering);
    }

    /**
     * Whether to take the store from a node that owns it (default true: the new node fences the
     * old one); false refuses to start while the owner looks alive.
     */
    public Options withTakeover(boolean t) {
      return new Options(progress, catchUpTimeout, clock, storeDecorator, secrets, t, httpWhileRecovering);
    }

    /**
     * Whether the HTTP endpoint listens from the first second of {@link #recover}, before the store
     * is read (default false; {@code cairn run} turns it on): {@code /status}, {@code /metrics} and
     * the health probes then answer through recovery and catch-up, SQL answers 503 "not ready".
     */
    public Options withHttpWhileRecovering(boolean h) {
      return new Options(progress, catchUpTimeout, clock, storeDecorator, secrets, takeover, h);
    }
  }

  private final CairnConfig config;
  private final Options options;
  private final ObjectStore store;
  private final SnapshotStore snapshots;
  // set in the constructor, and again (before the node is handed out) when recovery starts over on
  // a fresh engine after falling back past the catalog position it had replayed to
  private volatile Engine engine;
  private volatile SqlSession session;
  private volatile SnapshotService snapshotService;
  /** Writes the sinks while this node owns the store and serves; null before {@link #serve()}. */
  private volatile SinkService sinkService;
  /** Where the recovery is (the last phase that ended), for status while {@link State#RECOVERING}. */
  private volatile String phase = "starting";
  private final long startedNanos = System.nanoTime();
  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final AtomicReference<State> state = new AtomicReference<>(State.RECOVERING);
  private final CountDownLatch terminated = new CountDownLatch(1);
  private volatile RecoveryReport report;
  /** The listeners started for this node ({@link Frontend}): early ones, then the rest at {@link #serve()}. */
  private final List<Frontend> frontends = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** This node's membership of its group; null without one. Closing it hands the store over at once. */
  private volatile io.cairn.node.group.GroupMembership membership;
  private AutoCloseable schedule;
  private java.util.concurrent.ScheduledExecutorService background;
  /** Each source's live ingest rate, sampled from published load meters while serving. */
  private final IngestRates ingestRates = new IngestRates();

  /**
   * Opens the store. An owner takes it at once ({@link #takeStore}); a standby ({@code asStandby})
   * reads it through a closed {@link WriteGate} and a {@link BatchFileCache}, and takes it only when
   * the group makes it the owner ({@link #takeOver}).
   */
  private Node(CairnConfig config, Options options, boolean asStandby) {
    this.config = config;
    this.options = options;
    this.statementSlots = new java.util.concurrent.Semaphore(config.limits().statementSlots(), true);
    ObjectStore raw = ObjectStores.open(config.storeUri(), config.storeProperties());
    this.decorated = options.storeDecorator().apply(CrashPoints.enabled() ? CrashPoints.wrap(raw) : raw);
    this.cache = asStandby ? new BatchFileCache(decorated) : null;
    this.gate = new WriteGate(asStandby ? cache : decorated, "this node is a standby in group '" + config.group().name()
        + "': only the owner writes the store");
    this.store = gate;
    if (asStandby) {
      this.snapshots = SnapshotStore.open(store, config, options.clock());
      this.state.set(State.STANDBY);
      Pair empty = freshPair(); // serves (nothing) until the first load
      this.engine = empty.engine();
      this.session = empty.session();
      return;
    }
    io.cairn.snapshotter.catalog.ObjectStoreCatalogLog catalog;
    try {
      catalog = takeStore();
    } catch (RuntimeException e) {
      decorated.close();
      throw e;
    }
    // the session reads the catalog through the guarded store, sharing the entries just read
    this.snapshots = SnapshotStore.open(store, config, options.clock(), catalog);
    newEngine();
  }

  /**
   * Checks the catalog and takes the store: a start that would fail on a broken catalog must not
   * first fence the node that owns the store, nor on a catalog shorter than its head witness says
   * it was (reads only; listed before the catalog is read). Then the epoch, the first commit slot
   * ({@link StoreFence}), and writes go through the epoch's guard. Returns the catalog as read.
   */
  private io.cairn.snapshotter.catalog.ObjectStoreCatalogLog takeStore() {
    java.util.Optional<io.cairn.snapshotter.catalog.CatalogTail.Witness> tail = io.cairn.snapshotter.catalog.CatalogTail.highest(decorated);
    io.cairn.snapshotter.catalog.ObjectStoreCatalogLog catalog = new io.cairn.snapshotter.catalog.ObjectStoreCatalogLog(decorated);
    List<io.cairn.engine.catalog.CatalogEntry> entries = catalog.read(CatalogLog.FIRST_POSITION);
    io.cairn.engine.catalog.CatalogIntegrityException.verifyChain(entries, "", catalog.describe());
    boolean headWitnessed = io.cairn.snapshotter.catalog.CatalogTail.check(tail, entries, catalog.describe());
    StoreFence f = StoreFence.acquire(decorated, options.clock(), options.takeover());
    this.fence = f;
    gate.open(f.guard(decorated, this::onFenced));
    if (!headWitnessed) {
      io.cairn.snapshotter.catalog.CatalogTail.witness(decorated, entries.get(entries.size() - 1));
    }
    return catalog;
  }

  /** An engine and its SQL session. */
  record Pair(Engine engine, SqlSession session) {
    void close() {
      engine.close();
    }
  }

  /** A new, empty engine and its SQL session (read-only while this node is a standby). */
  private Pair freshPair() {
    Engine e =
        Engine.builder()
            .workers(config.workers())
            .tickPolicy(new TickPolicy(config.tickMaxRecords(), config.tickMaxDuration()))
            .clock(options.clock())
            .secrets(options.secrets())
            .restartStrategy(config.sourceRestart())
            .sinkMaxPendingRows(config.limits().sinkMaxPendingRows())
            .build();
    SqlSession s = new SqlSession(e, snapshots.sessionCatalog(), options.clock());
    StoreFence f = fence;
    if (f != null) {
      s.setEpoch(f.epoch());
    } else {
      s.setReadOnly("this node is a standby in group '" + config.group().name() + "'; run it on the owner ("
          + groupOwner() + ")");
    }
    return new Pair(e, s);
  }

  private String groupOwner() {
    io.cairn.node.group.GroupMembership m = membership;
    String o = m == null ? "" : m.view().owner();
    return o == null || o.isEmpty() ? "see /status on any member" : "member " + o;
  }

  /** A new, empty engine, its SQL session and the snapshot service over them. */
  private void newEngine() {
    Pair p = freshPair();
    this.engine = p.engine();
    this.session = p.session();
    this.snapshotService = new SnapshotService(config, options, snapshots, engine, session, fence, this::onFenced);
  }

  /** The store as opened, before the write gate (reads; the epoch's guard wraps it for writes). */
  private final ObjectStore decorated;
  /** Reads and, once this node owns the store, writes through its epoch's guard. */
  private final WriteGate gate;
  /** A standby's copies of batch files (null for a node that owned the store from its start). */
  private final BatchFileCache cache;
  /** Following the owner's snapshots while this node stands by; null otherwise. */
  private volatile Standby standby;
  /** Whether the engine holds a standby's loaded state: reads are served while the takeover catches up. */
  private volatile boolean warm;
  /** The epoch this node writes under; null while it is a standby. */
  private volatile StoreFence fence;
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

  /**
   * Whether this node still owns the store, as far as the store says now (a sink fenced by
   * another writer asks before it fences back); a store it cannot reach counts as yes.
   */
  private boolean stillOwner() {
    StoreFence f = fence;
    if (f == null) {
      return false;
    }
    try {
      f.check();
      return true;
    } catch (StoreFence.FencedException e) {
      onFenced(e);
      return false;
    } catch (RuntimeException e) {
      return true;
    }
  }

  /** What status shows of each sink (empty before {@link #serve()}). */
  List<SinkService.Status> sinkStatuses() {
    SinkService sinks = sinkService;
    return sinks == null ? List.of() : sinks.statuses();
  }

  /** Why this node stopped because another node took its store, or null. */
  public String fencedBy() {
    StoreFence f = fence;
    StoreFence.FencedException e = f == null ? null : f.fenced();
    return e == null ? null : e.getMessage();
  }

  /** The epoch this node owns the store with (0 while it is a standby). */
  public long epoch() {
    StoreFence f = fence;
    return f == null ? 0 : f.epoch();
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

  /**
   * Starts a node: recovery from the newest valid snapshot, then catch-up. With a group ({@code
   * group.*}) the node first joins it; unless the group makes it the owner within the session
   * timeout, it stands by as a warm {@link Standby} — serving reads from the owner's newest
   * snapshot through every frontend — and this call returns when the group makes it the owner and
   * it has taken the store over ({@link #takeOver}).
   */
  public static Node recover(CairnConfig config, Options options) {
    List<Frontend.Provider> providers = Frontend.providers();
    for (Frontend.Provider p : providers) {
      p.check(config); // a configuration error before any recovery work
    }
    StartingApi starting = new StartingApi(config);
    List<Frontend> early = new ArrayList<>();
    Joined joined = null;
    Node node;
    try {
      if (options.httpWhileRecovering()) {
        // listening before the store is read: a start that takes minutes is seen from its first second
        for (Frontend.Provider p : providers) {
          if (p.startsEarly() && p.enabled(config)) {
            early.add(p.start(config, starting));
          }
        }
      }
      joined = join(config, starting);
      if (joined != null && !joined.ownerAfterFirstRebalance(config.group().sessionTimeout())) {
        for (Frontend.Provider p : providers) { // a standby serves reads on every listener
          if (p.enabled(config) && early.stream().noneMatch(f -> f.name().equals(p.name()))) {
            early.add(p.start(config, starting));
          }
        }
        return standByThenTakeOver(config, options, starting, early, joined);
      }
      node = new Node(config, options, false);
    } catch (RuntimeException e) {
      early.forEach(Frontend::close);
      if (joined != null) {
        joined.membership().close();
      }
      throw e;
    }
    node.membership = joined == null ? null : joined.membership();
    node.frontends.addAll(early);
    starting.node = node;
    try {
      try {
        node.report = new Recovery(config, node.options, node.store, node.snapshots, node.engine, node.session)
            .onPhaseEnd(p -> node.phase = p).run();
      } catch (Recovery.FellBackPastReplay again) {
        LOG.warn(again.getMessage());
        node.engine.close();
        node.newEngine();
        node.report = new Recovery(config, node.options, node.store, node.snapshots, node.engine, node.session, again)
            .onPhaseEnd(p -> node.phase = p).run();
      }
      node.recovered();
      return node;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private void recovered() {
    phase = "recovered";
    state.set(State.CAUGHT_UP);
    NodeMetrics.register(registry, engine, () -> report, snapshotService::lastSnapshot);
  }

  /** A membership of a group and the latch the group opens when it makes this member the owner. */
  private record Joined(io.cairn.node.group.GroupMembership membership, CountDownLatch owner) {
    /**
     * Waits for this member's first rebalance (at most {@code within}: a member that has heard
     * nothing by then stands by) and says whether the group made it the owner. A member joining a
     * group that has an owner knows it is a standby as soon as its join completes.
     */
    boolean ownerAfterFirstRebalance(Duration within) {
      try {
        membership.awaitJoined(within);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot start: interrupted while joining group '" + membership.settings().group() + "'", e);
      }
      return owner.getCount() == 0;
    }

    /** Waits until the group makes this member the owner. */
    void awaitOwner() {
      try {
        owner.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot start: interrupted while standing by in group '"
            + membership.settings().group() + "'", e);
      }
    }
  }

  /**
   * With a group configured ({@code group.*}), joins it; null without a group. The group says who
   * should own the store; the epoch this node takes when it does ({@link StoreFence}) says who may
   * write.
   */
  private static Joined join(CairnConfig config, StartingApi starting) {
    CairnConfig.Group g = config.group();
    if (!g.enabled()) {
      return null;
    }
    String member = memberId(config);
    CountDownLatch owner = new CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<io.cairn.node.group.GroupMembership> self = new java.util.concurrent.atomic.AtomicReference<>();
    io.cairn.node.group.GroupMembership m = io.cairn.node.group.GroupMembership.join(
        new io.cairn.node.group.GroupMembership.Settings(g.bootstrapServers(), g.name(), member, g.sessionTimeout(), g.properties()),
        own -> {
          io.cairn.node.group.GroupMembership mine = self.get();
          if (own) {
            owner.countDown();
          } else if (owner.getCount() == 0 && (mine == null || !mine.closing())) {
            LOG.warn("Group '{}' gave the store to another member: this node serves until the store's epoch fences it", g.name());
          }
        });
    self.set(m);
    starting.membership = m;
    starting.standby = g.name();
    LOG.info("Group '{}' on {}: member {} joined", g.name(), g.bootstrapServers(), member);
    return new Joined(m, owner);
  }

  /**
   * Stands by: opens the store read-only, loads the newest snapshot and follows the owner's
   * ({@link Standby}), serving reads through {@code starting}; when the group makes this member the
   * owner, takes the store over and returns the node, caught up and ready to {@link #serve}.
   */
  private static Node standByThenTakeOver(CairnConfig config, Options options, StartingApi starting, List<Frontend> early,
      Joined joined) {
    Node node;
    try {
      node = new Node(config, options, true);
    } catch (RuntimeException e) {
      early.forEach(Frontend::close);
      joined.membership().close();
      throw e;
    }
    node.membership = joined.membership();
    node.frontends.addAll(early);
    try {
      LOG.info("Group '{}': member {} stands by, following the owner's snapshots in {}", config.group().name(),
          joined.membership().settings().memberId(), node.store.describe());
      node.standby = new Standby(node.standbyHost(), config.group().standbyRefresh(), node.cache, config.group().hotStandby());
      node.standby.start(); // the first load; until it is done the listeners answer STANDBY, not ready
      starting.node = node;
      starting.standby = null;
      joined.awaitOwner();
      LOG.info("Group '{}': member {} owns the store now; taking it over", config.group().name(),
          joined.membership().settings().memberId());
      node.takeOver();
      return node;
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
  }

  private Standby.Host standbyHost() {
    return new Standby.Host() {
      @Override
      public Pair freshPair() {
        return Node.this.freshPair();
      }

      @Override
      public Pair install(Standby.Held held) {
        Engine oldEngine = engine;
        SqlSession oldSession = session;
        session = held.session();
        engine = held.engine();
        warm = true;
        return oldEngine == null ? null : new Pair(oldEngine, oldSession);
      }

      @Override
      public Recovery recovery(Pair pair, Recovery.FellBackPastReplay previous) {
        return new Recovery(config, options, store, snapshots, pair.engine(), pair.session(), previous);
      }

      @Override
      public SnapshotStore snapshots() {
        return snapshots;
      }

      @Override
      public Duration statementTimeout() {
        return config.limits().statementTimeout();
      }
    };
  }

  /**
   * The group made this standby the owner: take the next epoch and the first commit slot, load the
   * newest snapshot if it is not the one held (a Postgres slot may be confirmed to its LSN already),
   * then resume — replay the rest of the catalog, seek the sources (Postgres resumes the slot),
   * catch up. Reads go on being served from the held state meanwhile.
   */
  private void takeOver() {
    Standby.Held held = standby.stop();
    state.set(State.RECOVERING);
    phase = "taking the store";
    takeStore();
    Optional<io.cairn.snapshotter.ManifestInfo> newest = snapshots.newest();
    boolean newer = held == null
        || !java.util.Objects.equals(held.key(), newest.map(io.cairn.snapshotter.ManifestInfo::key).orElse(null));
    // a hot standby that holds no source needs no newer snapshot: its state is its own snapshot's plus
    // what it read since, a consistent recovery point; a held source (a Postgres slot) must resume from the newest
    boolean hotAndNothingHeld = held != null && config.group().hotStandby() && held.engine().heldSources().isEmpty();
    if (newer && !hotAndNothingHeld) {
      LOG.info("Takeover: loading the newest snapshot {} (held: {})", newest.map(io.cairn.snapshotter.ManifestInfo::key).orElse("none"),
          held == null ? "nothing" : held.key());
      standby.refresh();
      held = standby.held();
    }
    standby.close();
    standby = null;
    if (held == null) {
      throw new IllegalStateException("Cannot take over the store " + store.describe() + ": no snapshot could be loaded");
    }
    if (engine.ticking()) {
      engine.pause(); // a hot standby's driver: the takeover's catch-up ticks on this thread
    }
    engine.releaseHeldSources();
    session.setReadOnly(null);
    session.setEpoch(fence.epoch());
    snapshotService = new SnapshotService(config, options, snapshots, engine, session, fence, this::onFenced);
    report = new Recovery(config, options, store, snapshots, engine, session).onPhaseEnd(p -> phase = p)
        .resume(held.loaded(), true);
    recovered();
    warm = false;
  }

  /** This member's name in its group: host, process and HTTP port. */
  static String memberId(CairnConfig config) {
    String host;
    try {
      host = java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.net.UnknownHostException e) {
      host = "unknown-host";
    }
    return host + "-" + ProcessHandle.current().pid() + "-" + config.httpPort();
  }

  /** The heap that must be free for the snapshot encoder's warm-up to run (see {@link #serve}). */
  static final long WARM_UP_MIN_FREE_BYTES = 256L << 20;

  /** Starts serving: ticks in the background, snapshots on the schedule, the {@link Frontend}s (HTTP, pgwire). */
  public void serve() {
    engine.start();
    sinkService = new SinkService(engine, this::stillOwner, registry);
    sinkService.start();
    schedule = snapshots.schedule(config, snapshotService::scheduledSnapshot);
    for (Frontend.Provider p : Frontend.providers()) {
      if (p.enabled(config) && frontends.stream().noneMatch(f -> f.name().equals(p.name()))) {
        frontends.add(p.start(config, this));
      }
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
    snapshotService.useBackground(background);
    background.execute(snapshotService::checkRetention);
    // the first snapshot after a start would run the encoder in code not compiled yet: compile it
    // half a minute in (a scheduled snapshot is usually hours away; a node that lives less pays
    // nothing), on a thread of its own at low priority
    background.schedule(() -> {
      Thread t = new Thread(() -> {
        Runtime rt = Runtime.getRuntime();
        long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
        if (free < WARM_UP_MIN_FREE_BYTES) { // it allocates ~200 MB over 1-2 s (two batches of 200,000 rows live at once): not on a tight heap
          LOG.info("Snapshot encoder not warmed up: {} MB of heap free, it needs {} MB", free >> 20, WARM_UP_MIN_FREE_BYTES >> 20);
          return;
        }
        try {
          LOG.info("Snapshot encoder warmed up in {} ms (the first snapshot runs compiled code)", snapshots.warmUpEncoder());
          long held = 0;
          for (int i = 0; i < 3; i++) { // captures between two ticks, discarded: the first snapshot's pause is then not its code's first run
            held = snapshotService.warmUpCapture();
          }
          LOG.info("Snapshot capture warmed up: the last of three held the engine {} ms", String.format(java.util.Locale.ROOT, "%.3f", held / 1e6));
        } catch (RuntimeException | OutOfMemoryError e) {
          LOG.warn("Warming the snapshot encoder and capture up failed (snapshots are not affected): {}", e.toString());
        }
      }, "cairn-snapshot-warm-up");
      t.setDaemon(true);
      t.setPriority(Thread.MIN_PRIORITY);
      t.start();
    }, 30, java.util.concurrent.TimeUnit.SECONDS);
    ingestRates.sample(engine.sourceStatuses()); // the window starts when serving starts: a catch-up's rate is not live ingest
    long every = IngestRates.SAMPLE_EVERY.toMillis();
    background.scheduleWithFixedDelay(() -> ingestRates.sample(engine.sourceStatuses()), every, every,
        java.util.concurrent.TimeUnit.MILLISECONDS);
    state.set(State.SERVING);
    LOG.info("cairn is serving: {} sources, {} views; snapshots '{}' ({}); store {}",
        engine.sourceNames().size(), engine.dataflows().size() - engine.sourceNames().size(), config.snapshotCron(),
        config.snapshotZone(), store.describe());
  }

  /** Blocks until {@link #close()}. */
  public void awaitTermination() throws InterruptedException {
    terminated.await();
  }

  /**
   * Takes a snapshot now (see {@link SnapshotService#snapshotNow}) and returns its outcome.
   */
  public SnapshotOutcome snapshotNow() {
    return snapshotService.snapshotNow();
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
    return port("pgwire");
  }

  /** The HTTP port actually bound (when serving with a port), else -1. */
  public int httpPort() {
    return port("http");
  }

  private int port(String frontend) {
    return frontends.stream().filter(f -> f.name().equals(frontend)).mapToInt(Frontend::port).findFirst().orElse(-1);
  }

  // ------------------------------------------------------------------ NodeApi

  /** Runs statements (within the configured statement timeout) and returns their results as text tables. */
  public String sql(String statements) {
    StringBuilder sb = new StringBuilder();
    for (io.cairn.engine.sql.Result r : execute(io.cairn.engine.sql.Statements.split(statements),
        io.cairn.engine.sql.StatementBudget.of(config.limits().statementTimeout()))) {
      sb.append(r.render());
    }
    return sb.toString();
  }

  @Override
  public Duration statementTimeout() {
    return config.limits().statementTimeout();
  }

  /** Requests executing statements now (HTTP and pgwire): status shows it, so a cancel's effect can be seen. */
  private final java.util.concurrent.atomic.AtomicInteger statementsRunning = new java.util.concurrent.atomic.AtomicInteger();

  /**
   * Admission control: at most {@code sql.max-concurrent-statements} requests execute statements at
   * once (HTTP and pgwire together); the others wait for a slot within their budget. More threads
   * than cores scanning at once would only share the CPU with the ticks and the status answers.
   */
  private final java.util.concurrent.Semaphore statementSlots;

  private <T> T running(io.cairn.engine.sql.StatementBudget budget, java.util.function.Supplier<T> work) {
    try {
      while (!statementSlots.tryAcquire(20, java.util.concurrent.TimeUnit.MILLISECONDS)) {
        budget.check(() -> "waiting for one of " + config.limits().statementSlots()
            + " statement slots, all busy (sql.max-concurrent-statements)");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      budget.cancel(io.cairn.engine.sql.StatementCanceledException.USER_REQUEST);
      budget.check();
    }
    statementsRunning.incrementAndGet();
    try {
      return work.get();
    } catch (StoreFence.FencedException e) {
      // found out at this statement's catalog append: not the client's fault
      throw fenced("run statements", e);
    } finally {
      statementsRunning.decrementAndGet();
      statementSlots.release();
    }
  }

  /**
   * Throws {@link io.cairn.node.NodeUnavailableException} when this node cannot serve
   * {@code what}: another node took the store (the message names it and its epoch), or the node
   * is still recovering (the message says where it is).
   */
  private void requireServing(String what) {
    requireServing(what, false);
  }

  /** As {@link #requireServing(String)}; {@code read} also serves a standby's reads and a warm takeover's. */
  private void requireServing(String what, boolean read) {
    StoreFence fe = fence;
    StoreFence.FencedException f = fe == null ? null : fe.fenced();
    if (f != null) {
      throw fenced(what, f);
    }
    State s = state.get();
    if (s == State.STANDBY && !read) {
      throw new io.cairn.node.NodeUnavailableException(io.cairn.node.NodeUnavailableException.Reason.NOT_READY,
          "Cannot " + what + ": this node is a standby in group '" + config.group().name() + "'; ask the owner ("
              + groupOwner() + ")");
    }
    if (read && (s == State.STANDBY || (s == State.RECOVERING && warm))) {
      return;
    }
    if (s == State.STANDBY || s == State.RECOVERING || s == State.CLOSED) {
      throw new io.cairn.node.NodeUnavailableException(io.cairn.node.NodeUnavailableException.Reason.NOT_READY,
          "Cannot " + what + ": the node is not ready: " + (s == State.CLOSED ? "it is shutting down" : recoveringWhy())
              + "; GET /health/ready answers 200 once it is");
    }
  }

  private io.cairn.node.NodeUnavailableException fenced(String what, StoreFence.FencedException f) {
    return new io.cairn.node.NodeUnavailableException(io.cairn.node.NodeUnavailableException.Reason.FENCED,
        "Cannot " + what + ": this node (epoch " + epoch() + ") no longer owns the store: " + f.getMessage());
  }

  private String recoveringWhy() {
    return "recovering for " + (System.nanoTime() - startedNanos) / 1_000_000 + " ms, last phase done: " + phase
        + ", last closed tick " + engine.lastClosedTick();
  }

  @Override
  public List<io.cairn.engine.sql.Result> execute(List<String> statements, io.cairn.engine.sql.StatementBudget budget) {
    requireServing("run statements", true);
    for (String st : statements) {
      if (io.cairn.engine.sql.Subscribe.is(st)) {
        throw new io.cairn.engine.sql.SqlException("Cannot run SUBSCRIBE as a query (unsupported: it streams): over pgwire use "
            + "COPY (SUBSCRIBE ...) TO STDOUT, or DECLARE c CURSOR FOR SUBSCRIBE ... and FETCH, as simple queries; over HTTP "
            + "send it alone in POST /sql");
      }
    }
    if (statements.size() == 1 && isShowFreshness(statements.get(0))) {
      return List.of(freshness());
    }
    return running(budget, () -> session.executeRequest(statements, budget));
  }

  @Override
  public io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement) {
    requireServing("subscribe", true);
    Engine e = engine;
    io.cairn.engine.sink.ChangeFeed feed;
    try {
      feed = e.feed(statement.name());
    } catch (IllegalArgumentException unknown) {
      throw new io.cairn.engine.sql.SqlException("Cannot subscribe: unknown view '" + statement.name() + "'");
    }
    return new io.cairn.engine.sql.Subscribe.Running(statement, io.cairn.engine.sql.Subscribe.columns(feed.schema()),
        feed.subscribe(statement.snapshot(), config.limits().subscribeMaxRows()));
  }

  private static boolean isShowFreshness(String statement) {
    String s = statement.strip();
    if (s.endsWith(";")) {
      s = s.substring(0, s.length() - 1).strip();
    }
    return s.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ").equals("show freshness");
  }

  /**
   * {@code SHOW FRESHNESS}: how fresh this member's answers are — one row per source: the member's
   * role, the tick it serves, the snapshot its state comes from (a standby's, or the owner's last
   * committed one) and how long ago it was committed, whether a newer snapshot is in the store, and
   * per source whether it is read here, its offsets and whether it is caught up.
   */
  private io.cairn.engine.sql.Result freshness() {
    State st = state.get();
    Standby sb = standby;
    String role = st == State.STANDBY ? (config.group().hotStandby() ? "standby (hot)" : "standby (warm)")
        : membership == null ? "owner (no group)" : "owner";
    Engine e = engine;
    long tick = e.lastClosedTick();
    Long snapshotTick = null;
    Long snapshotAge = null;
    Boolean behind = null;
    Map<String, Object> sbStatus = sb == null ? Map.of() : sb.status();
    if (sb != null && sbStatus.containsKey("snapshotTick")) {
      snapshotTick = ((Number) sbStatus.get("snapshotTick")).longValue();
      snapshotAge = (Long) sbStatus.get("lagBehindSnapshotMillis");
      behind = (Boolean) sbStatus.get("behindNewestSnapshot");
    } else if (sb == null && snapshotService != null) {
      Optional<SnapshotOutcome> last = snapshotService.lastSnapshot();
      if (last.isPresent()) {
        snapshotTick = last.get().tick();
      }
    }
    java.util.Set<String> held = new java.util.HashSet<>();
    if (sb != null && sb.held() != null) {
      held.addAll(sb.held().engine().heldSources());
    }
    List<List<Object>> rows = new ArrayList<>();
    Map<String, io.cairn.engine.runtime.SourceStatus> statuses = e.sourceStatuses();
    List<String> names = e.sourceNames().isEmpty() ? List.of("") : e.sourceNames();
    for (String name : names) {
      io.cairn.engine.runtime.SourceStatus ss = statuses.get(name);
      boolean read = !name.isEmpty() && (st != State.STANDBY || (config.group().hotStandby() && !held.contains(name) && ss != null));
      List<Object> r = new ArrayList<>();
      r.add(role);
      r.add(st.name());
      r.add(tick);
      r.add(snapshotTick);
      r.add(snapshotAge);
      r.add(behind);
      r.add(name.isEmpty() ? null : name);
      r.add(name.isEmpty() ? null : read);
      r.add(ss == null || !read ? null : ss.offsets().values().toString());
      r.add(ss == null || !read ? null : ss.caughtUp());
      rows.add(r);
    }
    return new io.cairn.engine.sql.Result(List.of("role", "state", "serving_tick", "snapshot_tick", "snapshot_age_ms",
        "newer_snapshot_in_store", "source", "source_read_here", "source_offsets", "source_caught_up"),
        List.of(io.cairn.engine.row.Type.TEXT, io.cairn.engine.row.Type.TEXT, io.cairn.engine.row.Type.BIGINT,
            io.cairn.engine.row.Type.BIGINT, io.cairn.engine.row.Type.BIGINT, io.cairn.engine.row.Type.BOOLEAN,
            io.cairn.engine.row.Type.TEXT, io.cairn.engine.row.Type.BOOLEAN, io.cairn.engine.row.Type.TEXT,
            io.cairn.engine.row.Type.BOOLEAN),
        rows, "SHOW FRESHNESS");
  }

  @Override
  public long catalogPosition() {
    return session.position();
  }

  @Override
  public List<Dataflow> dataflows() {
    return engine.dataflows();
  }

  @Override
  public String statusJson() {
    SnapshotService svc = snapshotService;
    Map<String, Object> s = NodeStatus.of(state.get().name(), engine, session.position(),
        svc == null ? java.util.Optional.empty() : svc.lastSnapshot(), svc == null ? null : svc.lastError(),
        svc == null ? List.of() : svc.retentionWarnings(), ingestRates.rates(engine.sourceStatuses()));
    Health h = health();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("state", s.remove("state"));
    out.put("live", h.live());
    out.put("ready", h.ready());
    if (!h.why().isEmpty()) {
      out.put("notReady", h.why());
    }
    out.put("phase", phase);
    out.put("uptimeMillis", (System.nanoTime() - startedNanos) / 1_000_000);
    Map<String, Object> sinks = new LinkedHashMap<>();
    for (SinkService.Status st : sinkStatuses()) {
      sinks.put(st.name(), SinkService.json(st));
    }
    out.put("sinks", sinks);
    out.put("epoch", epoch());
    out.put("fencedBy", fencedBy());
    io.cairn.node.group.GroupMembership m = membership;
    if (m != null) {
      out.put("group", m.settings().group());
      // the group's word, not the epoch's: a member the group has moved on from serves until it is fenced
      Standby sb = standby;
      out.put("role", state.get() == State.STANDBY ? "standby" : sb != null || warm ? "owner, taking over"
          : m.isOwner() ? "owner" : "owner, no longer assigned by the group");
      out.put("member", m.settings().memberId());
      io.cairn.node.group.GroupMembership.View v = m.view();
      out.put("members", v.members());
      out.put("groupOwner", v.owner());
      out.put("groupReadAt", v.readAtMillis() == 0 ? null : java.time.Instant.ofEpochMilli(v.readAtMillis()).toString());
      if (sb != null) {
        out.put("standby", sb.status());
      }
    }
    out.put("statementsRunning", statementsRunning.get());
    out.putAll(s);
    return json(out);
  }

  @Override
  public Health health() {
    int deadlocked = Deadlocks.count();
    boolean live = deadlocked == 0;
    State s = state.get();
    String why;
    StoreFence fe = fence;
    StoreFence.FencedException f = fe == null ? null : fe.fenced();
    if (f != null) {
      why = "fenced: " + f.getMessage();
    } else if (s == State.STANDBY) {
      why = "standing by in group '" + config.group().name() + "': serves reads as of the snapshot it holds (see /status); "
          + "takes over when the group makes it the owner";
    } else if (s == State.RECOVERING) {
      why = recoveringWhy();
    } else if (s == State.CAUGHT_UP) {
      why = "recovered, not serving yet";
    } else if (s == State.CLOSED) {
      why = "shutting down";
    } else {
      List<String> behind = new ArrayList<>();
      engine.sourceStatuses().forEach((name, st) -> {
        if (!st.caughtUp()) {
          behind.add(name + " (" + st.state() + ")");
        }
      });
      why = behind.isEmpty() ? "" : "sources not caught up: " + String.join(", ", behind);
    }
    if (!live) {
      why = deadlocked + " deadlocked threads" + (why.isEmpty() ? "" : "; " + why);
    }
    return new Health(live, live && why.isEmpty(), s.name(), why);
  }

  @Override
  public String snapshotJson() {
    requireServing("take a snapshot");
    return json(snapshotNow());
  }

  @Override
  public String prometheus() {
    return registry.scrape();
  }

  @Override
  public io.cairn.node.advise.AdviceReport advise(Duration target) {
    return advise(target, Map.of());
  }

  /**
   * As {@link #advise(Duration)}, at live ingest rates the caller states for some sources instead
   * of those measured: the advice at another ingest (a rate a person expects, or a benchmark whose
   * simulated history runs faster than the clock). Sources not named keep their measured rate.
   */
  public io.cairn.node.advise.AdviceReport advise(Duration target, Map<String, io.cairn.node.advise.Advisor.Ingest> stated) {
    requireServing("advise on the snapshot schedule");
    SnapshotService svc = snapshotService;
    Engine e = engine;
    Map<String, io.cairn.node.advise.Advisor.Ingest> rates = new LinkedHashMap<>(ingestRates.rates(e.sourceStatuses()));
    rates.putAll(stated);
    return AdviseService.advise(target, new AdviseService.Facts(e, config, report, svc.lastSnapshot(), rates,
        snapshots.gaps(config, Duration.ofDays(8)), options.secrets()));
  }

  @Override
  public String recoveryReportJson() {
    RecoveryReport r = report;
    if (r == null) {
      throw new io.cairn.node.NodeUnavailableException(io.cairn.node.NodeUnavailableException.Reason.NOT_READY,
          "No recovery report yet: " + recoveringWhy());
    }
    return r.toJson();
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
      try { // a task under way (an epoch check, a retention check) ends before the store closes
        if (!background.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)) {
          LOG.warn("A background task did not stop within 5 s of the node's close");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    SinkService sinks = sinkService;
    if (sinks != null) {
      sinks.close();
    }
    frontends.forEach(Frontend::close);
    Standby sb = standby;
    if (sb != null) {
      sb.close();
    }
    Engine eng = engine;
    if (eng != null) {
      eng.close();
    }
    if (snapshotService != null) {
      snapshotService.dropPending();
    }
    snapshots.close();
    StoreFence fe = fence;
    if (fe != null) {
      fe.release();
    }
    if (membership != null) {
      membership.close(); // leaves the group: a standby takes over without waiting for the session timeout
      LOG.info("Stopped and left group '{}': another member takes the store now", config.group().name());
    }
    try {
      store.close();
    } catch (RuntimeException e) {
      LOG.warn("Closing the store failed: {}", e.getMessage());
    }
    terminated.countDown();
  }

  /**
   * What the HTTP endpoint answers while a start reads the store and takes it, before there is a
   * node: status STARTING, live, not ready; then it hands every call to the node.
   */
  private static final class StartingApi implements NodeApi {
    private final CairnConfig config;
    private final long since = System.nanoTime();
    volatile Node node;
    /** The group this node stands by in, while it waits to own the store; null otherwise. */
    volatile String standby;
    /** Its membership of that group (for the members and the owner in status). */
    volatile io.cairn.node.group.GroupMembership membership;

    StartingApi(CairnConfig config) {
      this.config = config;
    }

    private String doing() {
      String g = standby;
      return g == null ? "it is starting: reading the catalog and taking the store"
          : "it is standing by in group '" + g + "': another member owns the store; this one takes over when the group assigns it";
    }

    private io.cairn.node.NodeUnavailableException starting() {
      return new io.cairn.node.NodeUnavailableException(io.cairn.node.NodeUnavailableException.Reason.NOT_READY,
          "Cannot answer: the node is not ready: " + doing() + " (for " + (System.nanoTime() - since) / 1_000_000
              + " ms); GET /health/ready answers 200 once it is");
    }

    @Override
    public List<io.cairn.engine.sql.Result> execute(List<String> statements, io.cairn.engine.sql.StatementBudget budget) {
      return ready().execute(statements, budget);
    }

    @Override
    public io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement) {
      return ready().subscribe(statement);
    }

    @Override
    public long catalogPosition() {
      return ready().catalogPosition();
    }

    @Override
    public List<Dataflow> dataflows() {
      return ready().dataflows();
    }

    private Node ready() {
      Node n = node;
      if (n == null) {
        throw starting();
      }
      return n;
    }

    @Override
    public Duration statementTimeout() {
      return config.limits().statementTimeout();
    }

    @Override
    public String statusJson() {
      Node n = node;
      if (n != null) {
        return n.statusJson();
      }
      Map<String, Object> s = new LinkedHashMap<>();
      String g = standby;
      s.put("state", g == null ? "STARTING" : "STANDBY");
      if (g != null) {
        s.put("role", "standby");
        s.put("group", g);
        io.cairn.node.group.GroupMembership m = membership;
        if (m != null) {
          io.cairn.node.group.GroupMembership.View v = m.view();
          s.put("member", m.settings().memberId());
          s.put("members", v.members());
          s.put("groupOwner", v.owner());
        }
      }
      s.put("live", true);
      s.put("ready", false);
      s.put("notReady", doing());
      s.put("uptimeMillis", (System.nanoTime() - since) / 1_000_000);
      return json(s);
    }

    @Override
    public String snapshotJson() {
      Node n = node;
      if (n == null) {
        throw starting();
      }
      return n.snapshotJson();
    }

    @Override
    public String prometheus() {
      Node n = node;
      return n == null ? "" : n.prometheus();
    }

    @Override
    public String recoveryReportJson() {
      Node n = node;
      if (n == null) {
        throw starting();
      }
      return n.recoveryReportJson();
    }

    @Override
    public io.cairn.node.advise.AdviceReport advise(Duration target) {
      return ready().advise(target);
    }

    @Override
    public Health health() {
      Node n = node;
      return n == null ? new Health(true, false, standby == null ? "STARTING" : "STANDBY", doing()) : n.health();
    }
  }

  // ------------------------------------------------------------------ offline commands

  @Override
  public String toString() {
    return String.format(Locale.ROOT, "Node[%s, %s]", state.get(), store.describe());
  }
}
