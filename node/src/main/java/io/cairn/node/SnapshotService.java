package io.cairn.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.sql.SqlSession;
import io.cairn.node.config.CairnConfig;
import io.cairn.snapshotter.SnapshotResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot service: one capture path from the engine to a committed snapshot.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>One snapshot at a time ({@code snapshotLock}, the first lock in the node's lock order).
 *   <li>Capture: between two ticks, under the engine lock, a typed {@link Cut} — the engine's
 *       state as of the last closed tick, the catalog position and hash it goes with, and the pause.
 *       The upload runs on the calling thread while the engine keeps ticking and reads are served.
 *   <li>A commit is reported as it is. The conditional write of the manifest decides whether a
 *       snapshot committed: if it returns, the snapshot is committed — the next recovery of the
 *       store's owner uses it — and it is reported so (log, {@code POST /snapshot}, status
 *       {@code lastSnapshot}; {@code lastError} is cleared) whatever happens next. What runs after
 *       the commit (the ownership check, confirming offsets to the sources, retention and GC) is
 *       reported beside it, in the {@link SnapshotOutcome}'s {@code ownership}, {@code sourcesConfirmed} and {@code
 *       retention}, and never turns the commit into a failure. A write that throws is a failed
 *       snapshot; the previous one stays the latest. A write whose outcome is unknown (it failed
 *       and the look-up after it failed too) is reported as such in {@code lastError}: the
 *       manifest may be in the store and a later recovery may use it, which is safe because its
 *       offsets were never confirmed, so the sources still hold what it needs.
 *   <li>When offsets may be confirmed (Postgres then frees WAL before the LSN, for good): only when
 *       the committed manifest is one the store's true owner will recover from (or from a newer
 *       one). A node that took the store lists the manifests after taking it, so a manifest that
 *       committed before the newest epoch was created is seen by its owner; one that committed
 *       after a newer epoch was created may not be (that owner may be replaying from an older
 *       manifest, and needs the WAL from that older LSN). So the rule: confirm the offsets of a
 *       manifest only after an ownership check that <em>started after the commit returned</em>
 *       finds no newer epoch than this node's. Then every newer epoch is created after the commit,
 *       and its owner sees the manifest. If the check finds a newer epoch, the offsets are never
 *       confirmed (the node is fenced and stops). If it cannot tell (the store unreachable), the
 *       node keeps running, confirms nothing, and checks again every {@value #RECHECK_SECONDS} s
 *       (when serving) or at the next snapshot; the first check that succeeds confirms the newest
 *       committed snapshot's offsets, unless a newer epoch was found. Until then the sources keep
 *       the WAL (more WAL retained, never less).
 *   <li>Confirmation only moves forward: a pending confirmation is replaced by a newer commit's
 *       ({@code confirmLock}: after {@code snapshotLock}, before the engine lock).
 *   <li>Publishes for status and metrics: the last snapshot's {@link SnapshotOutcome} (replaced,
 *       never changed in place), the last error, the
 *       retention guard's warnings.
 * </ul>
 */
