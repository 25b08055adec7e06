package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.dataflow.Collection;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded engine: sources, views (dataflows), workers and ticks.
 *
 * <p>Parts: the {@link TickDriver} runs ticks; within a tick {@link SourceIngest} talks to the
 * sources' clients, the {@link DataflowRunner} computes (routing inputs through the {@link
 * Exchange}) and seals; {@link StateRestore} captures and restores state. The engine itself keeps
 * the registry of sources and views, the locks, DDL and reads.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Ticks. {@link #tick()} reads records from every source into the open tick (see {@link
 *       TickPolicy}), then runs every dataflow, operator by operator in catalog order, on all
 *       workers (worker i processes shard i; keyed operators first exchange their inputs by key
 *       hash), then seals one batch per arrangement shard with {@code upper = tick + 1} and
 *       records each source's position as {@code offsets(tick)}. Results do not depend on the
 *       number of workers. A tick that closed full computes and seals on the {@code
 *       cairn-tick-compute} thread while the ticking thread reads the next tick's records ahead
 *       ({@link SourceIngest#prefetch}); {@code offsets(tick)} are the positions taken before
 *       that, so state and offsets agree exactly as without it.
 *   <li>Commands between ticks. Creating and dropping dataflows, {@link #capture()} and {@link
 *       #restore} take the engine lock, which a tick holds from start to end: none of them can
 *       observe or meet a half-run tick, a half-built or a half-dropped dataflow.
 *   <li>Reads take no lock. When a tick has sealed every shard it publishes, per arrangement, the
 *       list of its immutable batches ({@link io.cairn.engine.dataflow.Arrangement#published}) in
 *       one write, and only then do new views stop hydrating; {@link #peek} and {@link #lookup}
 *       read that list, so a read is the last closed tick's whole state, never waits for the tick
 *       in progress and never holds one up. The set of dataflows is published the same way at
 *       each create and drop ({@link #dataflows()}). Commands are applied in the order they are issued — the catalog's order —
 *       which is what makes a dataflow's id (its catalog position) and its arrangement names the
 *       same on every start.
 *   <li>Drop. Dropping a dataflow stops its operators (they are no longer run) and releases its
 *       arrangements (the memory returns to the heap) — refused while another dataflow reads its
 *       collection.
 *   <li>Failure domains. An exception in a view's operator marks that view (and the views
 *       reading it) FAILED with the error and discards its partial tick; the others and the
 *       engine keep running.
 *   <li>Sources fail apart from their views. A source whose client throws drops what it offered
 *       in the open tick and keeps its state and its recorded offsets as of the last closed tick
 *       (the two always agree). A retriable error makes it RESTARTING: it is re-opened and
 *       sought to those offsets after a backoff ({@link RestartStrategy}); an error no restart
 *       can fix ({@link io.cairn.engine.source.SourceException#retriable()}) makes it FAILED.
 *       Either way the views over it keep serving their state, which is consistent with the
 *       source's recorded offsets; nothing is lost while the source is away.
 *   <li>Threads and locks. Two locks, always taken in this order: the <em>tick lock</em>, held by
 *       the one thread that runs {@link #tick()} (the driver thread, or the recovering thread
 *       before it) for a whole tick, and the <em>engine lock</em>, held for the part of a tick
 *       that changes dataflows and by every command and capture (not by reads). Each source's client is
 *       used only by the thread holding the tick lock: seeks, restarts, polls, {@code
 *       caughtUp()}, rate limits and snapshot acknowledgements all run there; a source's slow
 *       calls (open, seek, restart, caught-up checks) run outside the engine lock so reads do not
 *       wait for a broker. Everyone else sees sources through {@link SourceStatus} values
 *       published after each tick ({@link #sourceStatuses()}). Callers of the engine (the SQL
 *       session, the node's snapshot lock) take their own locks before the engine lock, never
 *       after it.
 *   <li>Snapshot consistency. {@link #capture()} returns, as of the last closed tick T, the
 *       immutable batches of every source and every running view, and {@code offsets(T)}: state
 *       and offsets agree for every source, also one that is RESTARTING or FAILED. A FAILED view
 *       is left out: a view is a function of its inputs, so recovery recomputes it from the
 *       inputs' state as of T, which is what an uninterrupted run holds.
 * </ul>
 */
public final class Engine implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  private final int shards;
  private final TickPolicy policy;
  private final Clock clock;
  private final Secrets secrets;
  private final Map<String, SourceConnector> connectors;
  private final Workers workers;
  private final ReentrantLock tickLock = new ReentrantLock();
  private final ReentrantLock lock = new ReentrantLock(true);
  private final SourceIngest ingest;
  private final DataflowRunner runner;
  private final StateRestore state;
  private final TickDriver driver;
  private final Map<String, Dataflow> dataflows = new LinkedHashMap<>(); // in catalog order
  /** {@link #dataflows} as of its last change, for readers that must not wait for a tick (status). */
  private volatile List<Dataflow> publishedDataflows = List.of();
  /** {@link #publishedDataflows} without the transient ones ({@link #evaluateOnce}): what {@link #dataflows()} lists. */
  private volatile List<Dataflow> publishedCatalog = List.of();
  /** Numbers the transient dataflows of one-shot queries (their ids are the negated numbers). */
  private final java.util.concurrent.atomic.AtomicLong transients = new java.util.concurrent.atomic.AtomicLong();
  /**
   * The names of transient dataflows start with this. No catalog name can: the SQL session refuses
   * an identifier that starts with it, and it holds a NUL, which pgwire cannot carry.
   */
  public static final String TRANSIENT_PREFIX = "\u0000query-";
  /** The sinks by name, in catalog order (guarded by the engine lock), and the list published for readers without it. */
  private final Map<String, io.cairn.engine.sink.SinkTrack> sinks = new java.util.LinkedHashMap<>();
  private volatile List<io.cairn.engine.sink.SinkTrack> publishedSinks = List.of();
  private final Map<String, io.cairn.engine.sink.SinkConnector> sinkConnectors = new TreeMap<>();
  private final long sinkMaxPendingRows;
  /** Notified (its monitor) each time a tick closes: readers waiting for a view to hydrate. */
  private final Object tickClosed = new Object();
  private final Map<String, RunningSource> sources = new LinkedHashMap<>();
  /** The readers of each dataflow's changes ({@link #feed}). */
  private final ChangeFeeds feeds = new ChangeFeeds();
  /** Which sources are held, those created later included (under the engine lock). */
  private Hold hold = Hold.NONE;
  private volatile long lastClosedTick;
  private Map<String, SourceOffsets> lastOffsets = Map.of();
  private long recordsIngested;
  private long ticks;
  private long lastTickNanos;
  /** Summed over every tick: time reading the sources, and time from there until the tick closed. */
  private long readingNanos;
  private long computingNanos;
  /** The figures as last computed under the engine lock ({@link #metrics()}). */
  private volatile Metrics publishedMetrics = new Metrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  private final boolean readAhead;
  /** The equivalent operator paths views take ({@link Builder#typedReduce}, {@link Builder#shareJoinTraces}). */
  private final io.cairn.engine.dataflow.Dataflow.Choices choices;
  /** Runs a tick's computation while the ticking thread reads ahead (only then; see {@link #runTick}). */
  private final java.util.concurrent.ExecutorService compute;
  /** The sources, readable without the engine lock (which a tick blocked in a source holds): for {@link #stop()}. */
  private final java.util.Set<RunningSource> wakeable = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private Engine(Builder b) {
    this.shards = b.workers;
    this.policy = b.policy;
    this.clock = b.clock;
    this.secrets = b.secrets;
    this.connectors = new TreeMap<>();
    for (SourceConnector c : ServiceLoader.load(SourceConnector.class, Engine.class.getClassLoader())) {
      connectors.put(c.name(), c);
    }
    for (SourceConnector c : b.connectors) {
      connectors.put(c.name(), c);
    }
    for (io.cairn.engine.sink.SinkConnector c : ServiceLoader.load(io.cairn.engine.sink.SinkConnector.class, Engine.class.getClassLoader())) {
      sinkConnectors.put(c.name(), c);
    }
    for (io.cairn.engine.sink.SinkConnector c : b.sinkConnectors) {
      sinkConnectors.put(c.name(), c);
    }
    this.sinkMaxPendingRows = b.sinkMaxPendingRows;
    this.workers = new Workers(shards);
    this.ingest = new SourceIngest(policy, secrets, b.restarts, clock);
    this.runner = new DataflowRunner(workers, shards, b.skipPartitionedExchange);
    this.state = new StateRestore(workers, shards);
    this.driver = new TickDriver(this::tick, ingest::lastTickIdle, policy);
    this.readAhead = b.readAhead;
    this.choices = new io.cairn.engine.dataflow.Dataflow.Choices(b.typedReduce, b.shareJoinTraces);
    this.compute = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "cairn-tick-compute");
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builds an {@link Engine}. */
  public static final class Builder {
    private int workers = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    private TickPolicy policy = TickPolicy.DEFAULT;
    private Clock clock = Clock.systemUTC();
    private Secrets secrets = Secrets.environment();
    private RestartStrategy restarts = RestartStrategy.DEFAULT;
    private final List<SourceConnector> connectors = new ArrayList<>();
    private final List<io.cairn.engine.sink.SinkConnector> sinkConnectors = new ArrayList<>();
    private long sinkMaxPendingRows = 1_000_000;

    /** Registers a sink connector in addition to those found by {@link ServiceLoader}. */
    public Builder sinkConnector(io.cairn.engine.sink.SinkConnector c) {
      sinkConnectors.add(c);
      return this;
    }

    /** The most rows a sink holds that its destination lacks before it fails ({@link io.cairn.engine.sink.SinkTrack}). */
    public Builder sinkMaxPendingRows(long n) {
      if (n < 1) {
        throw new IllegalArgumentException("sinkMaxPendingRows must be >= 1, got " + n);
      }
      sinkMaxPendingRows = n;
      return this;
    }
    private boolean readAhead = true;
    private boolean skipPartitionedExchange = true;
    private boolean typedReduce = true;
    private boolean shareJoinTraces = true;

    /**
     * Whether a full tick's computation overlaps reading the next tick's records (default true;
     * off to compare, or to prove that a test reached the read-ahead path).
     */
    public Builder readAhead(boolean on) {
      this.readAhead = on;
      return this;
    }

    /**
     * Whether the exchange leaves in place an input whose producer is already partitioned by the
     * operator's exchange key (default true). Off, every keyed input with more than one worker is
     * routed: the same results, for tests that compare the two ways.
     */
    public Builder skipPartitionedExchange(boolean on) {
      this.skipPartitionedExchange = on;
      return this;
    }

    /**
     * Whether a reduce whose shape fits (one BIGINT/TIMESTAMP group key, only COUNT, SUM and AVG)
     * takes its typed path (default true). Off, every reduce takes the general path: the same
     * results, the typed path's oracle in tests.
     */
    public Builder typedReduce(boolean on) {
      this.typedReduce = on;
      return this;
    }

    /**
     * Whether a join side whose input is arranged by the join key reads that arrangement instead of
     * keeping its own trace (default true). Off, every side keeps its own: the same results, the
     * shared path's oracle in tests, and the writer of snapshots that hold a join's own traces.
     */
    public Builder shareJoinTraces(boolean on) {
      this.shareJoinTraces = on;
      return this;
    }

    public Builder workers(int n) {
      if (n < 1 || n > 256) {
        throw new IllegalArgumentException("Cannot build engine: workers must be in [1, 256], got " + n);
      }
      this.workers = n;
      return this;
    }

    public Builder tickPolicy(TickPolicy p) {
      this.policy = java.util.Objects.requireNonNull(p);
      return this;
    }

    public Builder clock(Clock c) {
      this.clock = java.util.Objects.requireNonNull(c);
      return this;
    }

    public Builder secrets(Secrets s) {
      this.secrets = java.util.Objects.requireNonNull(s);
      return this;
    }

    /** How sources that fail with a retriable error are restarted. */
    public Builder restartStrategy(RestartStrategy r) {
      this.restarts = java.util.Objects.requireNonNull(r);
      return this;
    }

    /** Registers a connector in addition to those found by {@link ServiceLoader}. */
    public Builder connector(SourceConnector c) {
      connectors.add(c);
      return this;
    }

    public Engine build() {
      return new Engine(this);
    }
  }

  public int workers() {
    return shards;
  }

  /** How secrets are resolved (sources and sinks resolve theirs when they open). */
  public Secrets secrets() {
    return secrets;
  }

  /** Connector by name, or empty. */
  public Optional<SourceConnector> connector(String name) {
    return Optional.ofNullable(connectors.get(name.toLowerCase(Locale.ROOT)));
  }

  // ---------------------------------------------------------------- commands (between ticks)

  /**
   * Creates source {@code def.name()} as dataflow {@code id}: validates it with its connector
   * and opens it; it starts reading at the next tick (from the beginning, or from the offsets a
   * {@link #restore} supplies).
   */
  public void createSource(long id, SourceDefinition def) {
    lock.lock();
    try {
      requireFreeName(def.name());
      SourceConnector c = connectors.get(def.connector());
      if (c == null) {
        throw new IllegalArgumentException(
            "Cannot create source '" + def.name() + "': connector '" + def.connector() + "' is not available (available: "
                + connectors.keySet() + ")");
      }
      SourceDefinition valid = c.validate(def);
      Source s = c.open(valid, secrets);
      Schema schema = s.schema();
      int[] pk = new int[s.primaryKey().size()];
      for (int i = 0; i < pk.length; i++) {
        pk[i] = schema.indexOf(s.primaryKey().get(i));
        if (pk[i] < 0) {
          s.close();
          throw new IllegalArgumentException(
              "Cannot create source '" + def.name() + "': primary key column '" + s.primaryKey().get(i) + "' is not in " + schema);
        }
      }
      Dataflow d = Dataflow.source(id, def.name(), schema, pk, shards);
      dataflows.put(def.name(), d);
      publish();
      RunningSource running = new RunningSource(def.name(), c, valid, s, d);
      running.held = holds(c);
      sources.put(def.name(), running);
      wakeable.add(running);
      driver.wake(); // an idle driver picks the new source up now
      LOG.info("Created source {} (dataflow {}, connector {})", def.name(), id, def.connector());
    } finally {
      lock.unlock();
    }
  }

  /** Creates view {@code name} as dataflow {@code id}, arranged by its default key. */
  public void createView(long id, String name, Plan plan) {
    createView(id, name, plan, null);
  }

  /** Creates view {@code name} as dataflow {@code id}, arranged by output columns {@code keyCols}. */
  public void createView(long id, String name, Plan plan, int[] keyCols) {
    lock.lock();
    try {
      requireFreeName(name);
      Dataflow d = Dataflow.view(id, name, plan, keyCols, this::collection, shards, choices);
      dataflows.put(name, d);
      publish();
      driver.wake(); // an idle driver computes the new view now, rather than after its idle pause
      if (!isTransient(name)) { // a one-shot query's: one a query, not worth a line each
        LOG.info("Created view {} (dataflow {})", name, id);
      }
    } finally {
      lock.unlock();
    }
  }

  private void requireFreeName(String name) {
    if (dataflows.containsKey(name)) {
      throw new IllegalArgumentException("Cannot create '" + name + "': a source or view with that name exists");
    }
  }

  private Collection collection(String name) {
    Dataflow d = dataflows.get(name);
    if (d == null) {
      throw new IllegalArgumentException("Cannot read '" + name + "': no such source or view");
    }
    return d;
  }

  /**
   * Drops a source or view: its operators stop and its arrangements are released. Throws when
   * another dataflow reads it (drop those first).
   */
  public void drop(String name) {
    lock.lock();
    try {
      Dataflow d = dataflows.get(name);
      if (d == null) {
        throw new IllegalArgumentException("Cannot drop '" + name + "': no such source or view");
      }
      List<String> readers = readersOf(name).stream().map(r -> isTransient(r) ? "a one-shot query running now" : r).toList();
      if (!readers.isEmpty()) {
        throw new IllegalArgumentException("Cannot drop '" + name + "': " + readers + " read it");
      }
      List<String> writers = sinksOf(name);
      if (!writers.isEmpty()) {
        throw new IllegalArgumentException("Cannot drop '" + name + "': sinks " + writers + " write its changes");
      }
      dataflows.remove(name);
      publish();
      feeds.end(name, "'" + name + "' was dropped");
      RunningSource s = sources.remove(name);
      if (s != null) {
        wakeable.remove(s);
        s.dropped = true;
        // the client belongs to the ticking thread: close it here only when no tick runs
        if (tickLock.tryLock()) {
          try {
            ingest.closeQuietly(s);
          } finally {
            tickLock.unlock();
          }
        } else {
          ingest.closeLater(s.source);
        }
      }
      if (!isTransient(name)) {
        LOG.info("Dropped {} (dataflow {})", name, d.id());
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Runs {@code work} between two ticks, holding the engine lock: no tick starts until it
   * returns. Several commands issued inside apply atomically with respect to ticks (e.g. a
   * DROP ... CASCADE). Engine methods called inside re-enter the lock.
   */
  public <T> T betweenTicks(java.util.function.Supplier<T> work) {
    lock.lock();
    try {
      return work.get();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Per dataflow (catalog order), the updates sealed into its arrangements since they were created
   * in this engine ({@link io.cairn.engine.dataflow.Arrangement#updatesSealed}): how much a
   * source's records turned into inside the dataflows' arrangements. What flows between operators
   * without being arranged (a join's output feeding a reduce) is in {@link #updatesEmitted}.
   */
  public Map<String, Long> updatesSealed() {
    lock.lock();
    try {
      Map<String, Long> out = new LinkedHashMap<>();
      for (Dataflow d : dataflows.values()) {
        long n = 0;
        for (io.cairn.engine.dataflow.Arrangement a : d.arrangements()) {
          n += a.updatesSealed();
        }
        out.put(d.name(), n);
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Per dataflow (catalog order), the updates its operators passed on since it was created in this
   * engine ({@link Dataflow#updatesEmitted}): with {@link #updatesSealed}, what a source's records
   * cost inside the dataflows. A change to a joined table that fans out into a reduce shows here,
   * not in the sealed count, since a join's output is not arranged.
   */
  public Map<String, Long> updatesEmitted() {
    lock.lock();
    try {
      Map<String, Long> out = new LinkedHashMap<>();
      for (Dataflow d : dataflows.values()) {
        out.put(d.name(), d.updatesEmitted());
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** Names of the dataflows that read {@code name}. */
  public List<String> readersOf(String name) {
    lock.lock();
    try {
      List<String> out = new ArrayList<>();
      for (Dataflow d : dataflows.values()) {
        if (d.dependencies().contains(name)) {
          out.add(d.name());
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The dataflow named {@code name}, or empty. Takes no lock (a tick in progress does not hold it
   * up): the answer is the set of dataflows after the last create or drop, which under the engine
   * lock is exactly the engine's.
   */
  public Optional<Dataflow> dataflow(String name) {
    for (Dataflow d : publishedDataflows) {
      if (d.name().equals(name)) {
        return Optional.of(d);
      }
    }
    return Optional.empty();
  }

  /** All dataflows in catalog order, without the transient ones of one-shot queries; takes no lock (see {@link #dataflow}). */
  public List<Dataflow> dataflows() {
    return publishedCatalog;
  }

  /** Publishes {@link #dataflows} after a change (under the engine lock). */
  private void publish() {
    publishedDataflows = List.copyOf(dataflows.values());
    publishedCatalog = publishedDataflows.stream().filter(d -> !isTransient(d.name())).toList();
  }

  /** Whether {@code name} is a transient dataflow's ({@link #evaluateOnce}). */
  public static boolean isTransient(String name) {
    return name.startsWith(TRANSIENT_PREFIX);
  }

  /**
   * Evaluates {@code plan} once, as Materialize answers a query that no arrangement answers: a
   * transient dataflow over the existing arrangements is created, computed by the next tick (it
   * hydrates from its inputs' arrangements, as a new view does), read as of that tick, and dropped.
   * It is never listed ({@link #dataflows()}), never in a snapshot ({@link #capture()}) and never
   * in the catalog. With no driver ticking (a test, a recovery), the caller's thread runs that
   * tick. {@code check} is called while waiting and reading (a statement's budget): when it
   * throws, the dataflow is dropped and the exception passes on.
   *
   * @return the rows, repeated by multiplicity, sorted
   * @throws IllegalStateException when the dataflow fails (its error named)
   */
  public List<Row> evaluateOnce(Plan plan, Runnable check) {
    long n = transients.incrementAndGet();
    String name = TRANSIENT_PREFIX + n;
    check.run();
    createView(-n, name, plan);
    try {
      Dataflow d = publishedDataflow(name);
      long created = lastClosedTick;
      while (d.state() == Dataflow.State.RUNNING && (d.hydrating() || lastClosedTick <= created)) {
        check.run();
        if (!ticking()) {
          tick();
          continue;
        }
        try {
          awaitTickAfter(lastClosedTick, 20_000_000L);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("Cannot evaluate the query: interrupted while it was computed", e);
        }
      }
      if (d.state() != Dataflow.State.RUNNING) {
        throw new IllegalStateException("Cannot evaluate the query: " + (d.error() == null ? d.state().name() : d.error()));
      }
      return peek(name, check);
    } finally {
      drop(name);
    }
  }

  /** Number of live arrangements (all dataflows). */
  public int arrangementCount() {
    lock.lock();
    try {
      return dataflows.values().stream().mapToInt(d -> d.arrangements().size()).sum();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- ticks

  /**
   * Runs one tick and returns it (the new last closed tick). The calling thread owns the
   * sources' clients for the duration: (1) outside the engine lock, sources not yet sought are
   * sought, RESTARTING sources whose backoff has passed are re-opened, and committed snapshots
   * are acknowledged; (2) under the engine lock, records are read and every dataflow runs; (3)
   * outside it again, each source's caught-up state and load are published.
   */
  public long tick() {
    return tick(false);
  }

  /**
   * Runs one tick of a catch-up (recovery, {@link #tickUntilCaughtUp}): like {@link #tick()}, but
   * the tick also closes as soon as every source is caught up when it read nothing at all, instead
   * of waiting out the tick's duration for records that are not coming. (A serving node does not
   * do that: its idle ticks would follow each other without pause.)
   */
  public long catchUpTick() {
    return tick(true);
  }

  private long tick(boolean catchingUp) {
    tickLock.lock();
    try {
      List<RunningSource> all = sourcesSnapshot();
      ingest.prepare(all);
      long tick = runTick(catchingUp);
      ingest.publish(all);
      ingest.closeDropped();
      return tick;
    } finally {
      tickLock.unlock();
    }
  }

  private List<RunningSource> sourcesSnapshot() {
    lock.lock();
    try {
      return List.copyOf(sources.values());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Lets every running source not yet sought prepare the seek that is likely to follow ({@link
   * Source#warmUp}). A recovery calls this, on the thread that seeks next, while the snapshot
   * still loads. Each source waits at most {@code budget}; nothing here fails.
   */
  public void warmUpSources(java.time.Duration budget) {
    tickLock.lock();
    try {
      for (RunningSource s : sourcesSnapshot()) {
        if (s.dropped || s.seeked || s.state != SourceStatus.State.RUNNING) {
          continue;
        }
        try {
          s.source.warmUp(budget);
        } catch (RuntimeException e) {
          LOG.debug("Source {} failed to warm up (its seek will say why, if it still fails): {}", s.name, e.toString());
        }
      }
    } finally {
      tickLock.unlock();
    }
  }

  /**
   * Seeks every source not yet sought (to the restored offsets, or its beginning), now, on the
   * calling thread, and publishes their status: recovery calls this before catching up, so that
   * offsets that are gone or a source that cannot be reached show up in the recovery report
   * rather than in a later tick. Returns the statuses.
   */
  public Map<String, SourceStatus> seekSources() {
    tickLock.lock();
    try {
      List<RunningSource> all = sourcesSnapshot();
      ingest.prepare(all);
      ingest.publish(all);
      return ingest.statuses();
    } finally {
      tickLock.unlock();
    }
  }

  /** Under the engine lock: read the sources into the open tick, run every dataflow, seal, record offsets(T). */
  private long runTick(boolean catchingUp) {
    lock.lock();
    try {
      long start = System.nanoTime();
      long tick = lastClosedTick + 1;
      runner.clearOutputs(dataflows.values());
      recordsIngested += ingest.poll(sources.values(), catchingUp);
      long read = System.nanoTime();
      if (readAhead && ingest.backlog()) {
        // a full tick: compute it on another thread while this one (the sources' owner) reads the
        // next tick's records; offsets(T) were taken when this tick's reading ended
        java.util.concurrent.Future<?> computing = compute.submit(() -> {
          runner.run(dataflows.values(), tick);
          runner.seal(dataflows.values(), tick);
        });
        try {
          ingest.prefetch(sources.values(), () -> !computing.isDone());
        } finally {
          awaitCompute(computing);
        }
      } else {
        runner.run(dataflows.values(), tick);
        runner.seal(dataflows.values(), tick);
      }
      feeds.publish(tick, dataflows.values(), shards);
      lastOffsets = ingest.recordOffsets(sources.values());
      for (io.cairn.engine.sink.SinkTrack t : sinks.values()) {
        t.afterTick(tick, lastOffsets);
      }
      lastClosedTick = tick;
      ticks++;
      long end = System.nanoTime();
      lastTickNanos = end - start;
      readingNanos += read - start;
      computingNanos += end - read;
      // the counters only: summing the arrangements' sizes reads every TEXT value, not a per-tick cost
      publishMetrics(publishedMetrics.arrangementBytes(), publishedMetrics.operatorBytes());
      return tick;
    } finally {
      lock.unlock();
      synchronized (tickClosed) {
        tickClosed.notifyAll();
      }
    }
  }

  private static void awaitCompute(java.util.concurrent.Future<?> computing) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          computing.get();
          return;
        } catch (InterruptedException e) {
          interrupted = true; // the tick's state is being written: wait for it, whatever happens
        } catch (java.util.concurrent.ExecutionException e) {
          Throwable c = e.getCause();
          if (c instanceof RuntimeException r) {
            throw r;
          }
          if (c instanceof Error err) {
            throw err;
          }
          throw new IllegalStateException(c);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Runs ticks until every source is caught up (or {@code maxTicks} ticks ran); returns ticks run. */
  public long tickUntilCaughtUp(long maxTicks) {
    long n = 0;
    do {
      catchUpTick();
      n++;
    } while (n < maxTicks && !caughtUp());
    return n;
  }

  /**
   * Whether every source has delivered everything up to its head, as published after the last
   * tick: RUNNING sources must report caught up, a RESTARTING source is not, a FAILED one has
   * nothing more to deliver (the recovery report and status say it failed).
   */
  public boolean caughtUp() {
    return caughtUp(false);
  }

  /** {@link #caughtUp()}, leaving out the held (and dropped) sources when {@code exceptHeld}. */
  private boolean caughtUp(boolean exceptHeld) {
    Map<String, SourceStatus> st = ingest.statuses();
    for (RunningSource r : sourcesSnapshot()) {
      if (exceptHeld && (r.held || r.dropped)) {
        continue;
      }
      SourceStatus s = st.get(r.name);
      if (s == null || s.state() == SourceStatus.State.RESTARTING || (s.state() == SourceStatus.State.RUNNING && !s.caughtUp())) {
        return false;
      }
    }
    return true;
  }

  /** Every source's status as published after the last tick, in catalog order; any thread. */
  public Map<String, SourceStatus> sourceStatuses() {
    return ingest.statuses();
  }

  /** The status of source {@code name} as published after the last tick, or empty. */
  public Optional<SourceStatus> sourceStatus(String name) {
    return Optional.ofNullable(ingest.statuses().get(name));
  }

  /** Starts the driver thread ({@link TickDriver}): ticks until {@link #stop()}. */
  public void start() {
    driver.start();
  }

  /** Whether the driver thread ticks in the background ({@link #start()} called, {@link #stop()} not). */
  public boolean ticking() {
    return driver.running();
  }

  /** Which sources a standby's engine holds (neither seeks nor reads), sources created later included. */
  public enum Hold {
    /** Every source is read: an owner. */
    NONE,
    /** The sources whose connector does not allow {@linkplain SourceConnector#sharedReads() shared reads}: a hot standby. */
    UNSHARED,
    /** Every source: a warm standby, whose ticks only compute views created after its snapshot. */
    ALL
  }

  /**
   * Holds the sources that {@code hold} names, now and as they are created: a held source is
   * neither sought nor read, and its state and offsets stay where {@link #restore} put them (a
   * source created while held stays empty) until {@link #releaseHeldSources}. A hot standby ticks
   * the rest. Returns the names held now.
   */
  public List<String> holdSources(Hold hold) {
    lock.lock();
    try {
      this.hold = hold;
      List<String> out = new java.util.ArrayList<>();
      for (RunningSource s : sources.values()) {
        s.held = holds(s.connector);
        if (s.held) {
          out.add(s.name);
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  private boolean holds(SourceConnector c) {
    return hold == Hold.ALL || (hold == Hold.UNSHARED && !c.sharedReads());
  }

  /** The names of the sources held now (see {@link #holdSources}). */
  public List<String> heldSources() {
    lock.lock();
    try {
      return sources.values().stream().filter(s -> s.held).map(s -> s.name).toList();
    } finally {
      lock.unlock();
    }
  }

  /** Ends {@link #holdSources}: held sources are sought to their offsets at the next tick or seek. */
  public void releaseHeldSources() {
    lock.lock();
    try {
      hold = Hold.NONE;
      for (RunningSource s : sources.values()) {
        s.held = false;
      }
    } finally {
      lock.unlock();
    }
  }

  /** Whether every source not held has caught up (as published after the last tick). */
  public boolean caughtUpExceptHeld() {
    return caughtUp(true);
  }

  /**
   * Stops the driver thread after its current tick without waking the sources (they stay open and
   * sought, unlike {@link #stop()}): {@link #catchUpTick} may then tick on the calling thread, and
   * {@link #start()} starts the driver again.
   */
  public void pause() {
    driver.stop();
  }

  /** Stops the driver thread after its current tick. */
  public void stop() {
    driver.stopping();
    ingest.stopping = true;
    // a tick blocked in a source (a broker gone: calls wait out their request timeouts) ends now
    wakeSources();
    driver.stop();
  }

  /**
   * Wakes every source up ({@link Source#wakeup}): a tick blocked in a source call returns soon,
   * that source failing (and restarting) as on any error. Any thread; takes no engine lock (a
   * blocked tick holds it). Used when the engine stops and when a recovery's deadline passes.
   */
  public void wakeSources() {
    for (RunningSource s : wakeable) {
      Source src = s.source;
      if (src != null) {
        try {
          src.wakeup();
        } catch (RuntimeException e) {
          LOG.debug("Waking source {} up failed: {}", s.name, e.toString());
        }
      }
    }
  }

  /** The last closed tick; takes no lock. */
  public long lastClosedTick() {
    return lastClosedTick;
  }

  /**
   * Waits until a tick after {@code tick} has closed, at most {@code maxNanos}; returns whether
   * one has. Takes no engine lock. For readers that wait for a view to hydrate.
   */
  public boolean awaitTickAfter(long tick, long maxNanos) throws InterruptedException {
    long deadline = System.nanoTime() + maxNanos;
    synchronized (tickClosed) {
      while (lastClosedTick <= tick) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(tickClosed, left);
      }
      return true;
    }
  }

  /** {@code offsets(T)} for the last closed tick T, per source name. */
  public Map<String, SourceOffsets> offsets() {
    lock.lock();
    try {
      return Map.copyOf(lastOffsets);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- reads

  /** The rows of a source or view as of the last closed tick, repeated by multiplicity, sorted. */
  public List<Row> peek(String name) {
    return peek(name, () -> {});
  }

  /**
   * Like {@link #peek(String)}, calling {@code check} every {@value #CHECK_EVERY} rows (also while
   * the rows are sorted, outside the lock): a check that throws stops the read at once and lets the
   * next tick run. A statement's budget is such a check.
   */
  public List<Row> peek(String name, Runnable check) {
    List<Row> out = new ArrayList<>();
    check.run();
    // no lock: the arrangement's batches as of the last closed tick are published, immutable
    Dataflow d = publishedDataflow(name);
    io.cairn.engine.dataflow.Layout layout = d.layout();
    List<io.cairn.engine.trace.Batch>[] batches = d.arrangement().published();
    int[] sinceCheck = {0};
    for (int s = 0; s < batches.length; s++) {
      io.cairn.engine.trace.Spine.forEachLive(batches[s], Long.MAX_VALUE, (b, i, count) -> {
        Row row = layout.row(b, i);
        for (long c = 0; c < count; c++) {
          out.add(row);
        }
        if (++sinceCheck[0] == CHECK_EVERY) {
          sinceCheck[0] = 0;
          check.run();
        }
      }, check);
    }
    io.cairn.engine.row.CheckedSort.sort(out, null, check);
    return out;
  }

  /**
   * The changes of source or view {@code name}, tick by tick ({@link io.cairn.engine.sink.ChangeFeed}'s
   * contract).
   *
   * @throws IllegalArgumentException when there is no such source or view
   */
  public io.cairn.engine.sink.ChangeFeed feed(String name) {
    return new ChangeFeeds.Feed(this, name, publishedDataflow(name).schema());
  }

  /** Registers a reader of {@code name}'s changes between two ticks (see {@link #feed}). */
  io.cairn.engine.sink.ChangeFeed.Subscription subscribe(String name, boolean snapshot, int maxRows) {
    if (maxRows < 1) {
      throw new IllegalArgumentException("Cannot subscribe to '" + name + "': a bound of " + maxRows + " rows");
    }
    lock.lock();
    try {
      Dataflow d = dataflows.get(name);
      if (d == null) {
        throw new IllegalArgumentException("Cannot subscribe to '" + name + "': no such source or view");
      }
      return feeds.subscribe(d, lastClosedTick, snapshot, maxRows, shards);
    } finally {
      lock.unlock();
    }
  }

  /** Readers of {@code name}'s changes now. */
  public int subscribers(String name) {
    return feeds.readers(name);
  }

  /** Readers of every dataflow's changes now. */
  public int subscribers() {
    return feeds.readers();
  }

  /** How many rows a read handles between two calls of its check. */
  public static final int CHECK_EVERY = 4096;

  /** The rows of {@code name} whose arrangement key equals {@code key}, as of the last closed tick. */
  public List<Row> lookup(String name, Row key) {
    // no lock, as peek: the published batches of the key's shard
    Dataflow d = publishedDataflow(name);
    var layout = d.layout();
    int shard = key.shard(shards);
    io.cairn.engine.trace.Values vals = new io.cairn.engine.trace.Values();
    io.cairn.engine.trace.Spine.reader(d.arrangement().published()[shard]).values(key, vals);
    vals.consolidate();
    List<Row> out = new ArrayList<>();
    for (int i = 0; i < vals.size(); i++) {
      for (long c = 0; c < vals.diff(i); c++) {
        out.add(layout.join(key, vals.val(i)));
      }
    }
    return out;
  }

  private Dataflow publishedDataflow(String name) {
    return dataflow(name).orElseThrow(() -> new IllegalArgumentException("Cannot read '" + name + "': no such source or view"));
  }

  private Dataflow requireDataflow(String name) {
    Dataflow d = dataflows.get(name);
    if (d == null) {
      throw new IllegalArgumentException("Cannot read '" + name + "': no such source or view");
    }
    return d;
  }

  // ---------------------------------------------------------------- sinks

  /** Sink connector by name, or empty. */
  public Optional<io.cairn.engine.sink.SinkConnector> sinkConnector(String name) {
    return Optional.ofNullable(sinkConnectors.get(name.toLowerCase(Locale.ROOT)));
  }

  /**
   * Creates sink {@code def} (between ticks): its {@link io.cairn.engine.sink.SinkTrack} starts
   * from the contents of what it reads as of the last closed tick (a {@link #restore} later
   * replaces that with a snapshot's bookkeeping). Nothing is written anywhere: the node's sink
   * service does the I/O, only while it owns the store.
   */
  public void createSink(io.cairn.engine.sink.SinkDefinition def) {
    lock.lock();
    try {
      if (sinks.containsKey(def.name())) {
        throw new IllegalArgumentException("Cannot create sink '" + def.name() + "': a sink with that name exists");
      }
      Dataflow d = dataflows.get(def.from());
      if (d == null) {
        throw new IllegalArgumentException("Cannot create sink '" + def.name() + "': no source or view '" + def.from() + "'");
      }
      io.cairn.engine.sink.SinkConnector c = sinkConnectors.get(def.connector());
      if (c == null) {
        throw new IllegalArgumentException("Cannot create sink '" + def.name() + "': connector '" + def.connector()
            + "' is not available (available: " + sinkConnectors.keySet() + ")");
      }
      Schema schema = d.schema();
      c.validate(def, schema);
      int[] keyCols = new int[def.key().size()];
      for (int i = 0; i < keyCols.length; i++) {
        keyCols[i] = schema.indexOf(def.key().get(i));
        if (keyCols[i] < 0) {
          throw new IllegalArgumentException("Cannot create sink '" + def.name() + "': key column '" + def.key().get(i)
              + "' is not a column of '" + def.from() + "' " + schema);
        }
      }
      io.cairn.engine.sink.SinkTrack t = new io.cairn.engine.sink.SinkTrack(def, schema, keyCols, sinkMaxPendingRows);
      t.attach(feeds.subscribe(d, lastClosedTick, true, Integer.MAX_VALUE, shards), lastClosedTick, lastOffsets);
      sinks.put(def.name(), t);
      publishedSinks = List.copyOf(sinks.values());
      LOG.info("Created sink {} (catalog position {}) from {}", def.name(), def.id(), def.from());
    } finally {
      lock.unlock();
    }
  }

  /** Drops sink {@code name} (between ticks); its service stops writing. */
  public void dropSink(String name) {
    lock.lock();
    try {
      io.cairn.engine.sink.SinkTrack t = sinks.remove(name);
      if (t == null) {
        throw new IllegalArgumentException("Cannot drop sink '" + name + "': no such sink");
      }
      t.drop();
      publishedSinks = List.copyOf(sinks.values());
      LOG.info("Dropped sink {}", name);
    } finally {
      lock.unlock();
    }
  }

  /** Every sink in catalog order; takes no lock. */
  public List<io.cairn.engine.sink.SinkTrack> sinks() {
    return publishedSinks;
  }

  /** The sink named {@code name}, or empty; takes no lock. */
  public Optional<io.cairn.engine.sink.SinkTrack> sink(String name) {
    return publishedSinks.stream().filter(t -> t.definition().name().equals(name)).findFirst();
  }

  /** Names of the sinks that write {@code name}'s changes. */
  public List<String> sinksOf(String name) {
    List<String> out = new ArrayList<>();
    for (io.cairn.engine.sink.SinkTrack t : publishedSinks) {
      if (t.definition().from().equals(name)) {
        out.add(t.definition().name());
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * A consistent cut as of the last closed tick T: the batches of every source (whatever its
   * status: its state is always at its recorded offsets) and of every RUNNING view, and {@code
   * offsets(T)}. A FAILED view is left out; {@link #restore} recomputes it from its inputs.
   * O(number of batches); nothing is copied.
   */
  public EngineState capture() {
    lock.lock();
    try {
      List<io.cairn.engine.sink.SinkTrack.State> ss = new ArrayList<>();
      for (io.cairn.engine.sink.SinkTrack t : sinks.values()) {
        ss.add(t.state());
      }
      List<Dataflow> catalog = new ArrayList<>(dataflows.size());
      for (Dataflow d : dataflows.values()) {
        if (!isTransient(d.name())) { // a one-shot query's is not state
          catalog.add(d);
        }
      }
      return state.capture(catalog, lastClosedTick, lastOffsets).withSinks(ss);
    } finally {
      lock.unlock();
    }
  }

  /** What {@link #restore} could not load: views it recomputes, sources it re-reads from their beginning. */
  public record Restored(List<String> recomputedViews, List<String> rereadSources) {
    public Restored {
      recomputedViews = List.copyOf(recomputedViews);
      rereadSources = List.copyOf(rereadSources);
    }
  }

  /**
   * Loads {@code state} into the dataflows created so far (before any tick ran). A dataflow
   * gets its batches when all its arrangements are in {@code state} and every dataflow it reads
   * was loaded too; it then resumes where the snapshot left it. Otherwise: a view hydrates from
   * its inputs at the next tick; a source is never resumed from offsets its state is not at — it
   * is re-read from its beginning (and so are the views over it recomputed). Sources with state
   * resume at {@code state.offsets()}. A snapshot taken with another number of workers is
   * re-sharded.
   */
  public Restored restore(EngineState saved) {
    lock.lock();
    try {
      if (lastClosedTick != 0) {
        throw new IllegalStateException("Cannot restore: the engine has already run " + lastClosedTick + " ticks");
      }
      StateRestore.Result r = state.restore(saved, dataflows.values(), sources.values());
      for (Dataflow d : dataflows.values()) {
        d.arrangements().forEach(io.cairn.engine.dataflow.Arrangement::publish);
      }
      lastOffsets = r.offsets();
      lastClosedTick = saved.tick();
      for (io.cairn.engine.sink.SinkTrack t : sinks.values()) {
        String from = t.definition().from();
        var stored = saved.sink(t.definition().name(), t.definition().id())
            .filter(x -> !r.recomputedViews().contains(from) && !r.rereadSources().contains(from));
        stored.ifPresent(t::restore);
        // with its bookkeeping, the sink reads on from the snapshot's tick; without, it starts from the contents
        t.attach(feeds.subscribe(dataflows.get(from), lastClosedTick, stored.isEmpty(), Integer.MAX_VALUE, shards), lastClosedTick, lastOffsets);
      }
      return new Restored(r.recomputedViews(), r.rereadSources());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records that a snapshot holding {@code state} committed. Each source whose state the snapshot
   * holds (every source in {@code state.offsets()} with arrangements in it) is told at the start
   * of the next tick, on the thread that owns its client (Postgres then confirms the LSN to its
   * slot); a source re-opened later is told again.
   */
  public void onSnapshotCommitted(EngineState state) {
    java.util.Set<String> held = new java.util.HashSet<>();
    for (ArrangementState a : state.arrangements()) {
      held.add(a.arrangement());
    }
    lock.lock();
    try {
      for (RunningSource s : sources.values()) {
        SourceOffsets o = state.offsets().get(s.name);
        boolean hasState = s.dataflow.arrangements().stream().allMatch(a -> held.contains(a.name()));
        if (o != null && !o.isEmpty() && hasState) {
          s.committed = o;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Caps the read rate of source {@code name} (records per second, 0 = none), e.g. while
   * catching up. Applied by the thread that owns the source at the next tick.
   */
  public void setReadRateLimit(String name, double recordsPerSecond) {
    if (recordsPerSecond < 0 || Double.isNaN(recordsPerSecond)) {
      throw new IllegalArgumentException("Cannot limit source '" + name + "': rate " + recordsPerSecond + " is negative");
    }
    lock.lock();
    try {
      RunningSource s = sources.get(name);
      if (s == null) {
        throw new IllegalArgumentException("Cannot limit source '" + name + "': no such source");
      }
      s.rateLimit = recordsPerSecond;
    } finally {
      lock.unlock();
    }
  }

  /** The validated definition of source {@code name} (options hold secret references, never values). */
  public Optional<SourceDefinition> sourceDefinition(String name) {
    lock.lock();
    try {
      RunningSource s = sources.get(name);
      return s == null ? Optional.empty() : Optional.of(s.definition);
    } finally {
      lock.unlock();
    }
  }

  /** Names of the sources, in catalog order. */
  public List<String> sourceNames() {
    lock.lock();
    try {
      return List.copyOf(sources.keySet());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Engine figures as of the last closed tick; {@code recordsReadAhead} counts the records polled
   * for a next tick while a full tick computed (they are also in {@code recordsIngested} once
   * that tick takes them); {@code updatesExchanged} counts the updates the exchange routed between
   * workers, {@code exchangesSkipped} the operator inputs it left in place because their producer
   * was already partitioned by the key (one per input per tick; both stay 0 with one worker);
   * {@code readingNanos} is the time ticks spent reading their sources (the polls on the ticking
   * thread, a fetch's wait and the records' decoding included), {@code computingNanos} the time
   * from there until they closed (the dataflows and the seal; a read-ahead for the next tick runs
   * meanwhile), both summed over every tick. {@code arrangementBytes} is the state's heap, {@code
   * operatorBytes} the heap operators hold beside it (top-k heads), both estimates.
   */
  public record Metrics(long ticks, long lastClosedTick, long recordsIngested, long lastTickNanos, long arrangementBytes,
      long recordsReadAhead, long updatesExchanged, long exchangesSkipped, long readingNanos, long computingNanos,
      long operatorBytes) {}

  /**
   * The engine's figures; any thread, never waits. When no tick (or statement) holds the engine
   * lock they are computed now; while one does, the counters are those published when the last
   * tick closed and {@code arrangementBytes} that of the last call that found the lock free, so
   * that a {@code /metrics} scrape during a long tick (a view hydrating over a large source, a
   * source call blocked) answers at once instead of waiting for it.
   */
  public Metrics metrics() {
    if (lock.tryLock()) {
      try {
        long bytes = 0;
        long operatorBytes = 0;
        for (Dataflow d : dataflows.values()) {
          for (Arrangement a : d.arrangements()) {
            bytes += a.heapBytes();
          }
          operatorBytes += d.operatorBytes();
        }
        publishMetrics(bytes, operatorBytes);
      } finally {
        lock.unlock();
      }
    }
    return publishedMetrics;
  }

  /**
   * Records ingested by the ticks closed so far; any thread, never waits, and unlike {@link
   * #metrics()} does not measure the arrangements (a walk over every batch): for a caller that asks
   * after every tick, such as a catch-up's progress line.
   */
  public long recordsIngested() {
    return publishedMetrics.recordsIngested();
  }

  /** Under the engine lock: publishes the figures, with the arrangements' and the operators' sizes, for {@link #metrics()}. */
  private void publishMetrics(long bytes, long operatorBytes) {
    publishedMetrics = new Metrics(ticks, lastClosedTick, recordsIngested, lastTickNanos, bytes, ingest.prefetched(),
        runner.updatesExchanged(), runner.exchangesSkipped(), readingNanos, computingNanos, operatorBytes);
  }

  public Clock clock() {
    return clock;
  }

  @Override
  public void close() {
    stop();
    tickLock.lock();
    lock.lock();
    try {
      for (RunningSource s : sources.values()) {
        ingest.closeQuietly(s);
      }
      ingest.closeDropped();
      feeds.endAll("the engine closed");
      sources.clear();
      wakeable.clear();
      dataflows.clear();
      publish(); // a closed engine holds no state: nothing published keeps its arrangements reachable
      ingest.clearStatuses();
    } finally {
      lock.unlock();
      tickLock.unlock();
      compute.shutdownNow();
      workers.close();
    }
  }
}
