package io.cairn.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.source.RetentionLimits;
import io.cairn.engine.source.RetentionProbe;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.node.advise.AdviceReport;
import io.cairn.node.advise.Advisor;
import io.cairn.node.config.CairnConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Gathers what {@link Advisor} needs from a serving node and asks the sources' systems for their
 * retention settings.
 *
 * <p>Where each input comes from, measured first, assumed (and said so) otherwise:
 *
 * <ul>
 *   <li>ingest rates: {@link IngestRates}, over the window the node has served (at least {@link
 *       #MIN_INGEST_WINDOW});
 *   <li>replay rate: the last recovery's catch-up, all its sources' records over its time (one
 *       thread reads them all, so the aggregate is the cost per record of that mix), for the
 *       sources that took part in it with at least {@link #MIN_REPLAY_SAMPLE} records in all;
 *       otherwise the connector's {@link SourceConnector#typicalReplayRate()}, else {@link
 *       #ASSUMED_REPLAY_RATE}; capped by {@code recovery.catch-up-rate-limit};
 *   <li>state: the last snapshot this node took (rows, bytes), else the one it recovered from;
 *   <li>load rate: the last recovery's rows over its load time, with at least {@link
 *       #MIN_LOAD_SAMPLE} rows, else {@link #ASSUMED_LOAD_RATE};
 *   <li>fixed costs: the last recovery's phases, else {@link #ASSUMED_FIXED} before and after the
 *       load;
 *   <li>snapshot duration: the last snapshot's capture pause plus upload, else the state at
 *       {@link #ASSUMED_WRITE_RATE}, at least a second.
 * </ul>
 *
 * Probes run in parallel on threads of their own, each bounded by {@link #PROBE_TIMEOUT}; a source
 * that does not answer in time is a warning, never an error of the request.
 */
final class AdviseService {
  static final Duration MIN_INGEST_WINDOW = Duration.ofSeconds(5);
  static final long MIN_REPLAY_SAMPLE = 10_000;
  static final long MIN_LOAD_SAMPLE = 10_000;
  /** A source whose connector names no typical rate: the slowest of the connectors' (Postgres). */
  static final double ASSUMED_REPLAY_RATE = 10_000;
  /** A snapshot load from S3 measured 1.17M rows/s (RESULTS.md, download + verify + decode), rounded down. */
  static final double ASSUMED_LOAD_RATE = 1_000_000;
  /** A snapshot write to S3 measured 1.02M rows/s at its slowest (RESULTS.md), rounded down. */
  static final double ASSUMED_WRITE_RATE = 1_000_000;
  /** A cold restart's catalog and connect, and its seek, each 280–1,068 ms (RESULTS.md), rounded up. */
  static final Duration ASSUMED_FIXED = Duration.ofSeconds(1);
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(3);

  private AdviseService() {}

  /** What the node knows, read from published values only. */
  record Facts(Engine engine, CairnConfig config, RecoveryReport report, Optional<SnapshotOutcome> lastSnapshot,
      Map<String, Advisor.Ingest> ingest, List<Duration> currentGaps, io.cairn.engine.source.Secrets secrets) {}

  static AdviceReport advise(Duration target, Facts f) {
    List<String> assumptions = new ArrayList<>();
    Advisor.Inputs in = inputs(target, f, assumptions);
    Advisor.Advice advice = Advisor.advise(in);
    Duration checked = advice.feasible() ? advice.recommended().interval() : in.current().longestGap();
    List<String> warnings = new ArrayList<>();
    if (!advice.feasible()) {
      warnings.add("no schedule meets the target: the retention below is checked for the current schedule");
    }
    List<Advisor.RetentionCheck> checks = new ArrayList<>();
    Map<String, Advisor.SourceRates> rates = new LinkedHashMap<>();
    in.sources().forEach(s -> rates.put(s.name(), s));
    for (Map.Entry<String, Probed> e : probeAll(f).entrySet()) {
      Probed p = e.getValue();
      if (p.error() != null) {
        warnings.add("source '" + e.getKey() + "': its retention could not be checked: " + p.error());
        continue;
      }
      Advisor.RetentionCheck c = Advisor.retention(in, rates.get(e.getKey()), p.limits(), checked);
      checks.add(c);
      warnings.addAll(c.warnings());
    }
    assumptions.add("a recovery is timed from the process's start: the start itself (about a second for a JVM; `cairn "
        + "class-cache` shortens it) and, in a group, the time to notice a dead owner (group.session-timeout) come on top");
    return new AdviceReport(advice, checked, checks, warnings, assumptions);
  }

  static Advisor.Inputs inputs(Duration target, Facts f, List<String> assumptions) {
    Engine engine = f.engine();
    RecoveryReport r = f.report();
    // replay: the last catch-up's records over its time
    long replayed = 0;
    Map<String, Long> bySource = new LinkedHashMap<>();
    if (r != null) {
      for (RecoveryReport.SourceReport s : r.sources()) {
        replayed += s.recordsReplayed();
        bySource.put(s.name(), s.recordsReplayed());
      }
    }
    double measuredReplay = r != null && replayed >= MIN_REPLAY_SAMPLE && r.catchUpMillis() > 0
        ? replayed / (r.catchUpMillis() / 1000.0) : -1;
    List<Advisor.SourceRates> sources = new ArrayList<>();
    Duration shortest = null;
    for (String name : engine.sourceNames()) {
      Advisor.Ingest rate = f.ingest().getOrDefault(name, new Advisor.Ingest(0, 0, Duration.ZERO));
      shortest = shortest == null || rate.window().compareTo(shortest) < 0 ? rate.window() : shortest;
      double replay;
      String basis;
      long mine = bySource.getOrDefault(name, 0L);
      if (measuredReplay > 0 && mine > 0 && mine * 100 >= replayed) {
        replay = measuredReplay;
        basis = String.format(Locale.ROOT, "measured at the last recovery: %,d records of all sources in %,d ms of catch-up",
            replayed, r.catchUpMillis());
      } else {
        Optional<SourceConnector> c = engine.sourceDefinition(name).flatMap(d -> engine.connector(d.connector()));
        java.util.OptionalDouble typical = c.map(SourceConnector::typicalReplayRate).orElse(java.util.OptionalDouble.empty());
        replay = typical.orElse(ASSUMED_REPLAY_RATE);
        basis = "assumed: " + (typical.isPresent() ? "typical for " + c.get().name() : "no figure for its connector")
            + (r == null ? "; no recovery yet" : "; the last recovery replayed " + String.format(Locale.ROOT, "%,d", mine)
                + " of its records, too few to measure");
        assumptions.add(String.format(Locale.ROOT, "source '%s' replays %,.0f records/s: %s", name, replay, basis.substring(9)));
      }
      double cap = f.config().catchUpRateLimit();
      if (cap > 0 && replay > cap) {
        replay = cap;
        basis += String.format(Locale.ROOT, "; capped by recovery.catch-up-rate-limit %,.0f/s", cap);
      }
      sources.add(new Advisor.SourceRates(name, rate.recordsPerSecond(), rate.bytesPerSecond(), rate.window(), replay, basis));
    }
    if (shortest != null && shortest.compareTo(MIN_INGEST_WINDOW) < 0) {
      throw new NodeUnavailableException(NodeUnavailableException.Reason.NOT_READY, "Cannot advise yet: ingest rates are "
          + "measured while the node serves, over at least " + MIN_INGEST_WINDOW.toSeconds() + " s (" + shortest.toMillis()
          + " ms so far); ask again in a few seconds");
    }
    // state and load
    long rows;
    long bytes;
    Optional<SnapshotOutcome> last = f.lastSnapshot();
    if (last.isPresent()) {
      rows = last.get().rows();
      bytes = last.get().bytesTotal();
    } else if (r != null && !r.fullReplay()) {
      rows = r.rowsLoaded();
      bytes = r.bytesLoaded();
    } else {
      rows = 0;
      bytes = 0;
      assumptions.add("no snapshot yet: the state loaded at recovery is taken as empty; ask again after `cairn snapshot`");
    }
    double loadRate;
    String loadBasis;
    if (r != null && r.rowsLoaded() >= MIN_LOAD_SAMPLE && r.loadMillis() > 0) {
      loadRate = r.rowsLoaded() / (r.loadMillis() / 1000.0);
      loadBasis = String.format(Locale.ROOT, "measured at the last recovery: %,d rows in %,d ms (list, download, verify, decode)",
          r.rowsLoaded(), r.loadMillis());
    } else {
      loadRate = ASSUMED_LOAD_RATE;
      loadBasis = "assumed: a load from S3 measured 1.17M rows/s (benchmarks/RESULTS.md), rounded down";
      assumptions.add(String.format(Locale.ROOT, "the snapshot loads at %,.0f rows/s: %s", loadRate, loadBasis.substring(9)));
    }
    // fixed costs
    Advisor.Basis before;
    Advisor.Basis after;
    Map<String, Long> ph = r == null ? Map.of() : r.phaseMillis();
    if (ph.containsKey("seek")) {
      long b = ph.getOrDefault("catalog to snapshot", 0L) + ph.getOrDefault("connect sources", 0L);
      long a = ph.getOrDefault("restore", 0L) + ph.getOrDefault("catalog after snapshot", 0L) + ph.get("seek")
          + ph.getOrDefault("report", 0L);
      before = new Advisor.Basis(Duration.ofMillis(b), "measured at the last recovery: catalog to snapshot and connect sources");
      after = new Advisor.Basis(Duration.ofMillis(a), "measured at the last recovery: restore, catalog after snapshot, seek, report");
    } else {
      before = new Advisor.Basis(ASSUMED_FIXED, "assumed: a cold restart's catalog and connect (benchmarks/RESULTS.md)");
      after = new Advisor.Basis(ASSUMED_FIXED, "assumed: a cold restart's seek and the rest (benchmarks/RESULTS.md)");
      assumptions.add("the fixed recovery costs are " + Advisor.human(ASSUMED_FIXED) + " beside the load and "
          + Advisor.human(ASSUMED_FIXED) + " after it (no recovery report with phases on this node)");
    }
    Advisor.Basis snap;
    if (last.isPresent()) {
      snap = new Advisor.Basis(Duration.ofMillis(last.get().uploadMillis() + last.get().capturePauseMicros() / 1000),
          "measured: the last snapshot's capture and upload");
    } else {
      Duration d = Duration.ofMillis(Math.max(1000, Math.round(rows / ASSUMED_WRITE_RATE * 1000)));
      snap = new Advisor.Basis(d, String.format(Locale.ROOT, "assumed: %,d rows at %,.0f rows/s, at least 1 s", rows,
          ASSUMED_WRITE_RATE));
      assumptions.add("a snapshot takes " + Advisor.human(d) + ": " + snap.basis().substring(9) + " (this node has not taken one)");
    }
    List<Duration> gaps = f.currentGaps();
    Advisor.Cadence current = gaps.isEmpty() ? Advisor.Cadence.every(Duration.ofDays(366)) : Advisor.Cadence.of(gaps);
    if (gaps.isEmpty()) {
      assumptions.add("the current schedule fires less than twice in the next 8 days: taken as once a year");
    }
    return new Advisor.Inputs(target, sources, rows, bytes, loadRate, loadBasis, before, after, snap, current,
        f.config().snapshotCron(), f.config().keepLast());
  }

  /** A probe's outcome: limits, or why there are none. */
  record Probed(RetentionLimits limits, String error) {}

  /** Every source's retention probe, in parallel, each bounded; sources without a probe are left out. */
  static Map<String, Probed> probeAll(Facts f) {
    Map<String, Future<RetentionLimits>> running = new LinkedHashMap<>();
    Map<String, Probed> out = new LinkedHashMap<>();
    ExecutorService pool = Executors.newCachedThreadPool(run -> {
      Thread t = new Thread(run, "cairn-advise-probe");
      t.setDaemon(true);
      return t;
    });
    try {
      for (String name : f.engine().sourceNames()) {
        Optional<SourceDefinition> def = f.engine().sourceDefinition(name);
        Optional<RetentionProbe> probe = def.flatMap(d -> f.engine().connector(d.connector())).flatMap(SourceConnector::retentionProbe);
        if (probe.isPresent()) {
          running.put(name, pool.submit(() -> probe.get().probe(def.get(), f.secrets(), PROBE_TIMEOUT)));
        }
      }
      long deadline = System.nanoTime() + PROBE_TIMEOUT.plusSeconds(1).toNanos();
      for (Map.Entry<String, Future<RetentionLimits>> e : running.entrySet()) {
        try {
          out.put(e.getKey(), new Probed(e.getValue().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS), null));
        } catch (java.util.concurrent.TimeoutException t) {
          e.getValue().cancel(true);
          out.put(e.getKey(), new Probed(null, "no answer within " + PROBE_TIMEOUT.plusSeconds(1).toSeconds() + " s"));
        } catch (java.util.concurrent.ExecutionException x) {
          Throwable c = x.getCause();
          out.put(e.getKey(), new Probed(null, c.getMessage() == null ? c.toString() : c.getMessage()));
        } catch (InterruptedException i) {
          Thread.currentThread().interrupt();
          out.put(e.getKey(), new Probed(null, "interrupted"));
        }
      }
    } finally {
      pool.shutdownNow();
    }
    return out;
  }
}