final class SnapshotService {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotService.class);

  private final CairnConfig config;
  private final Node.Options options;
  private final SnapshotStore snapshots;
  private final Engine engine;
  private final SqlSession session;
  private final StoreFence fence;
  private final Consumer<StoreFence.FencedException> onFenced;
  private final Object snapshotLock = new Object();
  private volatile SnapshotOutcome lastSnapshot;
  private volatile ScheduledExecutorService background;

  SnapshotService(CairnConfig config, Node.Options options, SnapshotStore snapshots, Engine engine, SqlSession session,
      StoreFence fence, Consumer<StoreFence.FencedException> onFenced) {
    this.config = config;
    this.options = options;
    this.snapshots = snapshots;
    this.engine = engine;
    this.session = session;
    this.fence = fence;
    this.onFenced = onFenced;
  }

  /** Runs the retention guard after each snapshot on {@code bg} (off the snapshot's path). */
  void useBackground(ScheduledExecutorService bg) {
    this.background = bg;
  }

  /** The last snapshot this node took (empty before the first). */
  Optional<SnapshotOutcome> lastSnapshot() {
    return Optional.ofNullable(lastSnapshot);
  }

  /** The last snapshot's error, or null after a good one. */
  String lastError() {
    return lastSnapshotError;
  }

  /** The retention guard's warnings (see {@link #checkRetention}). */
  List<String> retentionWarnings() {
    return retentionWarnings;
  }

  private volatile List<String> retentionWarnings = List.of();

  /**
   * Retention guard: warns when a source could lose, before the next snapshot, the data a restart
   * from the latest snapshot would need (e.g. a Kafka topic's retention shorter than the snapshot
   * interval): asks each source's connector for its {@link io.cairn.engine.source.RetentionGuard}.
   * Runs at start and after each snapshot.
   */
  void checkRetention() {
    Duration interval = snapshots.interval(config);
    List<String> warnings = new ArrayList<>();
    for (String name : engine.sourceNames()) {
      engine.sourceDefinition(name).ifPresent(def -> engine.connector(def.connector())
          .flatMap(SourceConnector::retentionGuard)
          .ifPresent(guard -> {
            try {
              guard.check(def, options.secrets(), interval).ifPresent(warnings::add);
            } catch (RuntimeException e) {
              LOG.warn("Retention check of source {} failed: {}", name, e.getMessage());
            }
          }));
    }
    retentionWarnings = List.copyOf(warnings);
  }

  private volatile String lastSnapshotError;

  /** The schedule's job: a snapshot whose failure is logged, the previous snapshot staying the latest. */
  void scheduledSnapshot() {
    try {
      snapshotNow();
    } catch (RuntimeException e) {
      LOG.error("Scheduled snapshot failed; the previous snapshot stays the latest: {}", e.getMessage(), e);
    }
  }


  /** What a snapshot captures between two ticks: the state, the catalog it goes with, and how long the engine was held. */
  private record Cut(EngineState state, long catalogPosition, String catalogHash, long pauseNanos) {}

  /** Captures the engine between two ticks; the pause is the time the engine is held. */
  private Cut cut() {
    return engine.betweenTicks(() -> {
      long p0 = System.nanoTime(); // the pause: the engine is held between two ticks
      EngineState captured = engine.capture();
      return new Cut(captured, session.position(), session.lastHash(), System.nanoTime() - p0);
    });
  }

  /**
   * Runs a snapshot's capture once and discards it, so that the first real snapshot's capture runs
   * code already loaded, linked and compiled: a freshly started node's first capture held the engine
   * 0.7–4.3 ms for a state of six batches, where a later one takes hundredths of a millisecond
   * (benchmarks/RESULTS.md, issue 34). A daily snapshot is always its process's first. Returns the
   * nanoseconds this capture held the engine.
   */
  long warmUpCapture() {
    return cut().pauseNanos();
  }

  /**
   * Takes a snapshot now: captures the engine between two ticks (the pause), uploads in the
   * calling thread while the engine keeps ticking, commits, then lets the sources release what
   * the snapshot no longer needs, and applies retention. Returns the outcome.
   */
  SnapshotOutcome snapshotNow() {
    synchronized (snapshotLock) {
      Cut cut = cut();
      EngineState st = cut.state();
      SnapshotResult result;
      try {
        result = snapshots.write(st, cut.catalogPosition(), cut.catalogHash(), fence.epoch(), cut.pauseNanos());
      } catch (RuntimeException e) {
        boolean unknown = e instanceof io.cairn.snapshotter.exceptions.SnapshotFailedException f && f.outcomeUnknown();
        lastSnapshotError = java.time.Instant.now(options.clock()) + ": " + e.getMessage()
            + (unknown ? " (outcome unknown: the manifest may be in the store; its offsets are not confirmed)" : "");
        throw e;
      }
      // committed: from here on nothing turns this snapshot into a failure
      lastSnapshotError = null;
      String id = result.snapshotId();
      publish(SnapshotOutcome.committed(result));
      String ownership = confirmAfterCommit(st, id);
      ScheduledExecutorService bg = background;
      if (bg != null) {
        bg.execute(this::checkRetention); // off the snapshot's path: it samples the WAL rate for a second
      }
      if (ownership.equals("fenced")) {
        amend(id, o -> o.withRetention("skipped: this node no longer owns the store"));
      } else {
        try {
          snapshots.applyRetention();
          amend(id, o -> o.withRetention("ok"));
        } catch (RuntimeException e) {
          LOG.warn("Retention after snapshot {} failed (the snapshot is committed; will retry next time): {}", id, e.getMessage());
          String why = "failed (the snapshot is committed; retried after the next one): " + e.getMessage();
          amend(id, o -> o.withRetention(why));
        }
      }
      return lastSnapshot;
    }
  }

  /** How often a node that could not tell whether it still owns the store checks again. */
  static final long RECHECK_SECONDS = 5;

  private final Object confirmLock = new Object();
  /** The newest committed snapshot whose offsets are not confirmed yet, or null (guarded by confirmLock). */
  private Pending unconfirmed;

  private record Pending(EngineState state, String snapshotId) {}

  /**
   * After a commit: the ownership check, then (only if it finds this node the owner) the offsets
   * confirmed to the sources. Returns "confirmed", "fenced" or "unknown".
   */
  private String confirmAfterCommit(EngineState st, String id) {
    Pending p = new Pending(st, id);
    synchronized (confirmLock) {
      unconfirmed = p; // a newer commit's confirmation covers an older one still pending
    }
    return checkAndConfirm(p, true);
  }

  /** The ownership check for {@code p}, started now (after its commit); confirms when it finds this node the owner. */
  private String checkAndConfirm(Pending p, boolean first) {
    try {
      fence.check(); // started after the commit returned: see the design block
    } catch (StoreFence.FencedException e) {
      synchronized (confirmLock) {
        if (unconfirmed == p) {
          unconfirmed = null;
        }
      }
      LOG.error("Snapshot {} committed, but this node no longer owns the store: its offsets are not confirmed to the sources. {}",
          p.snapshotId(), e.getMessage());
      amend(p.snapshotId(), o -> o.withOwnership("fenced: " + e.getMessage()));
      onFenced.accept(e);
      return "fenced";
    } catch (RuntimeException e) {
      if (first) {
        LOG.warn("Snapshot {} committed, but whether this node still owns the store cannot be told ({}): its offsets are "
            + "confirmed to the sources once a check finds this node the owner", p.snapshotId(), e.getMessage());
        String why = "unknown (" + e.getMessage() + "): offsets are confirmed once a check finds this node the owner";
        amend(p.snapshotId(), o -> o.withOwnership(why));
      } else {
        LOG.debug("Ownership still cannot be told (will check again): {}", e.getMessage());
      }
      scheduleRecheck();
      return "unknown";
    }
    synchronized (confirmLock) {
      if (unconfirmed != p) {
        return "confirmed"; // a newer commit took over the confirmation
      }
      unconfirmed = null;
      engine.onSnapshotCommitted(p.state());
    }
    if (!first) {
      LOG.info("This node still owns the store (epoch {}): the offsets of snapshot {} are confirmed to the sources",
          fence.epoch(), p.snapshotId());
    }
    String confirmed = "confirmed (epoch " + fence.epoch() + ")";
    amend(p.snapshotId(), o -> o.withSourcesConfirmed(confirmed));
    return "confirmed";
  }

  private void scheduleRecheck() {
    ScheduledExecutorService bg = background;
    if (bg != null && !bg.isShutdown()) {
      try {
        bg.schedule(this::recheckOwnership, RECHECK_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        LOG.debug("Not checking ownership again: the node is stopping");
      }
    }
  }

  /**
   * Forgets a confirmation still pending (the node is closing): its captured state would otherwise
   * keep every batch of the engine reachable after the engine is gone.
   */
  void dropPending() {
    synchronized (confirmLock) {
      unconfirmed = null;
    }
  }

  /** The check again, for the pending confirmation (see the design block). */
  void recheckOwnership() {
    Pending p;
    synchronized (confirmLock) {
      p = unconfirmed;
    }
    if (p != null) {
      checkAndConfirm(p, false);
    }
  }

  /** Applies {@code change} to the published outcome, if it is still that of snapshot {@code id}. */
  private void amend(String id, UnaryOperator<SnapshotOutcome> change) {
    synchronized (confirmLock) {
      SnapshotOutcome o = lastSnapshot;
      if (o != null && o.snapshotId().equals(id)) {
        lastSnapshot = change.apply(o);
      }
    }
  }

  private void publish(SnapshotOutcome outcome) {
    synchronized (confirmLock) {
      lastSnapshot = outcome;
    }
  }
}
