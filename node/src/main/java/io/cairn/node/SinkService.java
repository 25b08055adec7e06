package io.cairn.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkConnector;
import io.cairn.engine.sink.SinkTrack;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink service: on the node that owns the store, one thread per sink writes what its
 * engine-side {@link SinkTrack} holds pending to the sink's destination, exactly once.
 *
 * <p>Design:
 *
 * <ul>
 *   <li>Only the owner writes. A standby's engine keeps its tracks (they are part of the state it
 *       loads and of the snapshots the owner takes) but runs no sink; the service starts when a
 *       node has recovered or taken over, after its catch-up, so that the first commit of a
 *       recovered sink covers the whole catch-up at once (the destination never sees the view go
 *       back in time) and stops when the node closes or is fenced.
 *   <li>One loop per sink: open (fence older writers, read the progress), read back what the
 *       destination committed after the track's position and subtract it ({@link
 *       SinkTrack#reconcile}), then commit what is pending whenever a tick added to it — several
 *       ticks the destination was too slow for go out as one commit, labelled with the newest —
 *       and a progress-only commit at most once a {@link #PROGRESS_INTERVAL_MILLIS} when nothing
 *       changed, so a consumer can tell "no change" from "no news". Every error closes the client,
 *       backs off (0.2 s doubling to 10 s) and goes round again from open: a commit whose outcome
 *       is unknown is settled by the read-back, never by guessing. The engine never waits for a
 *       sink: its ticks only add to the track.
 *   <li>Errors no retry fixes (a key that is not unique, the destination's records gone past
 *       retention, the track's bound passed) make the sink FAILED, with the error in {@code SHOW
 *       SINKS} and status; the view keeps running.
 *   <li>A writer that was fenced by another producer of the same id first checks that this node
 *       still owns the store; if it does not, the service stops instead of fencing the new owner
 *       back.
 * </ul>
 */
final class SinkService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SinkService.class);
  static final long PROGRESS_INTERVAL_MILLIS = 1000;
  private static final long MAX_BACKOFF_MILLIS = 10_000;

  private final Engine engine;
  private final BooleanSupplier stillOwner;
  private final Map<String, Runner> runners = new ConcurrentHashMap<>();
  private final io.micrometer.core.instrument.MeterRegistry registry;
  private final Thread supervisor;
  private volatile boolean closed;

  /** The state of one sink's writer. */
  enum State {
    STARTING,
    RUNNING,
    RESTARTING,
    FAILED
  }

  /**
   * What status and metrics show of one sink.
   *
   * @param emittedThrough the last tick label committed (-1: none)
   * @param lagTicks engine ticks closed since the newest one committed
   * @param commitMillisP50 from the close of the oldest tick in a commit to the commit returning, median of the last 1000
   */
  record Status(String name, String from, String topic, State state, long emittedThrough, long lagTicks, long pendingRows,
      long transactions, long records, long failures, long readBackRecords, double commitMillisP50, double commitMillisP99, String error) {}

  SinkService(Engine engine, BooleanSupplier stillOwner, io.micrometer.core.instrument.MeterRegistry registry) {
    this.engine = engine;
    this.stillOwner = stillOwner;
    this.registry = registry;
    this.supervisor = new Thread(this::supervise, "cairn-sinks");
    this.supervisor.setDaemon(true);
  }

  void start() {
    supervisor.start();
  }

  private void supervise() {
    while (!closed) {
      for (SinkTrack t : engine.sinks()) {
        String key = t.definition().name() + "/" + t.definition().id();
        runners.computeIfAbsent(key, k -> {
          Runner r = new Runner(t);
          r.thread.start();
          gauges(t.definition().name(), r);
          return r;
        });
      }
      runners.values().removeIf(r -> r.done && r.track.dropped());
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Per-sink gauges: {@code cairn_sink_*{sink="name"}}. */
  private void gauges(String name, Runner r) {
    if (registry == null) {
      return;
    }
    java.util.function.Function<java.util.function.ToDoubleFunction<Status>, java.util.function.ToDoubleFunction<Runner>> of =
        f -> x -> f.applyAsDouble(x.status(engine.lastClosedTick()));
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_emitted_through_tick", r, of.apply(Status::emittedThrough)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_lag_ticks", r, of.apply(Status::lagTicks)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_pending_rows", r, of.apply(Status::pendingRows)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_transactions", r, of.apply(Status::transactions)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_records", r, of.apply(Status::records)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_failures", r, of.apply(Status::failures)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_running", r, of.apply(s -> s.state() == State.RUNNING ? 1 : 0)).tag("sink", name).register(registry);
    io.micrometer.core.instrument.Gauge.builder("cairn_sink_commit_seconds_p99", r, of.apply(s -> s.commitMillisP99() / 1000.0)).tag("sink", name).register(registry);
  }

  List<Status> statuses() {
    List<Status> out = new ArrayList<>();
    long tick = engine.lastClosedTick();
    for (SinkTrack t : engine.sinks()) {
      Runner r = runners.get(t.definition().name() + "/" + t.definition().id());
      out.add(r == null
          ? new Status(t.definition().name(), t.definition().from(), t.definition().options().get("topic"), State.STARTING, t.lastLabel(),
              0, t.pendingRows(), 0, 0, 0, 0, 0, 0, t.failure())
          : r.status(tick));
    }
    return out;
  }

  @Override
  public void close() {
    closed = true;
    supervisor.interrupt();
    for (Runner r : runners.values()) {
      r.stop();
    }
    for (Runner r : runners.values()) {
      try {
        r.thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
  }

  /** One sink's writer thread. */
  private final class Runner {
    final SinkTrack track;
    final Thread thread;
    volatile boolean stopped;
    volatile boolean done;
    volatile State state = State.STARTING;
    volatile String error;
    volatile long transactions;
    volatile long records;
    volatile long failures;
    volatile long readBackRecords;
    volatile long committedEngineTick = -1;
    private final long[] latencies = new long[1000];
    private int latencyCount;
    private Sink sink;

    Runner(SinkTrack track) {
      this.track = track;
      this.thread = new Thread(this::run, "cairn-sink-" + track.definition().name());
      this.thread.setDaemon(true);
    }

    void stop() {
      stopped = true;
      thread.interrupt();
    }

    Status status(long engineTick) {
      double p50;
      double p99;
      synchronized (latencies) {
        int n = Math.min(latencyCount, latencies.length);
        long[] c = Arrays.copyOf(latencies, n);
        Arrays.sort(c);
        p50 = n == 0 ? 0 : c[(int) Math.min(n - 1, Math.round(0.50 * (n - 1)))] / 1e6;
        p99 = n == 0 ? 0 : c[(int) Math.min(n - 1, Math.round(0.99 * (n - 1)))] / 1e6;
      }
      String failure = track.failure();
      State s = failure != null ? State.FAILED : state;
      long lag = committedEngineTick < 0 ? 0 : Math.max(0, engineTick - committedEngineTick);
      if (track.pendingRows() == 0 && s == State.RUNNING) {
        lag = 0;
      }
      return new Status(track.definition().name(), track.definition().from(), track.definition().options().get("topic"), s,
          track.lastLabel(), lag, track.pendingRows(), transactions, records, failures, readBackRecords, p50, p99,
          failure != null ? failure : error);
    }

    private void run() {
      long backoff = 200;
      long lastCommit = 0;
      while (!stopped && !closed && !track.dropped() && track.failure() == null) {
        try {
          if (sink == null) {
            SinkConnector c = engine.sinkConnector(track.definition().connector()).orElseThrow(() -> new IllegalArgumentException(
                "Cannot open sink '" + track.definition().name() + "': connector '" + track.definition().connector() + "' is not available"));
            sink = c.create(track.definition(), track.schema(), track.keyCols(), engine.secrets(), CrashPoints::hit);
            Sink.Progress p = sink.open();
            Sink.ReadBack back = sink.readBack(track.positions());
            readBackRecords += back.records();
            track.reconcile(back, p.tick());
            LOG.info("Sink {}: open; the destination's progress is tick {}; read back {} records committed after the known position; {} rows pending",
                track.definition().name(), p.tick(), back.records(), track.pendingRows());
            state = State.RUNNING;
            error = null;
            backoff = 200;
          }
          SinkTrack.Batch b = track.batch();
          long label = track.nextLabel();
          boolean progressDue = label > track.lastLabel() && System.currentTimeMillis() - lastCommit >= PROGRESS_INTERVAL_MILLIS;
          if (b.size() > 0 || progressDue) {
            Map<String, String> to = sink.commit(label, b);
            long now = System.nanoTime();
            track.committed(b, label, to);
            committedEngineTick = b.engineTick();
            transactions++;
            records += b.size();
            lastCommit = System.currentTimeMillis();
            if (b.size() > 0 && b.pendingSinceNanos() > 0) {
              synchronized (latencies) {
                latencies[latencyCount++ % latencies.length] = now - b.pendingSinceNanos();
              }
            }
          } else {
            track.awaitTick(b.engineTick(), Math.max(10, PROGRESS_INTERVAL_MILLIS - (System.currentTimeMillis() - lastCommit)));
          }
        } catch (InterruptedException e) {
          break;
        } catch (RuntimeException e) {
          if (stopped || closed) {
            break;
          }
          failures++;
          closeSink();
          if (e instanceof IllegalArgumentException) {
            error = e.getMessage();
            state = State.FAILED;
            LOG.error("Sink {} FAILED: {}", track.definition().name(), e.getMessage());
            break;
          }
          error = e.toString();
          state = State.RESTARTING;
          LOG.warn("Sink {}: {} — restarting in {} ms (what it had in flight is settled by reading the destination back)",
              track.definition().name(), e.toString(), backoff);
          if (isFenced(e) && !stillOwner.getAsBoolean()) {
            LOG.warn("Sink {}: fenced by a newer writer and this node no longer owns the store: stopping", track.definition().name());
            break;
          }
          try {
            Thread.sleep(backoff);
          } catch (InterruptedException ie) {
            break;
          }
          backoff = Math.min(MAX_BACKOFF_MILLIS, backoff * 2);
        }
      }
      closeSink();
      done = true;
    }

    private boolean isFenced(Throwable e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t.getClass().getSimpleName().contains("Fenced")) {
          return true;
        }
      }
      return false;
    }

    private void closeSink() {
      if (sink != null) {
        sink.close();
        sink = null;
      }
    }
  }

  /** The statuses as a JSON-ready map (for {@code /status}). */
  static Map<String, Object> json(Status s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("from", s.from());
    m.put("topic", s.topic());
    m.put("state", s.state().name());
    m.put("emittedThrough", s.emittedThrough());
    m.put("lagTicks", s.lagTicks());
    m.put("pendingRows", s.pendingRows());
    m.put("transactions", s.transactions());
    m.put("records", s.records());
    m.put("failures", s.failures());
    m.put("readBackRecords", s.readBackRecords());
    m.put("commitMillisP50", s.commitMillisP50());
    m.put("commitMillisP99", s.commitMillisP99());
    m.put("error", s.error());
    return m;
  }
}
