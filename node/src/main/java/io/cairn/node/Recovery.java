package io.cairn.node;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.sql.SqlSession;
import io.cairn.objectstore.ObjectStore;
import io.cairn.node.config.CairnConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovery: what every start of a node does before it serves.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Order: load the newest snapshot that verifies (older ones are fallbacks, each named in the
 *       report) while replaying the catalog up to the newest readable manifest's position and
 *       letting the sources connect ({@link #loadWhileReplaying}); check the catalog is the
 *       history the snapshot was taken with (no missing or changed entry, or recovery refuses);
 *       restore the engine's state; replay the rest of the catalog; run init (once, on an empty
 *       catalog); seek every source to the snapshot's offsets; tick until every source is caught
 *       up.
 *   <li>A fallback to a snapshot at another catalog position than the one replayed to starts the
 *       recovery again on a fresh engine ({@link FellBackPastReplay}); the result is as if the
 *       older snapshot had been the only one.
 *   <li>No snapshot: a full replay, said loudly in the log and the report.
 *   <li>The report says, per source, where it resumed and what it read, and per dataflow where
 *       its state came from (snapshot, recomputed, re-read, new).
 *   <li>Runs on the starting thread, before the node serves: it owns the sources' clients until
 *       the tick driver starts.
 * </ul>
 */
final class Recovery {
  private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

  private final CairnConfig config;
  private final Node.Options options;
  private final ObjectStore store;
  private final SnapshotStore snapshots;
  private final Engine engine;
  private final SqlSession session;

  private final FellBackPastReplay previous;

  /** How long sources may take to warm up while the snapshot loads (a broker that is down costs this once). */
  static final java.time.Duration SOURCE_WARM_UP_BUDGET = java.time.Duration.ofSeconds(2);

  /** A recovery of an empty engine and session. */
  Recovery(CairnConfig config, Node.Options options, ObjectStore store, SnapshotStore snapshots, Engine engine, SqlSession session) {
    this(config, options, store, snapshots, engine, session, null);
  }

  /**
   * A recovery that starts again, on a fresh engine and session, after {@code previous} fell back
   * to a snapshot at another catalog position than the one it had replayed to: it uses the
   * snapshot {@code previous} loaded, and replays the catalog only up to that snapshot's position.
   */
  Recovery(CairnConfig config, Node.Options options, ObjectStore store, SnapshotStore snapshots, Engine engine, SqlSession session,
      FellBackPastReplay previous) {
    this.config = config;
    this.options = options;
    this.store = store;
    this.snapshots = snapshots;
    this.engine = engine;
    this.session = session;
    this.previous = previous;
  }

  /** Told the name of each phase as it ends (status shows where a recovery is); any thread may read what it publishes. */
  private java.util.function.Consumer<String> phaseListener = p -> {};

  Recovery onPhaseEnd(java.util.function.Consumer<String> listener) {
    this.phaseListener = java.util.Objects.requireNonNull(listener, "listener");
    return this;
  }

  /**
   * Thrown by {@link #run()} when the snapshot that loaded is an older one (a newer one failed to
   * verify) taken at another catalog position than the newer one's, to which the catalog had
   * been replayed while loading. The engine then holds dataflows the older snapshot's state must
   * not meet (a view dropped and created again under its name, say): the caller discards engine
   * and session and runs a {@link Recovery} with this exception on fresh ones.
   */
  static final class FellBackPastReplay extends RuntimeException {
    private final transient SnapshotStore.Recovered recovered;
    private final long startNanos;

    FellBackPastReplay(SnapshotStore.Recovered recovered, long replayedTo, long startNanos) {
      super("Recovery fell back to snapshot " + recovered.info().key() + " (catalog position " + recovered.manifest().catalogPosition()
          + ") after the catalog had been replayed to position " + replayedTo + " for a newer snapshot that did not verify: "
          + "starting again on a fresh engine with the older snapshot", null, false, false);
      this.recovered = recovered;
      this.startNanos = startNanos;
    }
  }

  /** Runs the recovery: load, replay the catalog, init, seek, catch up; returns its report. */
  RecoveryReport run() {
    return resume(load(true), false);
  }

  /**
   * What {@link #load} leaves for {@link #resume}: the engine holds the snapshot's state (or
   * nothing, for a full replay) and the catalog up to the snapshot's position; no source has been
   * sought and no tick has run. A standby holds one of these and serves reads from it.
   */
  record Loaded(
      SnapshotStore.Recovered rec,
      List<RecoveryReport.Fallback> fallbacks,
      long rowsLoaded,
      Map<String, SourceOffsets> resumeFrom,
      Engine.Restored restored,
      java.util.Set<String> inSnapshot,
      long startNanos,
      Phases phases) {}

  /**
   * The first half of a recovery: loads the newest snapshot that verifies, replays the catalog up
   * to its position, checks the catalog is the history it was taken with and restores the
   * engine's state. With {@code connectSources} the sources connect meanwhile (a start that will
   * seek next); a standby passes false and touches no source.
   */
  Loaded load(boolean connectSources) {
    long t0 = previous == null ? System.nanoTime() : previous.startNanos;
    Phases phases = new Phases(t0, phaseListener);
    SnapshotStore.Recovered rec;
    if (previous == null) {
      rec = loadWhileReplaying(phases, t0, connectSources);
    } else {
      rec = previous.recovered;
      phases.end("snapshot load (first attempt)");
    }
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
      if (session.position() < want) {
        session.replay(want);
        phases.end("catalog to snapshot");
      }
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
      phases.end("restore");
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
    return new Loaded(rec, fallbacks, rowsLoaded, resumeFrom, restored, inSnapshot, t0, phases);
  }

  /**
   * The second half: replays the rest of the catalog, runs init, seeks every source and catches
   * up; returns the report. After {@link #load} on the same engine and session (at once, or when
   * a standby takes over: its phases are then timed from the takeover, the load's are reported
   * as they were).
   */
  RecoveryReport resume(Loaded loaded, boolean takeover) {
    SnapshotStore.Recovered rec = loaded.rec();
    List<RecoveryReport.Fallback> fallbacks = loaded.fallbacks();
    long rowsLoaded = loaded.rowsLoaded();
    Map<String, SourceOffsets> resumeFrom = loaded.resumeFrom();
    if (takeover) {
      // a hot standby read on from the snapshot: its sources resume where it is, not where the snapshot was
      Map<String, SourceOffsets> now = new LinkedHashMap<>(engine.offsets());
      now.keySet().retainAll(resumeFrom.keySet());
      resumeFrom = now;
    }
    Engine.Restored restored = loaded.restored();
    java.util.Set<String> inSnapshot = loaded.inSnapshot();
    long t0 = takeover ? System.nanoTime() : loaded.startNanos();
    Phases phases = loaded.phases();
    if (takeover) {
      Map<String, Long> before = phases.millis();
      phases = new Phases(t0, phaseListener);
      for (Map.Entry<String, Long> e : before.entrySet()) {
        phases.record("as a standby, before the takeover: " + e.getKey(), e.getValue());
      }
    }
    session.replayAll();
    runInit();
    phases.end("catalog after snapshot");
    if (config.catchUpRateLimit() > 0) {
      for (String s : engine.sourceNames()) {
        engine.setReadRateLimit(s, config.catchUpRateLimit());
      }
    }
    // the deadline covers seeking and catching up; when it passes, a tick blocked in a source
    // call (a broker gone: calls wait out their request timeouts) is woken up so that it ends
    long deadline = options.catchUpTimeout() == null ? Long.MAX_VALUE : System.nanoTime() + options.catchUpTimeout().toNanos();
    java.util.concurrent.ScheduledExecutorService watchdog = deadlineWatchdog(deadline);
    Map<String, Map<String, Long>> before;
    boolean caughtUp;
    long catchUpMillis;
    RecoveryReport.CatchUpTicks ticks;
    try {
      // seek every source now, so that lost offsets or an unreachable source show in this report
      before = meters(engine.seekSources());
      phases.end("seek");
      Engine.Metrics m0 = engine.metrics();
      long c0 = System.nanoTime();
      caughtUp = catchUp(deadline);
      catchUpMillis = (System.nanoTime() - c0) / 1_000_000;
      phases.end("catch-up");
      Engine.Metrics m1 = engine.metrics();
      ticks = new RecoveryReport.CatchUpTicks(m1.ticks() - m0.ticks(), Math.round((m1.readingNanos() - m0.readingNanos()) / 1e6),
          Math.round((m1.computingNanos() - m0.computingNanos()) / 1e6));
    } finally {
      if (watchdog != null) {
        watchdog.shutdownNow();
      }
    }
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
    phases.end("report");
    long totalMillis = (System.nanoTime() - t0) / 1_000_000;
    long age = rec.found() ? Math.max(0, (options.clock().millis() - rec.info().lastModified().toEpochMilli()) / 1000) : 0;
    return new RecoveryReport(
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
            ticks,
            caughtUp,
            totalMillis,
            phases.millis(),
            sources,
            flows);
  }

  /**
   * Loads the newest snapshot that verifies while this thread replays the catalog up to the
   * position of the newest manifest that reads and lets the sources connect for a seek to that
   * manifest's offsets. The two are independent (the load only reads the store; the replay
   * creates dataflows and opens their sources, which connect but read no record), so a restart
   * waits for the longer of the two rather than their sum: with a remote store and remote
   * brokers, round trips overlap round trips; in a fresh JVM, class loading and interpreted code
   * run on both cores. When the load falls back to a snapshot at another catalog position,
   * {@link FellBackPastReplay} is thrown so that recovery starts again on a fresh engine.
   */
  private SnapshotStore.Recovered loadWhileReplaying(Phases phases, long t0, boolean connectSources) {
    java.util.concurrent.CompletableFuture<io.cairn.snapshotter.Manifest> first = new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.CompletableFuture<SnapshotStore.Recovered> loading = new java.util.concurrent.CompletableFuture<>();
    Thread loader = new Thread(() -> {
      try {
        loading.complete(snapshots.loadLatest(first::complete));
      } catch (Throwable e) {
        loading.completeExceptionally(e);
      } finally {
        first.complete(null);
      }
    }, "cairn-recovery-load");
    loader.setDaemon(true);
    loader.start();
    io.cairn.snapshotter.Manifest candidate = join(first);
    if (candidate == null) {
      SnapshotStore.Recovered rec = join(loading);
      phases.end("snapshot load");
      return rec;
    }
    long replayedTo = candidate.catalogPosition();
    try {
      session.replay(replayedTo);
    } catch (RuntimeException e) {
      SnapshotStore.Recovered rec;
      try {
        rec = join(loading);
      } catch (RuntimeException again) {
        e.addSuppressed(again);
        throw e;
      }
      if (rec.found() && rec.manifest().catalogPosition() < replayedTo) {
        // the older snapshot may not need the entry that failed: start again from it
        throw new FellBackPastReplay(rec, replayedTo, t0);
      }
      throw e;
    }
    phases.end("catalog to snapshot");
    if (connectSources) {
      // connect the sources meanwhile: the seek after the restore then has little left to ask
      engine.warmUpSources(SOURCE_WARM_UP_BUDGET);
      phases.end("connect sources");
    }
    SnapshotStore.Recovered rec = join(loading);
    phases.end("snapshot load");
    if (rec.found() && rec.manifest().catalogPosition() != replayedTo) {
      throw new FellBackPastReplay(rec, replayedTo, t0);
    }
    return rec;
  }

  private static <T> T join(java.util.concurrent.CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw e;
    }
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

  /** A thread that wakes the sources when {@code deadline} (nanoTime) passes; null without one. */
  private java.util.concurrent.ScheduledExecutorService deadlineWatchdog(long deadline) {
    if (deadline == Long.MAX_VALUE) {
      return null;
    }
    java.util.concurrent.ScheduledExecutorService w = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cairn-recovery-deadline");
      t.setDaemon(true);
      return t;
    });
    w.schedule(() -> {
      LOG.warn("Not caught up within {}: waking the sources up", options.catchUpTimeout());
      engine.wakeSources();
    }, deadline - System.nanoTime(), java.util.concurrent.TimeUnit.NANOSECONDS);
    return w;
  }

  private boolean catchUp(long deadline) {
    try (CatchUpProgress progress = CatchUpProgress.start(options.progress())) {
      while (true) {
        engine.catchUpTick();
        CrashPoints.hit("recovery.tick");
        progress.update(engine.recordsIngested(), engine.lastClosedTick());
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

  /** Wall time per phase of a recovery, in the order they ran (each phase ends where the next begins). */
  static final class Phases {
    private final Map<String, Long> nanos = new LinkedHashMap<>();
    private final java.util.function.Consumer<String> listener;
    private long last;

    Phases(long start, java.util.function.Consumer<String> listener) {
      this.last = start;
      this.listener = listener;
    }

    synchronized void end(String phase) {
      long now = System.nanoTime();
      nanos.merge(phase, now - last, Long::sum);
      last = now;
      listener.accept(phase);
    }

    Map<String, Long> millis() {
      Map<String, Long> out = new LinkedHashMap<>();
      nanos.forEach((k, v) -> out.put(k, Math.round(v / 1e6)));
      return out;
    }

    /** A phase that ran elsewhere (a standby's load), reported but not timed here. */
    synchronized void record(String phase, long millis) {
      nanos.merge(phase, millis * 1_000_000L, Long::sum);
    }
  }

  private static Map<String, Map<String, Long>> meters(Map<String, io.cairn.engine.runtime.SourceStatus> statuses) {
    Map<String, Map<String, Long>> out = new HashMap<>();
    statuses.forEach((name, st) -> out.put(name, st.load()));
    return out;
  }
}
