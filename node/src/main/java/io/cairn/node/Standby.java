package io.cairn.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.sql.SqlSession;
import io.cairn.snapshotter.ManifestInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A warm standby: a member of a group that does not own the store follows the owner's committed
 * snapshots, so that a takeover only has to catch the sources up.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Every {@code standby.refresh-interval} one listing of {@code snapshots/} finds the newest
 *       manifest. When it is not the one held, a fresh engine and SQL session load it (the first
 *       half of a recovery, {@link Recovery#load}, touching no source), and the node serves reads
 *       from the new pair at once; the old pair is closed after the statement timeout, so a read
 *       that started on it ends normally. Batch files come through a {@link BatchFileCache}: a
 *       load downloads only the files the previous one did not read.
 *   <li>A standby writes nothing: its store is a {@link WriteGate} that is closed, its session is
 *       read-only (DDL answers 25006 and names the owner), it takes no epoch, claims no slot, and
 *       seeks no source — a Postgres slot has one reader, and a Kafka read is not needed to be
 *       warm. Its views are as of the snapshot it holds: status says which, and how far it is
 *       behind the newest manifest in the store.
 *   <li>Catalog entries after the snapshot (DDL the owner ran since) are applied at each load and
 *       each refresh, so views created since appear before the next snapshot. The engine's driver
 *       runs on a warm standby too, with every source held: its ticks read nothing and compute the
 *       new views from the state loaded — the views the owner had at the snapshot's tick.
 *   <li>Hot ({@code standby.mode: hot}): after a load, the engine ticks the sources whose connector
 *       allows {@linkplain io.cairn.engine.source.SourceConnector#sharedReads() shared reads}
 *       (Kafka: read_committed, no consumer group, no commits) from the snapshot's offsets, and
 *       holds the others at them (a Postgres slot has one reader: the owner). The new pair is
 *       served once those sources have caught up, so reads never go back to the snapshot; its
 *       views are then as fresh as its Kafka reads. Each committed snapshot is still loaded (a
 *       Postgres slot may be confirmed to its LSN, so the held sources must resume from it).
 *   <li>A load that fails (a manifest that does not verify, the store unreachable) keeps the pair
 *       already served; status shows the error, and the next round tries again.
 *   <li>{@link #stop} (the group made this member the owner) waits for a load in progress and
 *       returns what is held; the takeover then loads the newest manifest if it is not that one
 *       (the owner may have committed one just before it died, and a Postgres slot may already
 *       be confirmed to its LSN), and resumes from it.
 * </ul>
 */
final class Standby {
  private static final Logger LOG = LoggerFactory.getLogger(Standby.class);

  /** What a standby serves: an engine and session holding {@code manifest}'s state, and how it was loaded. */
  record Held(Recovery.Loaded loaded, Engine engine, SqlSession session, Optional<ManifestInfo> manifest, long loadMillis,
      Instant loadedAt) {
    String key() {
      return manifest.map(ManifestInfo::key).orElse(null);
    }
  }

  /** Builds a fresh engine and read-only session for a load, and installs a loaded pair on the node. */
  interface Host {
    Node.Pair freshPair();

    /** Serves reads from {@code held} from now on; returns the pair it replaces (null for none). */
    Node.Pair install(Held held);

    Recovery recovery(Node.Pair pair, Recovery.FellBackPastReplay previous);

    SnapshotStore snapshots();

    Duration statementTimeout();
  }

  private final Host host;
  private final boolean hot;
  private final Duration interval;
  private final BatchFileCache cache;
  private final Object loadLock = new Object();
  private final Object sleep = new Object();
  private final Thread thread;
  private final java.util.concurrent.ScheduledExecutorService closer;
  private volatile boolean stopping;
  private volatile boolean closed;
  private volatile Held held;
  private volatile Optional<ManifestInfo> newestSeen = Optional.empty();
  private volatile Instant newestSeenAt;
  private volatile String lastError;
  private volatile long loads;
  private volatile long catalogEntriesApplied;

  Standby(Host host, Duration interval, BatchFileCache cache, boolean hot) {
    this.host = host;
    this.hot = hot;
    this.interval = interval;
    this.cache = cache;
    this.closer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cairn-standby-close");
      t.setDaemon(true);
      return t;
    });
    this.thread = new Thread(this::follow, "cairn-standby");
    this.thread.setDaemon(true);
  }

  /** Loads the newest snapshot now (on the calling thread), then follows the store in the background. */
  void start() {
    refresh();
    thread.start();
  }

  private void follow() {
    while (!stopping) {
      synchronized (sleep) {
        try {
          if (!stopping) {
            sleep.wait(interval.toMillis());
          }
        } catch (InterruptedException e) {
          return;
        }
      }
      if (!stopping) {
        refresh();
      }
    }
  }

  /** Wakes the follower from its wait without interrupting it (an interrupt would break a load's file reads). */
  private void wake() {
    synchronized (sleep) {
      sleep.notifyAll();
    }
  }

  /** Loads the newest manifest when it is not the one held; true when it loaded one. Never throws. */
  boolean refresh() {
    synchronized (loadLock) {
      try {
        Optional<ManifestInfo> newest = host.snapshots().newest();
        newestSeen = newest;
        newestSeenAt = Instant.now();
        Held h = held;
        if (h != null && java.util.Objects.equals(h.key(), newest.map(ManifestInfo::key).orElse(null))) {
          applyCatalog(h.session());
          lastError = null;
          return false;
        }
        load();
        lastError = null;
        return true;
      } catch (RuntimeException e) {
        lastError = e.getMessage();
        LOG.warn("Standby: cannot load the newest snapshot now (still serving {}): {}",
            held == null ? "nothing" : held.key(), e.toString());
        return false;
      }
    }
  }

  private void load() {
    long t0 = System.nanoTime();
    Node.Pair pair = host.freshPair();
    Recovery.Loaded loaded;
    try {
      try {
        loaded = host.recovery(pair, null).load(false);
      } catch (Recovery.FellBackPastReplay again) {
        pair.close();
        pair = host.freshPair();
        loaded = host.recovery(pair, again).load(false);
      }
    } catch (RuntimeException e) {
      pair.close();
      throw e;
    }
    cache.retainOnly();
    pair.engine().holdSources(hot ? Engine.Hold.UNSHARED : Engine.Hold.ALL);
    applyCatalog(pair.session());
    readAhead(pair.engine());
    Optional<ManifestInfo> m = loaded.rec().found() ? Optional.of(loaded.rec().info()) : Optional.empty();
    Held h = new Held(loaded, pair.engine(), pair.session(), m, (System.nanoTime() - t0) / 1_000_000, Instant.now());
    Node.Pair old = host.install(h);
    held = h;
    loads++;
    BatchFileCache.Counts c = cache.counts();
    LOG.info("Standby: serving snapshot {} (tick {}, {} rows), loaded in {} ms; batch files so far: {} downloaded ({} bytes), {} reused",
        h.key(), pair.engine().lastClosedTick(), loaded.rowsLoaded(), h.loadMillis(), c.downloadedFiles(), c.downloadedBytes(),
        c.reusedFiles());
    if (old != null) {
      closer.schedule(old::close, host.statementTimeout().toMillis() + 1_000, java.util.concurrent.TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Applies the catalog entries that follow the held snapshot's position (DDL the owner ran after
   * it). The engine's driver computes a new view at its next tick — on a warm standby from the state
   * loaded, since every source is held — and a read of it waits until it has (as on the owner). A
   * hot standby reads a new shared source from its start; a new unshared source stays held, empty,
   * until the takeover.
   */
  private void applyCatalog(SqlSession session) {
    long before = session.position();
    long after = session.replayAll();
    if (after > before) {
      catalogEntriesApplied += after - before;
      LOG.info("Standby: applied catalog entries {} to {} (after the snapshot held)", before, after - 1);
    }
  }

  /**
   * Starts the engine's driver and waits until the sources not held have caught up, or until
   * {@link #stop}. Warm: every source is held, so the driver's ticks read nothing; they compute the
   * views created after the snapshot. Hot: the sources that allow shared reads are read on from the
   * snapshot's offsets, and the pair is served once they have caught up — so readers never go back
   * in time to the snapshot; after any closed tick the state is a consistent recovery point, and a
   * takeover catches up from there.
   */
  private void readAhead(Engine engine) {
    engine.start();
    while (!stopping && !closed && !engine.caughtUpExceptHeld()) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
  }

  /** Stops following (waits for a load in progress) and returns what is held (null if nothing loaded). */
  Held stop() {
    stopping = true;
    wake(); // a load in progress runs under loadLock, which this waits for next
    synchronized (loadLock) {
      return held;
    }
  }

  /** Stops following and closes what it held and the pairs waiting to be closed. */
  void close() {
    stopping = true;
    closed = true;
    wake();
    closer.shutdownNow();
  }

  Held held() {
    return held;
  }

  /** What status shows of a standby: the snapshot it serves, how far behind the newest it is, its loads. */
  Map<String, Object> status() {
    Map<String, Object> s = new LinkedHashMap<>();
    Held h = held;
    Optional<ManifestInfo> newest = newestSeen;
    s.put("mode", hot ? "hot" : "warm");
    if (h == null) {
      s.put("serving", "nothing yet: loading the newest snapshot");
    } else if (h.manifest().isEmpty()) {
      s.put("serving", "nothing: the store has no snapshot yet (views appear here once the owner commits one)");
    } else {
      ManifestInfo mi = h.manifest().get();
      s.put("snapshot", h.loaded().rec().manifest().snapshotId());
      s.put("snapshotTick", mi.tick());
      s.put("snapshotCommittedAt", mi.lastModified().toString());
      s.put("servingTick", h.engine().lastClosedTick());
      s.put("servingForMillis", Duration.between(h.loadedAt(), Instant.now()).toMillis());
      s.put("lagBehindSnapshotMillis", Math.max(0, Instant.now().toEpochMilli() - mi.lastModified().toEpochMilli()));
      Map<String, Object> offsets = new LinkedHashMap<>();
      h.loaded().rec().state().offsets().forEach((name, o) -> offsets.put(name, o.values()));
      s.put("sourcesAsOfSnapshot", offsets);
      if (!hot) {
        s.put("sourceLag", "not measured: a warm standby reads no source (its views are as of the snapshot it serves)");
      } else {
        Map<String, Object> read = new LinkedHashMap<>();
        java.util.List<String> heldNow = h.engine().heldSources();
        h.engine().sourceStatuses().forEach((name, st) -> {
          Map<String, Object> one = new LinkedHashMap<>();
          if (heldNow.contains(name)) {
            one.put("readAhead", false);
            one.put("why", "one reader only (the owner's): held at the snapshot's offsets, resumed at takeover");
          } else {
            one.put("readAhead", true);
            one.put("caughtUp", st.caughtUp());
            one.put("offsets", st.offsets().values());
            one.put("load", st.load());
          }
          read.put(name, one);
        });
        s.put("sources", read);
      }
    }
    newest.ifPresent(n -> {
      s.put("newestSnapshotTick", n.tick());
      s.put("newestSnapshotCommittedAt", n.lastModified().toString());
      s.put("behindNewestSnapshot", h == null || !n.key().equals(h.key()));
    });
    if (newestSeenAt != null) {
      s.put("storeCheckedAt", newestSeenAt.toString());
    }
    s.put("loads", loads);
    s.put("catalogEntriesAppliedAfterSnapshots", catalogEntriesApplied);
    if (h != null) {
      s.put("lastLoadMillis", h.loadMillis());
    }
    BatchFileCache.Counts c = cache.counts();
    s.put("batchFilesDownloaded", c.downloadedFiles());
    s.put("batchBytesDownloaded", c.downloadedBytes());
    s.put("batchFilesReused", c.reusedFiles());
    if (lastError != null) {
      s.put("lastError", lastError);
    }
    return s;
  }
}
