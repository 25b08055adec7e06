package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.dataflow.Collection;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.Operator;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.dataflow.SourceOp;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Update;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Ticks. {@link #tick()} reads records from every source into the open tick (see {@link
 *       TickPolicy}), then runs every dataflow, operator by operator in catalog order, on all
 *       workers (worker i processes shard i; keyed operators first exchange their inputs by key
 *       hash), then seals one batch per arrangement shard with {@code upper = tick + 1} and
 *       records each source's position as {@code offsets(tick)}. Results do not depend on the
 *       number of workers.
 *   <li>Commands between ticks. Creating and dropping dataflows, reads ({@link #peek}), {@link
 *       #capture()} and {@link #restore} all take the engine lock, which a tick holds from start
 *       to end: none of them can observe or meet a half-run tick, a half-built or a half-dropped
 *       dataflow. Commands are applied in the order they are issued — the catalog's order —
 *       which is what makes a dataflow's id (its catalog position) and its arrangement names the
 *       same on every start.
 *   <li>Drop. Dropping a dataflow stops its operators (they are no longer run) and releases its
 *       arrangements (the memory returns to the heap) — refused while another dataflow reads its
 *       collection.
 *   <li>Failure domains. An exception in a dataflow's operator marks that dataflow (and those
 *       reading it) FAILED with the error and discards its partial tick; the others and the
 *       engine keep running. A source that throws is marked FAILED likewise.
 *   <li>Snapshot consistency. {@link #capture()} returns, as of the last closed tick T, the
 *       immutable batches of every arrangement and {@code offsets(T)}: state and offsets agree.
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
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Map<String, Dataflow> dataflows = new LinkedHashMap<>(); // in catalog order
  private final Map<String, RunningSource> sources = new LinkedHashMap<>();
  private long lastClosedTick;
  private Map<String, SourceOffsets> lastOffsets = Map.of();
  private long recordsIngested;
  private long ticks;
  private long lastTickNanos;
  private Thread driver;
  private volatile boolean running;

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
    this.workers = new Workers(shards);
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
    private final List<SourceConnector> connectors = new ArrayList<>();

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

    /** Registers a connector in addition to those found by {@link ServiceLoader}. */
    public Builder connector(SourceConnector c) {
      connectors.add(c);
      return this;
    }

    public Engine build() {
      return new Engine(this);
    }
  }

  private static final class RunningSource implements SourceOutput {
    final String name;
    final Source source;
    SourceDefinition definition;
    final SourceOp op;
    final Dataflow dataflow;
    SourceOffsets seekTo = SourceOffsets.EMPTY;
    boolean seeked;

    RunningSource(String name, Source source, Dataflow dataflow) {
      this.name = name;
      this.source = source;
      this.dataflow = dataflow;
      this.op = dataflow.sourceOp();
    }

    @Override
    public void append(Row row, long diff) {
      op.offerAppend(row, diff);
    }

    @Override
    public void upsert(Row key, Row row) {
      op.offerUpsert(key, row);
    }

    @Override
    public void reset() {
      op.reset();
    }
  }

  public int workers() {
    return shards;
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
      RunningSource rs = new RunningSource(def.name(), s, d);
      rs.definition = valid;
      sources.put(def.name(), rs);
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
      Dataflow d = Dataflow.view(id, name, plan, keyCols, this::collection, shards);
      dataflows.put(name, d);
      LOG.info("Created view {} (dataflow {})", name, id);
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
      List<String> readers = readersOf(name);
      if (!readers.isEmpty()) {
        throw new IllegalArgumentException("Cannot drop '" + name + "': " + readers + " read it");
      }
      dataflows.remove(name);
      RunningSource s = sources.remove(name);
      if (s != null) {
        s.source.close();
      }
      LOG.info("Dropped {} (dataflow {})", name, d.id());
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

  public Optional<Dataflow> dataflow(String name) {
    lock.lock();
    try {
      return Optional.ofNullable(dataflows.get(name));
    } finally {
      lock.unlock();
    }
  }

  /** All dataflows in catalog order. */
  public List<Dataflow> dataflows() {
    lock.lock();
    try {
      return List.copyOf(dataflows.values());
    } finally {
      lock.unlock();
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

  /** Runs one tick and returns it (the new last closed tick). */
  public long tick() {
    lock.lock();
    try {
      long start = System.nanoTime();
      long tick = lastClosedTick + 1;
      for (Dataflow d : dataflows.values()) {
        for (Operator op : d.operators()) {
          for (int s = 0; s < shards; s++) {
            op.out(s).clear();
          }
        }
      }
      recordsIngested += pollSources();
      for (Dataflow d : dataflows.values()) {
        if (d.state() == Dataflow.State.RUNNING) {
          runDataflow(d, tick);
        }
      }
      List<Arrangement> live = new ArrayList<>();
      for (Dataflow d : dataflows.values()) {
        if (d.state() == Dataflow.State.RUNNING) {
          live.addAll(d.arrangements());
          d.setHydrating(false);
        }
      }
      workers.runAll(
          shard -> {
            for (Arrangement a : live) {
              a.seal(shard, tick, 4096);
            }
          });
      Map<String, SourceOffsets> offsets = new TreeMap<>();
      for (RunningSource s : sources.values()) {
        offsets.put(s.name, s.seeked ? s.source.position() : s.seekTo);
      }
      lastOffsets = offsets;
      lastClosedTick = tick;
      ticks++;
      lastTickNanos = System.nanoTime() - start;
      return tick;
    } finally {
      lock.unlock();
    }
  }

  private long pollSources() {
    List<RunningSource> active = new ArrayList<>();
    for (RunningSource s : sources.values()) {
      if (s.dataflow.state() == Dataflow.State.RUNNING) {
        active.add(s);
      }
    }
    if (active.isEmpty()) {
      return 0;
    }
    long deadline = System.nanoTime() + policy.maxDuration().toNanos();
    long total = 0;
    boolean lastRoundEmpty = false;
    while (total < policy.maxRecords()) {
      long round = 0;
      for (RunningSource s : active) {
        if (s.dataflow.state() != Dataflow.State.RUNNING) {
          continue;
        }
        long remaining = Math.max(0, deadline - System.nanoTime());
        // wait for records only when the previous round found none (never spin on empty sources)
        Duration wait =
            lastRoundEmpty ? Duration.ofNanos(Math.min(remaining, Duration.ofMillis(20).toNanos()) / active.size()) : Duration.ZERO;
        int want = (int) Math.min(Integer.MAX_VALUE, policy.maxRecords() - total);
        try {
          if (!s.seeked) {
            s.source.seek(s.seekTo);
            s.seeked = true;
          }
          int n = s.source.poll(s, want, wait);
          round += n;
          total += n;
        } catch (RuntimeException e) {
          LOG.error("Source {} failed: {}", s.name, e.getMessage(), e);
          failDataflow(s.dataflow, "source failed: " + e.getMessage());
          s.op.clearOffered();
        }
        if (total >= policy.maxRecords()) {
          break;
        }
      }
      lastRoundEmpty = round == 0;
      if (System.nanoTime() >= deadline) {
        break;
      }
    }
    return total;
  }

  private void runDataflow(Dataflow d, long tick) {
    try {
      for (Operator op : d.operators()) {
        runOperator(op, tick);
      }
    } catch (RuntimeException e) {
      String msg = e.getClass().getSimpleName() + ": " + e.getMessage();
      LOG.warn("Dataflow {} ({}) failed at tick {}: {}", d.name(), d.id(), tick, msg);
      failDataflow(d, msg);
    }
  }

  private void failDataflow(Dataflow d, String message) {
    d.fail(message);
    for (Arrangement a : d.arrangements()) {
      for (int s = 0; s < shards; s++) {
        a.discardStaged(s);
      }
    }
    for (Dataflow reader : dataflows.values()) {
      if (reader.state() == Dataflow.State.RUNNING && reader.dependencies().contains(d.name())) {
        failDataflow(reader, "input '" + d.name() + "' failed");
      }
    }
  }

  private void runOperator(Operator op, long tick) {
    List<Operator> inputs = op.inputs();
    int n = inputs.size();
    boolean anyInput = n == 0;
    for (Operator in : inputs) {
      for (int s = 0; s < shards && !anyInput; s++) {
        anyInput = in.out(s).size() > 0;
      }
    }
    if (!anyInput) {
      return;
    }
    // exchange: buckets[input][from][to]
    Rows[][][] buckets = new Rows[n][][];
    boolean exchange = false;
    for (int k = 0; k < n; k++) {
      if (op.exchangeKey(k) != null && shards > 1) {
        buckets[k] = new Rows[shards][shards];
        exchange = true;
      }
    }
    if (exchange) {
      workers.runAll(
          from -> {
            for (int k = 0; k < n; k++) {
              if (buckets[k] == null) {
                continue;
              }
              int[] key = op.exchangeKey(k);
              Rows src = inputs.get(k).out(from);
              Rows[] dst = buckets[k][from];
              for (int t = 0; t < shards; t++) {
                dst[t] = new Rows();
              }
              for (int i = 0; i < src.size(); i++) {
                Row r = src.row(i);
                dst[r.shardOf(key, shards)].add(r, src.diff(i));
              }
            }
          });
    }
    workers.runAll(
        shard -> {
          Rows[] in = new Rows[n];
          for (int k = 0; k < n; k++) {
            if (buckets[k] == null) {
              in[k] = inputs.get(k).out(shard);
            } else {
              Rows gathered = new Rows();
              for (int from = 0; from < shards; from++) {
                gathered.addAll(buckets[k][from][shard]);
              }
              in[k] = gathered;
            }
          }
          op.process(shard, tick, in);
        });
  }

  /** Runs ticks until every source is caught up (or {@code maxTicks} ticks ran); returns ticks run. */
  public long tickUntilCaughtUp(long maxTicks) {
    long n = 0;
    do {
      tick();
      n++;
    } while (n < maxTicks && !caughtUp());
    return n;
  }

  /** Whether every running source reports it has delivered everything up to its head. */
  public boolean caughtUp() {
    lock.lock();
    try {
      for (RunningSource s : sources.values()) {
        if (s.dataflow.state() == Dataflow.State.RUNNING && (!s.seeked || !s.source.caughtUp())) {
          return false;
        }
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Starts a driver thread that runs ticks until {@link #stop()}. */
  public synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    driver =
        new Thread(
            () -> {
              while (running) {
                try {
                  tick();
                } catch (RuntimeException e) {
                  LOG.error("Tick failed", e);
                }
              }
            },
            "cairn-driver");
    driver.setDaemon(true);
    driver.start();
  }

  /** Stops the driver thread after its current tick. */
  public synchronized void stop() {
    running = false;
    if (driver != null) {
      try {
        driver.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      driver = null;
    }
  }

  public long lastClosedTick() {
    lock.lock();
    try {
      return lastClosedTick;
    } finally {
      lock.unlock();
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
    lock.lock();
    try {
      Dataflow d = requireDataflow(name);
      List<Row> out = new ArrayList<>();
      for (int s = 0; s < shards; s++) {
        Rows r = d.contents(s);
        for (int i = 0; i < r.size(); i++) {
          for (long c = 0; c < r.diff(i); c++) {
            out.add(r.row(i));
          }
        }
      }
      out.sort(null);
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** The rows of {@code name} whose arrangement key equals {@code key}, as of the last closed tick. */
  public List<Row> lookup(String name, Row key) {
    lock.lock();
    try {
      Dataflow d = requireDataflow(name);
      var layout = d.layout();
      int shard = key.shard(shards);
      io.cairn.engine.trace.Values vals = new io.cairn.engine.trace.Values();
      d.arrangement().spine(shard).reader().values(key, vals);
      vals.consolidate();
      List<Row> out = new ArrayList<>();
      for (int i = 0; i < vals.size(); i++) {
        for (long c = 0; c < vals.diff(i); c++) {
          out.add(layout.join(key, vals.val(i)));
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  private Dataflow requireDataflow(String name) {
    Dataflow d = dataflows.get(name);
    if (d == null) {
      throw new IllegalArgumentException("Cannot read '" + name + "': no such source or view");
    }
    return d;
  }

  // ---------------------------------------------------------------- snapshots

  /**
   * A consistent cut as of the last closed tick: batches of every running dataflow's
   * arrangements and {@code offsets(T)}. O(number of batches); nothing is copied.
   */
  public EngineState capture() {
    lock.lock();
    try {
      List<ArrangementState> out = new ArrayList<>();
      for (Dataflow d : dataflows.values()) {
        if (d.state() != Dataflow.State.RUNNING) {
          continue;
        }
        for (Arrangement a : d.arrangements()) {
          for (int s = 0; s < shards; s++) {
            out.add(
                new ArrangementState(
                    a.name(), s, a.keySchema(), a.valSchema(), a.spine(s).batches(), a.spine(s).upper()));
          }
        }
      }
      return new EngineState(lastClosedTick, shards, lastOffsets, out);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Loads {@code state} into the dataflows created so far (before any tick ran): each dataflow
   * whose arrangements are all in {@code state} gets their batches and will not re-read its
   * inputs; any other dataflow hydrates from its inputs at the next tick. Sources resume at
   * {@code state.offsets()}. A snapshot taken with another number of workers is re-sharded.
   */
  public void restore(EngineState state) {
    lock.lock();
    try {
      if (lastClosedTick != 0) {
        throw new IllegalStateException("Cannot restore: the engine has already run " + lastClosedTick + " ticks");
      }
      Map<String, List<ArrangementState>> byName = new HashMap<>();
      for (ArrangementState a : state.arrangements()) {
        byName.computeIfAbsent(a.arrangement(), k -> new ArrayList<>()).add(a);
      }
      long upper = state.tick() + 1;
      for (Dataflow d : dataflows.values()) {
        boolean complete = true;
        for (Arrangement a : d.arrangements()) {
          List<ArrangementState> parts = byName.get(a.name());
          if (parts == null || !a.keySchema().equals(parts.get(0).keySchema()) || !a.valSchema().equals(parts.get(0).valSchema())) {
            complete = false;
          }
        }
        if (!complete) {
          LOG.warn("Dataflow {} ({}) has no complete state in the snapshot: it will be recomputed from its inputs", d.name(), d.id());
          d.setHydrating(true);
          continue;
        }
        for (Arrangement a : d.arrangements()) {
          load(a, byName.get(a.name()), state.shards(), upper);
        }
        d.setHydrating(false);
      }
      for (RunningSource s : sources.values()) {
        s.seekTo = state.offsets().getOrDefault(s.name, SourceOffsets.EMPTY);
        s.seeked = false;
      }
      lastOffsets = new TreeMap<>(state.offsets());
      lastClosedTick = state.tick();
      LOG.info("Restored state as of tick {} ({} rows)", state.tick(), state.rows());
    } finally {
      lock.unlock();
    }
  }

  private void load(Arrangement a, List<ArrangementState> parts, int savedShards, long upper) {
    if (savedShards == shards && parts.size() == shards) {
      workers.runAll(
          shard -> {
            for (ArrangementState p : parts) {
              if (p.shard() == shard) {
                a.spine(shard).load(p.batches(), upper);
              }
            }
          });
      return;
    }
    List<List<Update>> per = new ArrayList<>();
    for (int s = 0; s < shards; s++) {
      per.add(new ArrayList<>());
    }
    for (ArrangementState p : parts) {
      for (Batch b : p.batches()) {
        for (int i = 0; i < b.size(); i++) {
          Update u = b.update(i);
          per.get(u.key().shard(shards)).add(new Update(u.key(), u.val(), upper - 1, u.diff()));
        }
      }
    }
    for (int s = 0; s < shards; s++) {
      Batch b =
          Batch.fromUpdates(a.keySchema(), a.valSchema(), per.get(s), new io.cairn.engine.trace.Description(0, upper, upper - 1));
      a.spine(s).load(List.of(b), upper);
    }
  }

  /** Tells each source that a snapshot holding {@code offsets} committed (Postgres confirms its LSN). */
  public void onSnapshotCommitted(Map<String, SourceOffsets> offsets) {
    lock.lock();
    try {
      for (RunningSource s : sources.values()) {
        SourceOffsets o = offsets.get(s.name);
        if (o != null && !o.isEmpty()) {
          try {
            s.source.onSnapshotCommitted(o);
          } catch (RuntimeException e) {
            LOG.warn("Source {} could not acknowledge committed offsets: {}", s.name, e.getMessage());
          }
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** The running source named {@code name} (for meters and rate caps). */
  public Optional<Source> source(String name) {
    lock.lock();
    try {
      RunningSource s = sources.get(name);
      return s == null ? Optional.empty() : Optional.of(s.source);
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

  /** Counters for metrics. */
  public record Metrics(long ticks, long lastClosedTick, long recordsIngested, long lastTickNanos, long arrangementBytes) {}

  public Metrics metrics() {
    lock.lock();
    try {
      long bytes = 0;
      for (Dataflow d : dataflows.values()) {
        for (Arrangement a : d.arrangements()) {
          bytes += a.heapBytes();
        }
      }
      return new Metrics(ticks, lastClosedTick, recordsIngested, lastTickNanos, bytes);
    } finally {
      lock.unlock();
    }
  }

  public Clock clock() {
    return clock;
  }

  @Override
  public void close() {
    stop();
    lock.lock();
    try {
      for (RunningSource s : sources.values()) {
        try {
          s.source.close();
        } catch (RuntimeException e) {
          LOG.warn("Closing source {} failed: {}", s.name, e.getMessage());
        }
      }
      sources.clear();
      dataflows.clear();
    } finally {
      lock.unlock();
      workers.close();
    }
  }
}
