package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceException;
import io.cairn.engine.source.SourceOffsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Source ingest: the part of a tick that talks to the sources' clients.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>One owner. Every method except {@link #statuses()} and {@link #closeLater} runs on the
 *       thread holding the engine's tick lock, the only thread that uses a source's client: seeks,
 *       restarts, polls, caught-up checks, rate limits and snapshot acknowledgements.
 *   <li>Per tick: {@link #prepare} (outside the engine lock: seek what is not sought, restart what
 *       is due, hand on rate limits and committed offsets), {@link #poll} (under it: read records
 *       into the open tick within the {@link TickPolicy}), {@link #recordOffsets} (under it, after
 *       the seal: {@code offsets(T)}, the positions taken when the tick's reading ended, which
 *       is where every source's state is), {@link #prefetch} (under it, while a full tick
 *       computes on another thread: the next tick's records into each source's {@link
 *       Prefetch}, which {@link #poll} hands on first), {@link #publish}
 *       (outside it again: caught-up, load meters and status values for everyone else).
 *   <li>A client that throws loses what it offered in the open tick and keeps its recorded
 *       offsets; it restarts after a backoff ({@link RestartStrategy}) or fails for good when the
 *       error is not retriable. An {@linkplain SourceException#atRecord() at-record} error thrown
 *       by a poll keeps what was offered before it: the tick takes those records and the client's
 *       position (exactly before the failing record) as {@code offsets(T)}; met while reading
 *       ahead, the records read wait in the {@link Prefetch} and the next tick takes them, then the
 *       error. Retriable, it restarts the source once; the same error at the same position again
 *       fails it for good, so no record restarts its source forever.
 *   <li>Log levels: a restart the engine does by itself is one WARN line (what failed, what happens
 *       next) without a stack trace (DEBUG has it); FAILED, which needs a person, is ERROR.
 * </ul>
 */
final class SourceIngest {
  private static final Logger LOG = LoggerFactory.getLogger(SourceIngest.class);

  private final TickPolicy policy;
  private final Secrets secrets;
  private final RestartStrategy restarts;
  private final Clock clock;
  private final java.util.Random jitter = new java.util.Random();
  private final List<Source> toClose = new ArrayList<>(); // dropped while a tick ran; closed by the ticking thread
  private volatile Map<String, SourceStatus> statuses = Map.of();
  private volatile boolean lastTickIdle;
  private boolean backlog;
  /** Set when the engine stops (any thread): a source error from then on is the wake-up's doing. */
  volatile boolean stopping;
  private long prefetched;

  /** How long a read-ahead round waits per source for records when the last round found none. */
  static final Duration READ_AHEAD_WAIT = Duration.ofMillis(2);

  SourceIngest(TickPolicy policy, Secrets secrets, RestartStrategy restarts, Clock clock) {
    this.policy = policy;
    this.secrets = secrets;
    this.restarts = restarts;
    this.clock = clock;
  }

  /** Every source's status as published after the last tick, in catalog order; any thread. */
  Map<String, SourceStatus> statuses() {
    return statuses;
  }

  /** Forgets every status (the engine closed). */
  void clearStatuses() {
    statuses = Map.of();
  }

  /** Whether no source could be read in the last tick (the driver then pauses). */
  boolean lastTickIdle() {
    return lastTickIdle;
  }

  /** Closes a dropped source's client at the end of the running tick (any thread). */
  void closeLater(Source source) {
    synchronized (toClose) {
      toClose.add(source);
    }
  }

  /**
   * {@code offsets(T)} of the tick just sealed: each polling source's position, the others'
   * recorded offsets (their state is still at them).
   */
  Map<String, SourceOffsets> recordOffsets(java.util.Collection<RunningSource> sources) {
    Map<String, SourceOffsets> offsets = new TreeMap<>();
    for (RunningSource s : sources) {
      if (s.tickPosition != null) {
        s.recorded = s.tickPosition;
        s.tickPosition = null;
      }
      offsets.put(s.name, s.recorded);
    }
    return offsets;
  }

  /** Whether the last {@link #poll} stopped with records still coming (a full tick): worth reading ahead. */
  boolean backlog() {
    return backlog;
  }

  /**
   * Reads ahead for the next tick while the open one computes on other threads: polls every
   * source that took part in this tick into its {@link Prefetch} until {@code computing} turns
   * false or the next tick's record budget is read. A round that finds nothing ready does not end
   * the reading: the next round waits up to {@link #READ_AHEAD_WAIT} per source (a Kafka client
   * returns nothing while its next fetch is in flight), so records that arrive while the tick
   * computes are read then, not after it. Positions were taken when this tick's reading ended ({@link #poll}), so {@code
   * offsets(T)} stay those of the records in tick T. A client that throws here loses what it read
   * ahead and restarts from those offsets; the records of tick T are not touched.
   */
  void prefetch(java.util.Collection<RunningSource> sources, java.util.function.BooleanSupplier computing) {
    List<RunningSource> active = new ArrayList<>();
    for (RunningSource s : sources) {
      if (s.polling() && s.tickPosition != null) {
        active.add(s);
      }
    }
    long total = 0;
    Duration wait = Duration.ZERO;
    while (computing.getAsBoolean() && total < policy.maxRecords()) {
      long round = 0;
      int polled = 0;
      for (RunningSource s : active) {
        if (!s.polling()) {
          continue;
        }
        polled++;
        int want = (int) Math.min(Integer.MAX_VALUE, policy.maxRecords() - total);
        try {
          int n = s.source.poll(s.prefetch, want, wait);
          round += n;
          total += n;
        } catch (RuntimeException e) {
          if (SourceException.isAtRecord(e) && !stopping) {
            s.pendingError = e; // what was read before the record stands: the next tick takes it, then the error
          } else {
            onSourceError(s, "poll (read ahead)", e, false);
          }
        }
        if (total >= policy.maxRecords()) {
          break;
        }
      }
      if (polled == 0) {
        break; // every source failed while reading ahead
      }
      wait = round == 0 ? READ_AHEAD_WAIT : Duration.ZERO;
    }
    prefetched += total;
  }

  /** Records read ahead so far (all ticks). */
  long prefetched() {
    return prefetched;
  }

  void prepare(List<RunningSource> all) {
    long now = System.nanoTime();
    for (RunningSource s : all) {
      if (s.dropped || s.held || s.dataflow.state() != Dataflow.State.RUNNING) {
        continue;
      }
      if (s.state == SourceStatus.State.RESTARTING && now - s.nextAttemptNanos >= 0) {
        restart(s);
      } else if (s.state == SourceStatus.State.RUNNING && !s.seeked) {
        try {
          s.source.seek(s.recorded);
          s.seeked = true;
          s.runningSinceNanos = System.nanoTime();
        } catch (RuntimeException e) {
          onSourceError(s, "seek", e);
        }
      }
      if (s.state != SourceStatus.State.RUNNING || !s.seeked) {
        continue;
      }
      try {
        double rate = s.rateLimit;
        if (rate != s.appliedRateLimit) {
          s.source.setReadRateLimit(rate);
          s.appliedRateLimit = rate;
        }
        SourceOffsets c = s.committed;
        if (c != null && !c.equals(s.acknowledged)) {
          s.acknowledged = c;
          s.source.onSnapshotCommitted(c);
        }
      } catch (RuntimeException e) {
        LOG.warn("Source {} could not take a rate limit or acknowledge committed offsets: {}", s.name, e.getMessage());
      }
    }
  }

  private void restart(RunningSource s) {
    closeQuietly(s);
    LOG.info("Restarting source {} from {} (attempt {})", s.name, s.recorded.values(), s.attempts);
    Source fresh;
    try {
      fresh = s.connector.open(s.definition, secrets);
    } catch (RuntimeException e) {
      onSourceError(s, "re-open", e);
      return;
    }
    s.source = fresh;
    s.open = true;
    s.seeked = false;
    s.prefetch.clear();
    s.appliedRateLimit = 0;
    s.acknowledged = null;
    if (s.dropped) {
      closeQuietly(s);
      return;
    }
    try {
      fresh.seek(s.recorded);
      s.seeked = true;
      s.state = SourceStatus.State.RUNNING;
      s.runningSinceNanos = System.nanoTime();
      LOG.info("Source {} restarted at {} after {} attempt(s)", s.name, s.recorded.values(), s.attempts);
    } catch (RuntimeException e) {
      onSourceError(s, "seek", e);
    }
  }

  /**
   * A poll into the open tick threw. An at-record error keeps what the source offered before the
   * failing record and takes the client's position as this tick's {@code offsets(T)}: the
   * position is exactly before that record, and both reach the views and the snapshot together at
   * the seal. Any other error drops what was offered ({@link #onSourceError}).
   */
  private void onPollError(RunningSource s, String during, RuntimeException e) {
    if (SourceException.isAtRecord(e) && !stopping) {
      SourceOffsets at;
      try {
        at = s.source.position();
      } catch (RuntimeException p) {
        onSourceError(s, during, e);
        return;
      }
      s.tickPosition = at;
      s.prefetch.clear();
      String key = String.valueOf(e.getMessage()) + " @ " + at.values();
      boolean again = key.equals(s.lastRecordError);
      s.lastRecordError = key;
      if (again && SourceException.isRetriable(e)) {
        fail(s, during, e, e.getMessage() + " (the same error at the same position twice: the source stops before this "
            + "record; fix or remove the record, or change the source's bad-record policy, then DROP and re-create the "
            + "source or restart the node)");
        return;
      }
      handleError(s, during, e);
      return;
    }
    onSourceError(s, during, e);
  }

  /**
   * A source's client threw: drop what it offered in the open tick (its state and recorded
   * offsets stay as of the last closed tick) and schedule a restart, or fail it for good.
   */
  private void onSourceError(RunningSource s, String during, RuntimeException e) {
    onSourceError(s, during, e, true);
  }

  /**
   * As above; {@code dropOffered} false while reading ahead, when the open tick's records are
   * being computed and must stay (only what was read ahead is dropped).
   */
  private void onSourceError(RunningSource s, String during, RuntimeException e, boolean dropOffered) {
    if (dropOffered) {
      s.op.clearOffered();
    }
    s.prefetch.clear();
    handleError(s, during, e);
  }

  /** Restarts or fails a source whose client threw; what it offered was kept or dropped before. */
  private void handleError(RunningSource s, String during, RuntimeException e) {
    s.seeked = false;
    s.caughtUp = false;
    long now = System.nanoTime();
    if (s.state == SourceStatus.State.RUNNING && now - s.runningSinceNanos > restarts.maxBackoff().toNanos()) {
      s.attempts = 0; // it had been running steadily: start the backoff over
    }
    String msg = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    if (stopping) {
      // the engine woke its sources up to stop: an ended call, not a failure worth a stack trace
      s.state = SourceStatus.State.RESTARTING;
      s.error = msg;
      LOG.info("Source {} stopped during {}: {}", s.name, during, msg);
      return;
    }
    int next = s.attempts + 1;
    if (SourceException.isRetriable(e) && restarts.allows(next)) {
      Duration wait = restarts.backoff(next, jitter.nextDouble());
      s.attempts = next;
      s.state = SourceStatus.State.RESTARTING;
      s.error = msg;
      s.nextAttemptNanos = now + wait.toNanos();
      SourceOffsets from = s.tickPosition != null ? s.tickPosition : s.recorded;
      // handled here, by a restart: one WARN line; the stack trace only at DEBUG
      LOG.warn("Source {} failed during {}: {}; restarting it from {} in {} ms (attempt {}); its views keep serving",
          s.name, during, msg, from.values(), wait.toMillis(), next);
      LOG.debug("Source {} failure during {}", s.name, during, e);
    } else {
      fail(s, during, e, SourceException.isRetriable(e)
          ? msg + " (gave up after " + s.attempts + " restart attempts; DROP and re-create the source, or restart the node)"
          : msg);
    }
  }

  /** Fails a source for good: it needs a person. */
  private void fail(RunningSource s, String during, RuntimeException e, String reason) {
    s.seeked = false;
    s.caughtUp = false;
    s.state = SourceStatus.State.FAILED;
    s.error = reason;
    SourceOffsets at = s.tickPosition != null ? s.tickPosition : s.recorded;
    LOG.error("Source {} FAILED during {}: {}. Its views keep serving their state as of offsets {}; snapshots keep "
        + "that state and those offsets", s.name, during, reason, at.values(), e);
  }

  void publish(List<RunningSource> all) {
    Map<String, SourceStatus> out = new LinkedHashMap<>();
    for (RunningSource s : all) {
      if (s.dropped) {
        continue;
      }
      if (s.polling()) {
        try {
          s.caughtUp = s.source.caughtUp() && s.prefetch.isEmpty();
        } catch (RuntimeException e) {
          onSourceError(s, "caught-up check", e);
        }
      }
      if (s.state != SourceStatus.State.RUNNING && s.open) {
        closeQuietly(s); // a failed client is released now; a restart opens a new one
      }
      try {
        s.load = s.source.meter().read();
      } catch (RuntimeException e) {
        LOG.debug("Reading the load meter of source {} failed: {}", s.name, e.getMessage());
      }
      java.time.Instant next = s.state == SourceStatus.State.RESTARTING
          ? clock.instant().plusNanos(Math.max(0, s.nextAttemptNanos - System.nanoTime())) : null;
      SourceStatus.State state = s.dataflow.state() == Dataflow.State.FAILED ? SourceStatus.State.FAILED : s.state;
      String error = s.dataflow.state() == Dataflow.State.FAILED ? s.dataflow.error() : s.error;
      out.put(s.name, new SourceStatus(s.name, state, s.caughtUp && state == SourceStatus.State.RUNNING, s.recorded, s.load,
          error, s.attempts, next));
    }
    statuses = java.util.Collections.unmodifiableMap(out);
  }

  void closeQuietly(RunningSource s) {
    if (!s.open) {
      return;
    }
    s.open = false;
    try {
      s.source.close();
    } catch (RuntimeException e) {
      LOG.warn("Closing source {} failed: {}", s.name, e.getMessage());
    }
  }

  void closeDropped() {
    List<Source> close;
    synchronized (toClose) {
      close = new ArrayList<>(toClose);
      toClose.clear();
    }
    for (Source src : close) {
      try {
        src.close();
      } catch (RuntimeException e) {
        LOG.warn("Closing a dropped source failed: {}", e.getMessage());
      }
    }
  }

  /**
   * Reads the sources into the open tick until the {@link TickPolicy} closes it, or earlier when a
   * round found nothing and every source is caught up — after some records always, and after none
   * only when {@code catchingUp} (a recovery waits for nothing; an idle node's ticks keep their pace).
   */
  long poll(java.util.Collection<RunningSource> sources, boolean catchingUp) {
    List<RunningSource> active = new ArrayList<>();
    long total = 0;
    for (RunningSource s : sources) {
      if (s.pendingError != null) {
        // read ahead up to a failing record: the records before it open this tick, then the error applies
        RuntimeException e = s.pendingError;
        s.pendingError = null;
        if (s.state == SourceStatus.State.RUNNING && s.seeked && !s.dropped && s.dataflow.state() == Dataflow.State.RUNNING) {
          total += s.prefetch.records();
          s.prefetch.drainTo(s);
          onPollError(s, "poll (read ahead)", e);
        } else {
          s.prefetch.clear();
        }
      } else if (s.polling()) {
        active.add(s);
      } else {
        s.prefetch.clear(); // restarted, failed or dropped since it read ahead: it reads again from its offsets
      }
    }
    lastTickIdle = active.isEmpty() && total == 0;
    backlog = false;
    if (active.isEmpty()) {
      return total;
    }
    for (RunningSource s : active) {
      total += s.prefetch.records();
      s.prefetch.drainTo(s); // read ahead while the last tick computed: first in this one
    }
    try {
      total = pollRounds(active, total, catchingUp);
    } finally {
      for (RunningSource s : active) {
        if (s.polling()) {
          s.tickPosition = s.source.position(); // offsets(T): taken before anything is read ahead
        }
      }
    }
    return total;
  }

  private long pollRounds(List<RunningSource> active, long total, boolean catchingUp) {
    long deadline = System.nanoTime() + policy.maxDuration().toNanos();
    boolean lastRoundEmpty = false;
    while (total < policy.maxRecords()) {
      long round = 0;
      for (RunningSource s : active) {
        if (!s.polling()) {
          continue;
        }
        long remaining = Math.max(0, deadline - System.nanoTime());
        // wait for records only when the previous round found none (never spin on empty sources)
        Duration wait =
            lastRoundEmpty ? Duration.ofNanos(Math.min(remaining, Duration.ofMillis(20).toNanos()) / active.size()) : Duration.ZERO;
        int want = (int) Math.min(Integer.MAX_VALUE, policy.maxRecords() - total);
        try {
          int n = s.source.poll(s, want, wait);
          round += n;
          total += n;
        } catch (RuntimeException e) {
          onPollError(s, "poll", e);
        }
        if (total >= policy.maxRecords()) {
          break;
        }
      }
      lastRoundEmpty = round == 0;
      if (System.nanoTime() >= deadline) {
        backlog = !lastRoundEmpty;
        break;
      }
      if (lastRoundEmpty && (total > 0 || catchingUp) && allCaughtUp(active)) {
        break; // the sources have nothing more: close the tick now rather than wait out maxDuration
      }
    }
    if (total >= policy.maxRecords()) {
      backlog = true;
    }
    return total;
  }

  private boolean allCaughtUp(List<RunningSource> active) {
    for (RunningSource s : active) {
      try {
        if (s.polling() && !s.source.caughtUp()) {
          return false;
        }
      } catch (RuntimeException e) {
        return false; // reported by the status published after the tick
      }
    }
    return true;
  }
}
