package io.cairn.recovery.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.sql.SqlSession;
import io.cairn.recovery.config.CairnConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
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
 *   <li>After the commit, and only if this node still owns the store (a newer owner may have
 *       recovered from an older snapshot), the sources are told the snapshot committed (Postgres
 *       then confirms the LSN to its slot); then retention and garbage collection run.
 *   <li>Publishes for status and metrics: the last snapshot's figures, the last error, the
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
  private volatile Map<String, Object> lastSnapshot = Map.of();
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

  /** The figures of the last snapshot this node took (empty before the first). */
  Map<String, Object> lastSnapshot() {
    return lastSnapshot;
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
   * from the latest snapshot would need (a Kafka topic's retention shorter than the snapshot
   * interval). Runs at start and after each snapshot.
   */
  void checkRetention() {
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

  /**
   * Takes a snapshot now: captures the engine between two ticks (the pause), uploads in the
   * calling thread while the engine keeps ticking, commits, then lets the sources release what
   * the snapshot no longer needs, and applies retention. Returns the figures.
   */
  Map<String, Object> snapshotNow() {
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
        onFenced.accept(e);
        throw e;
      }
      engine.onSnapshotCommitted(st);
      lastSnapshot = figures;
      ScheduledExecutorService bg = background;
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
}
