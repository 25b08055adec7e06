package io.cairn.benchmarks.loadonsource;

import io.cairn.benchmarks.peer.CustomerAggregate;
import io.cairn.benchmarks.peer.KafkaStreamsPeer;
import io.cairn.benchmarks.peer.PeerConfig;
import io.cairn.benchmarks.peer.PeerResult;
import io.cairn.benchmarks.peer.RestoreMeasurement;
import io.cairn.benchmarks.peer.ThroughputMeasurement;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.objectstore.MeteredObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectStores;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.Node;
import io.cairn.node.RecoveryReport;
import io.cairn.node.advise.AdviceReport;
import io.cairn.node.advise.Advisor;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.snapshotter.catalog.ObjectStoreCatalogLog;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The load-on-source benchmark (issue 8): how much a cairn recovery costs the sources and the
 * object store, per recovery strategy, all measured in one run on the same data.
 *
 * <p>Run it with {@code cairn bench load-on-source} (options in {@code BenchCommand}; the report
 * goes to {@code report.md}, {@code report.html}, {@code results.json} and {@code results.csv} via
 * {@link ReportWriter}), or at full size from Maven: {@code mvn -pl benchmarks -am verify
 * -Pbench-full -Dtest=LoadOnSourceBenchmarkTest -Dsurefire.failIfNoSpecifiedTests=false} (report in
 * {@code target/bench-report}). The test suite runs a tiny size.
 *
 * <p>Phases, in the order {@link #run()} runs them:
 *
 * <ol>
 *   <li>Servers. A Kafka broker (in a child JVM, as in production; in this JVM for the test suite's
 *       tiny run) and a private PostgreSQL 15 server start on 127.0.0.1.
 *   <li>History. An ingest node (a real {@link Node} on a local object store) reads the topic of
 *       orders and the table of customers (Debezium CDC) into two views: orders per customer, and
 *       orders per customer region (a join with the table). The history ({@link
 *       LoadOnSourceConfig}) is produced hour by simulated hour; after each hour the node ingests
 *       it completely. At chosen hour boundaries the engine's state is captured between two ticks
 *       and written as a snapshot into a store of its own (one directory per strategy, with a copy
 *       of the catalog objects {@code catalog/*.json}), so that {@link Node#recover} on that store
 *       starts from exactly that snapshot.
 *   <li>Crash. The ingest node is closed without a final snapshot.
 *   <li>Recoveries. Each strategy's store is recovered with {@link Node#recover} (the store wrapped
 *       in a {@link MeteredObjectStore}), {@code repeats} times, one after the other, the full
 *       replay last (its initial load drops and re-creates the slot). Every recovery's views are
 *       compared with the naive oracle of {@link Workload}.
 *   <li>Standbys (unless {@code --no-standby}), right after the daily strategy's recovery (their
 *       results listed after the snapshot strategies'): on a copy of the daily snapshot's store, taken before any recovery wrote into it,
 *       an owner and a standby form a group on the benchmark's broker (both {@link Node}s in this
 *       JVM; the standby's {@link Node#recover} blocks while it stands by, so it runs on a thread
 *       of its own and is watched through its HTTP {@code /status}); warm, then hot. Once the
 *       standby serves (hot: caught up on Kafka), the owner is closed — it leaves the group at once
 *       — and the clock runs until the standby has taken over and its views equal the oracle.
 *       What the standby read standing by comes from its status, what it read taking over from its
 *       recovery report ({@link #standBy}).
 *   <li>Peer. On the same topic, a Kafka-only cairn node (orders per customer) ingests from the
 *       beginning (throughput), snapshots, restarts from the snapshot; Kafka Streams ({@link
 *       KafkaStreamsPeer}) processes the topic, is killed and restores from its changelogs.
 * </ol>
 *
 * <p>What it owns: the broker and the {@link PgSetup} (server, database, role {@value #PG_USER},
 * a workload connection the {@link Workload} writes through and a second one for the statistics
 * queries), both closed before {@link #run()} returns or throws; the work directory {@code
 * work-<8 hex>} under the output directory (the ingest store and one store per strategy), deleted
 * when the run succeeds and left for inspection when it fails; the notes that end in the report;
 * the broker's process handle, whose CPU {@link CpuSplit} reports apart.
 *
 * <p>Threading: one instance runs once, on the calling thread, and is not thread-safe. That thread
 * ticks the ingest and recovering nodes itself ({@code engine.tick()}), and captures between two
 * ticks ({@code Engine.betweenTicks}); Kafka Streams runs its stream threads inside {@link
 * KafkaStreamsPeer}.
 *
 * <p>Invariants:
 *
 * <ul>
 *   <li>Every strategy recovers from a store that holds exactly its one snapshot and a copy of the
 *       ingest node's catalog: no recovery sees another strategy's snapshot.
 *   <li>The ingest node never commits a snapshot to its sources ({@code
 *       Engine.onSnapshotCommitted} is not called), so the replication slot keeps every WAL byte
 *       since the slot was created: every strategy can resume, and the WAL retained at the crash is
 *       the cost side of that choice. Before each snapshot strategy's recovery the benchmark itself
 *       confirms the slot at that snapshot's commit LSN ({@code pg_replication_slot_advance}, never
 *       backwards), as the node's snapshot commit would have in production: strategies are
 *       recovered oldest snapshot first, the standbys (on the daily snapshot) right after the daily
 *       strategy, the full replay (a new slot) last.
 *   <li>A recovery's figures are its own: it starts only once the previous recovery's walsender
 *       has released the slot, the Postgres statistics are read as differences around it, and the
 *       sources' meters count from their opening by this recovery.
 *   <li>A recovery whose views do not yet equal the oracle when {@link Node#recover} returns keeps
 *       ticking (up to 60 s); that wait is counted in its time and written in a note. Of several
 *       runs the median by wall time is reported, unless one did not match: then that one, so a
 *       mismatch is never hidden.
 * </ul>
 *
 * <p>Failure: without the environment variable {@value #PASSWORD_ENV} the Postgres part refuses to
 * start; a history the ingest node has not read within {@code INGEST_TIMEOUT} (5 min) fails the
 * run; both with an {@link IllegalStateException} "Cannot ...". I/O errors are wrapped in {@link
 * UncheckedIOException}.
 *
 * <p>Postgres passwords reach a node only through {@code Secrets.environment()}: the Postgres part
 * needs the environment variable {@value #PASSWORD_ENV} (any value; the benchmark gives its
 * private server's role that password). {@code cairn bench load-on-source} sets it in a child JVM.
 *
 * <p>Where the parts are, in order: {@link #run()} and {@code runWith} (the phases); the node's
 * configuration and store URIs; ingesting ({@code ingestAll}) and snapshotting ({@code snapshot},
 * {@code copyCatalog}); recovering ({@code recoverRepeatedly}, {@code recover}, the oracle
 * comparison); the peer ({@code comparePeer}); helpers (the machine's description, sleeping,
 * deleting); {@link PgSetup}, the private Postgres server and its statistics queries.
 */
public final class LoadOnSourceBenchmark {
  private static final Logger LOG = LoggerFactory.getLogger(LoadOnSourceBenchmark.class);
  /** The environment variable holding the password of the benchmark's Postgres role. */
  public static final String PASSWORD_ENV = "CAIRN_BENCH_PG_PASSWORD";
  static final String PG_USER = "cairn_bench";
  private static final Duration INGEST_TIMEOUT = Duration.ofMinutes(5);

  private final LoadOnSourceConfig config;
  private final String command;
  private final List<String> notes = new ArrayList<>();

  public LoadOnSourceBenchmark(LoadOnSourceConfig config, String command) {
    this.config = config;
    this.command = command;
  }

  /** The broker's JVM when it runs in a child process (its CPU is then the {@code broker} figure); else null. */
  private ProcessHandle brokerProcess;

  /** Runs the whole benchmark; servers it starts are stopped before it returns or throws. */
  public LoadOnSourceResult run() {
    if (config.postgres() && System.getenv(PASSWORD_ENV) == null) {
      throw new IllegalStateException("Cannot run the Postgres part of the benchmark: environment variable " + PASSWORD_ENV
          + " is not set (a cairn node reads Postgres passwords from its environment; `cairn bench load-on-source`"
          + " sets it in a child JVM, the Maven build sets it for tests)");
    }
    long t0 = System.nanoTime();
    String startedAt = Instant.now().toString();
    Path work = config.outputDir().resolve("work-" + UUID.randomUUID().toString().substring(0, 8));
    try (KafkaBroker kafka = config.brokerInChildJvm() ? KafkaBroker.startInChildJvm() : KafkaBroker.start(); PgSetup pg = config.postgres() ? PgSetup.start() : null) {
      Files.createDirectories(work);
      LoadOnSourceResult r = runWith(kafka, pg, work, t0, startedAt);
      deleteRecursively(work);
      return r;
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot run the benchmark in " + work + ": " + e.getMessage(), e);
    }
  }

  /** Measured facts of one snapshot written during the history. */
  private record Snap(String name, int hour, double hoursBeforeCrash, Path dir, SnapshotResult result,
      MeteredObjectStore.Metrics writeMetrics, Map<String, String> kafkaOffsets, long walLsn, long pgChangesBefore,
      long pgConfirmLsn) {

    /** The same snapshot under another strategy's name, in a copy of its store at {@code copy}. */
    Snap as(String strategy, Path copy) {
      return new Snap(strategy, hour, hoursBeforeCrash, copy, result, writeMetrics, kafkaOffsets, walLsn, pgChangesBefore,
          pgConfirmLsn);
    }
  }

  private LoadOnSourceResult runWith(KafkaBroker kafka, PgSetup pg, Path work, long t0, String startedAt) throws IOException {
    brokerProcess = kafka.childProcess().orElse(null);
    String topic = KafkaBroker.uniqueTopic("bench-orders");
    Workload w = new Workload(config, kafka, topic, pg == null ? null : pg.workloadConnection);
    w.createInitial();
    Workload.PgAccess access = pg == null ? null
        : new Workload.PgAccess(pg.server.host(), pg.server.port(), pg.database, PG_USER, PASSWORD_ENV);
    List<String> sql = w.sql(kafka.bootstrapServers(), access);

    // ---- ingest the history, snapshotting at the chosen hour boundaries
    long i0 = System.nanoTime();
    Path ingestDir = work.resolve("ingest");
    List<Snap> snaps = new ArrayList<>();
    Map<Integer, Snap> advisedCandidates = new LinkedHashMap<>(); // by the schedule's interval in hours
    double crashAt = config.hours() + 0.5;
    Node ingest = Node.recover(nodeConfig(ingestDir, sql), Node.Options.defaults());
    try {
      ingestAll(ingest, w);
      for (int h = 0; h <= config.hours(); h++) {
        if (h > 0) {
          w.hour(1.0);
          ingestAll(ingest, w);
        }
        boolean curve = config.curveStepHours() < config.hours() && h % config.curveStepHours() == 0; // step = hours: no curve
        if (curve || h == config.hours() || h == Math.max(0, config.hours() - 24)) {
          String name = strategyName(h);
          long s0 = System.nanoTime();
          snaps.add(snapshot(ingest, ingestDir, work.resolve(name), name, h, crashAt - h, pg, w));
          snapshotNanos += System.nanoTime() - s0;
        }
        int interval = config.hours() - h;
        if (config.adviseTarget() != null && ADVISE_CANDIDATE_HOURS.contains(interval)) {
          String name = "advised-every-" + interval + "h";
          long s0 = System.nanoTime();
          advisedCandidates.put(interval, snapshot(ingest, ingestDir, work.resolve(name), name, h, crashAt - h, pg, w));
          snapshotNanos += System.nanoTime() - s0;
        }
      }
      w.hour(0.5);
      ingestAll(ingest, w);
      snaps.add(snapshot(ingest, ingestDir, work.resolve("right-after"), "right-after", config.hours(), 0, pg, w));
    } finally {
      ingest.close(); // the crash: no final snapshot, nothing confirmed to the sources
      if (pg != null) {
        pg.closeWorkload(); // its backend exits and publishes its last table statistics
      }
    }
    ingest = null; // the crashed node's state is garbage now: the recoveries below need the heap
    long ingestMillis = (System.nanoTime() - i0) / 1_000_000;
    long walAtCrash = pg == null ? -1 : pg.currentWalLsn();
    long retainedAtCrash = pg == null ? -1 : pg.slotRetainedWal();
    long[] written = w.writeMillis();
    LOG.info("History ingested in {} ms: {} Kafka records, {} Postgres changes; {} snapshots; after midnight {} ms producing"
            + " Kafka records, {} ms changing the table, {} ms ingesting, {} ms snapshotting", ingestMillis, w.ordersProduced(),
        w.customerChanges(), snaps.size(), written[0], written[1], ingestNanos / 1_000_000, snapshotNanos / 1_000_000);
    notes.add(String.format(Locale.ROOT, "History: %,d ms producing Kafka records and %,d ms changing the table after midnight"
        + " (one after the other, by the benchmark), %,d ms for the ingest node to read and compute it, %,d ms capturing and"
        + " writing snapshots.", written[0], written[1], ingestNanos / 1_000_000, snapshotNanos / 1_000_000));

    // ---- recover each strategy; full replay last (its initial load re-creates the slot)
    List<StrategyResult> results = new ArrayList<>();
    Snap daily = snaps.stream().filter(s -> s.name().equals("daily")).findFirst().orElse(null);
    if (config.standbys() && daily != null) {
      // before any recovery writes into the daily store: each standby strategy gets a pristine copy
      copyStore(daily.dir(), work.resolve("warm-standby"));
      copyStore(daily.dir(), work.resolve("hot-standby"));
    }
    List<StrategyResult> standbyResults = new ArrayList<>();
    for (Snap s : snaps) {
      if (pg != null) {
        // as production would have: the slot confirmed at this strategy's snapshot
        confirmSlot(pg, s.name(), s.pgConfirmLsn());
      }
      results.add(recoverRepeatedly(s, w, pg, walAtCrash));
      if (s == daily && config.adviseTarget() != null) {
        advice = applyAdvice(results.get(results.size() - 1), advisedCandidates, w, pg, walAtCrash, results);
      }
      if (s == daily && config.standbys()) {
        // right after the daily recovery, before the slot is confirmed past the daily snapshot's position
        for (String mode : List.of("warm", "hot")) {
          Path dir = work.resolve(mode + "-standby");
          standbyResults.add(standBy(daily.as(mode + "-standby", dir), mode, kafka, w, pg, walAtCrash));
        }
      }
    }
    results.addAll(standbyResults);
    Path fullDir = work.resolve("full-replay");
    copyCatalog(ingestDir, fullDir);
    results.add(0, recoverRepeatedly(new Snap("full-replay", -1, -1, fullDir, null, null, Map.of(), walAtCrash, 0, -1), w,
        pg, walAtCrash));

    PeerComparison peer = config.peer() ? comparePeer(kafka, w, work) : null;
    if (pg != null) {
      notes.add("The ingest node never confirmed a snapshot to Postgres, so its slot kept all WAL since it was created ("
          + retainedAtCrash + " bytes at the crash). That is what let every strategy resume. Before each strategy's"
          + " recovery the benchmark confirms the slot at that strategy's snapshot (pg_replication_slot_advance to the"
          + " commit LSN in the snapshot's offsets, the position a node's snapshot commit confirms; snapshots are recovered"
          + " oldest first, the standbys right after the daily one), so each recovery finds the slot as production leaves it: retaining only the WAL since"
          + " its last committed snapshot (a daily snapshot up to a day of WAL of the whole database cluster, an hourly"
          + " one an hour's). The advance's own decoding is not counted in any recovery.");
      notes.add("PG WAL decoded is the growth of pg_stat_replication_slots.total_bytes: transaction data the server"
          + " decoded for the slot (with REPLICA IDENTITY FULL it carries old and new row images, so it exceeds the WAL"
          + " needed). The server publishes these statistics lazily, so the split between consecutive recoveries is"
          + " approximate; PG WAL needed (LSN difference) is exact.");
      notes.add("Postgres recoveries include Debezium's start (about 250 ms here: connection checks, slot lookup,"
          + " replication stream set-up, finding the resume position) and the caught-up test: a logical decoding"
          + " message written when the source is sought must come back through its own replication stream. Together"
          + " about 0.35-0.6 s even when nothing is left to read.");
      notes.add("A full replay does not read the WAL: Debezium's initial load scans the table's current rows"
          + " (rows scanned ≈ rows in the table), then streams from a new slot.");
    }
    return new LoadOnSourceResult(config, machine(), command, startedAt, (System.nanoTime() - t0) / 1_000_000, ingestMillis,
        w.ordersProduced(), w.customerRows(), w.customerChanges(), retainedAtCrash, results, peer, advice, notes);
  }

  /**
   * The name of the snapshot taken at hour {@code h}: {@code daily} for the one a day before the
   * crash (midnight of the last day), {@code hourly} for the last full hour, else {@code
   * snapshot-hNN}.
   */
  String strategyName(int h) {
    if (h == config.hours()) {
      return "hourly";
    }
    if (h == Math.max(0, config.hours() - 24)) {
      return "daily";
    }
    return String.format(Locale.ROOT, "snapshot-h%02d", h);
  }

  private static CairnConfig nodeConfig(Path storeDir, List<String> init) {
    return nodeConfig(storeDir, init, 0);
  }

  private static CairnConfig nodeConfig(Path storeDir, List<String> init, int httpPort) {
    return new CairnConfig(storeUri(storeDir), Map.of(), 2, 50_000, Duration.ofMillis(100), "0 0 0 * * ?", ZoneId.of("UTC"),
        1000, 30, Duration.ofHours(1), "127.0.0.1", httpPort, 0, init);
  }

  static String storeUri(Path dir) {
    return dir.toAbsolutePath().toUri().toString().replaceFirst("^file:/+", "file:///") + "?create=true";
  }

  /** The schedules' intervals, in hours, a run with an advise target snapshots for (their worst-case ages). */
  static final List<Integer> ADVISE_CANDIDATE_HOURS = Advisor.SCHEDULES.stream().map(x -> x.interval())
      .filter(d -> d.toHours() >= 1 && d.toHours() < 24 && d.toMinutesPart() == 0).map(d -> (int) d.toHours()).toList();

  /** Strategies whose internal updates a note already gives. */
  private final java.util.Set<String> sealedNoted = new HashSet<>();

  /** What the node recovered from the daily snapshot advised (the last recovery's, with repeats). */
  private AdviceReport dailyAdvice;
  private AdviceApplied advice;

  /**
   * The live ingest the advice is asked for: the scenario's, per simulated second (the history runs
   * faster than the clock, so what the node measured while it ingested is not the live rate). Kafka
   * bytes per record are the daily recovery's own reading of the topic; a Postgres change's bytes are
   * the WAL the history wrote per change (what the slot retains).
   */
  private Map<String, Advisor.Ingest> statedIngest(RecoveryReport r, Snap s, PgSetup pg, long walAtCrash) {
    Map<String, Advisor.Ingest> out = new LinkedHashMap<>();
    Duration window = Duration.ofHours(config.hours());
    double orders = config.ordersPerHour() / 3600.0;
    long kafkaRecords = 0;
    long kafkaBytes = 0;
    for (RecoveryReport.SourceReport sr : r.sources()) {
      if (sr.name().equals(Workload.ORDERS) || sr.name().equals(Workload.ORDER_EVENTS)) {
        kafkaRecords += sr.recordsReplayed();
        kafkaBytes += sr.load().getOrDefault("bytes", 0L);
      }
    }
    double bytesPerRecord = kafkaRecords == 0 ? 0 : kafkaBytes / (double) kafkaRecords; // the meter counts since the source opened
    out.put(Workload.ORDERS, new Advisor.Ingest(orders, orders * bytesPerRecord, window));
    if (history()) {
      out.put(Workload.ORDER_EVENTS, new Advisor.Ingest(orders, orders * bytesPerRecord, window));
    }
    if (pg != null) {
      double changes = config.customerChangesPerHour() / 3600.0;
      double walPerSecond = (walAtCrash - s.walLsn()) / (s.hoursBeforeCrash() * 3600);
      out.put(Workload.CUSTOMERS, new Advisor.Ingest(changes, Math.max(0, walPerSecond), window));
    }
    return out;
  }

  /**
   * The advice applied: the snapshot as old as the recommended schedule leaves it at worst (its
   * interval plus the half hour before the crash) is recovered and timed against the target. A
   * daily schedule is the daily strategy itself; a schedule under an hour has no snapshot at the
   * benchmark's hour boundaries and is reported as not applied.
   */
  private AdviceApplied applyAdvice(StrategyResult dailyResult, Map<Integer, Snap> candidates, Workload w, PgSetup pg,
      long walAtCrash, List<StrategyResult> results) {
    AdviceReport report = dailyAdvice;
    long target = config.adviseTarget().toMillis();
    String text = report.toText();
    LOG.info("cairn advise for {} ms at the scenario's live ingest:\n{}", target, text);
    Advisor.Advice a = report.advice();
    if (!a.feasible()) {
      notes.add("cairn advise found no schedule for the target: " + a.infeasible());
      return new AdviceApplied(target, null, 0, 0, null, 0, -1, text);
    }
    Duration interval = a.recommended().interval();
    long predicted = a.atRecommended().worst().toMillis();
    if (interval.toHours() >= 24 && dailyResult.hoursSinceSnapshot() >= interval.toHours() + 0.5) {
      return new AdviceApplied(target, a.recommended().cron(), interval.toMillis(), predicted, dailyResult.name(),
          dailyResult.hoursSinceSnapshot(), dailyResult.recoveryMillis(), text);
    }
    Snap c = candidates.get((int) interval.toHours());
    if (c == null || interval.toMinutesPart() != 0) {
      notes.add("cairn advise recommended " + a.recommended().cron() + " (every " + Advisor.human(interval) + "): this run has"
          + " no snapshot as old as that schedule leaves one at worst (snapshots are taken at simulated hour boundaries, up to"
          + " the history's length), so the advice was not applied");
      return new AdviceApplied(target, a.recommended().cron(), interval.toMillis(), predicted, null, 0, -1, text);
    }
    confirmSlot(pg, c.name(), c.pgConfirmLsn());
    StrategyResult applied = recoverRepeatedly(c, w, pg, walAtCrash);
    results.add(applied);
    notes.add(String.format(Locale.ROOT, "cairn advise, asked for %,d ms: %s (every %s), worst case predicted %,d ms; the"
        + " snapshot of that age (%.1f h) recovered in %,d ms: %s. Snapshots were also taken for the other schedules of 1 to"
        + " 12 hours; only the recommended one was recovered.", target, a.recommended().cron(), Advisor.human(interval), predicted,
        c.hoursBeforeCrash(), applied.recoveryMillis(), applied.recoveryMillis() <= target ? "within the target" : "NOT within"
        + " the target"));
    return new AdviceApplied(target, a.recommended().cron(), interval.toMillis(), predicted, c.name(), c.hoursBeforeCrash(),
        applied.recoveryMillis(), text);
  }

  /** {@code "<n> <what> (<n / read> per record; by dataflow {…})"}: an engine's per-dataflow count against the records read. */
  private static String perRecord(String what, Map<String, Long> byDataflow, long read) {
    long n = byDataflow.values().stream().mapToLong(Long::longValue).sum();
    return String.format(Locale.ROOT, "%,d %s (%.1f per record; by dataflow %s)", n, what, n / (double) Math.max(1, read), byDataflow);
  }

  /** Ticks the ingest node until it has read every record produced so far. */
  private long ingestNanos;
  private long snapshotNanos;

  private void ingestAll(Node node, Workload w) {
    long t0 = System.nanoTime();
    try {
      ingestAllTimed(node, w);
    } finally {
      ingestNanos += System.nanoTime() - t0;
    }
  }

  private void ingestAllTimed(Node node, Workload w) {
    Engine engine = node.engine();
    long deadline = System.nanoTime() + INGEST_TIMEOUT.toNanos();
    while (true) {
      engine.tick();
      long kafka = kafkaOffsetSum(engine.offsets().getOrDefault(Workload.ORDERS, SourceOffsets.EMPTY));
      if (history()) {
        kafka = Math.min(kafka, kafkaOffsetSum(engine.offsets().getOrDefault(Workload.ORDER_EVENTS, SourceOffsets.EMPTY)));
      }
      long pg = config.postgres() ? meter(engine, Workload.CUSTOMERS, "records") : 0;
      if (kafka >= w.ordersProduced() && (!config.postgres() || pg >= w.customerRecordsSinceStart())) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Cannot ingest the history: after " + INGEST_TIMEOUT.toSeconds() + " s cairn had read "
            + kafka + " of " + w.ordersProduced() + " Kafka records and " + pg + " of " + w.customerRecordsSinceStart()
            + " Postgres rows");
      }
      sleep(2);
    }
  }

  /** Whether the order history (a second, append-only Kafka source over the same topic) is part of the run. */
  private boolean history() {
    return config.orderHistory() && config.postgres();
  }

  /** Kafka sources reading the topic: the records a recovery must read are this many times those after the offsets. */
  private int kafkaReaders() {
    return history() ? 2 : 1;
  }

  private static long meter(Engine engine, String source, String key) {
    return engine.sourceStatus(source).map(s -> s.load().getOrDefault(key, 0L)).orElse(0L);
  }

  private static long kafkaOffsetSum(SourceOffsets o) {
    return o.values().values().stream().mapToLong(Long::parseLong).sum();
  }

  /** Captures the ingest node between two ticks and writes the state into a fresh store at {@code dir}. */
  private Snap snapshot(Node node, Path ingestDir, Path dir, String name, int hour, double hoursBeforeCrash, PgSetup pg,
      Workload w) {
    Engine engine = node.engine();
    Object[] cut = engine.betweenTicks(() -> {
      long p0 = System.nanoTime();
      Object[] c = {engine.capture(), node.session().position(), 0L};
      c[2] = System.nanoTime() - p0;
      return c;
    });
    EngineState state = (EngineState) cut[0];
    copyCatalog(ingestDir, dir);
    try (MeteredObjectStore store = new MeteredObjectStore(ObjectStores.open(storeUri(dir)));
        Snapshotter snapshotter = Snapshotter.builder(store).build()) {
      SnapshotResult r = snapshotter.snapshot(state, (Long) cut[1], Duration.ofNanos((Long) cut[2]));
      Map<String, String> offsets = state.offsets().getOrDefault(Workload.ORDERS, SourceOffsets.EMPTY).values();
      if (history() && !offsets.equals(state.offsets().getOrDefault(Workload.ORDER_EVENTS, SourceOffsets.EMPTY).values())) {
        // both read to the end before the capture: the expected re-read counts them as one
        throw new IllegalStateException("Cannot take snapshot '" + name + "': the two Kafka sources are at different offsets ("
            + offsets + " and " + state.offsets().get(Workload.ORDER_EVENTS) + ")");
      }
      LOG.info("Snapshot '{}' at simulated hour {}: {} rows, {} bytes in {} ms", name, hour, r.rows(), r.bytesTotal(),
          r.uploadDuration().toMillis());
      return new Snap(name, hour, hoursBeforeCrash, dir, r, store.metrics(), offsets, pg == null ? -1 : pg.currentWalLsn(),
          w.customerChanges(), pg == null ? -1 : confirmLsn(state.offsets().getOrDefault(Workload.CUSTOMERS, SourceOffsets.EMPTY)));
    }
  }

  /**
   * The LSN a snapshot commit confirms to the slot for these Postgres offsets: the last commit's
   * ({@code lsn_commit}), else the last change's ({@code lsn}); -1 when there is neither.
   */
  static long confirmLsn(SourceOffsets offsets) {
    String v = offsets.get("lsn_commit") != null ? offsets.get("lsn_commit") : offsets.get("lsn");
    return v == null ? -1 : Long.parseLong(v);
  }

  /** Confirms the slot up to {@code lsn} (never backwards), timing the server's advance; notes what it did. */
  private void confirmSlot(PgSetup pg, String strategy, long lsn) {
    if (lsn < 0) {
      return;
    }
    pg.awaitSlotInactive();
    long t0 = System.nanoTime();
    long before = pg.slotRetainedWal();
    boolean moved = pg.advanceSlot(lsn);
    long after = pg.slotRetainedWal();
    long millis = (System.nanoTime() - t0) / 1_000_000;
    LOG.info("Strategy '{}': slot confirmed at {} ({}), WAL retained {} -> {} bytes in {} ms", strategy, lsn,
        moved ? "advanced" : "already there", before, after, millis);
    if (moved) {
      notes.add(String.format(Locale.ROOT, "Before '%s': the slot confirmed at its snapshot, WAL retained %,d -> %,d bytes"
          + " (the server's advance took %,d ms, not counted in the recovery).", strategy, before, after, millis));
    }
  }

  /** Copies every object of the store at {@code from} into a fresh store at {@code to}. */
  private static void copyStore(Path from, Path to) {
    try (ObjectStore src = ObjectStores.open(storeUri(from)); ObjectStore dst = ObjectStores.open(storeUri(to))) {
      for (ObjectInfo o : src.list("")) {
        dst.put(o.key(), src.readAllBytes(o.key()));
      }
    }
  }

  private static void copyCatalog(Path ingestDir, Path dir) {
    try (ObjectStore from = ObjectStores.open(storeUri(ingestDir)); ObjectStore to = ObjectStores.open(storeUri(dir))) {
      for (ObjectInfo o : from.list(ObjectStoreCatalogLog.PREFIX)) {
        to.put(o.key(), from.readAllBytes(o.key()));
      }
    }
  }

  /** {@code repeats} recoveries of one store; the median by wall time, views matching only if every one did. */
  private StrategyResult recoverRepeatedly(Snap s, Workload w, PgSetup pg, long walAtCrash) {
    List<StrategyResult> runs = new ArrayList<>();
    for (int i = 0; i < config.repeats(); i++) {
      runs.add(recover(s, w, pg, walAtCrash));
    }
    boolean allMatch = runs.stream().allMatch(StrategyResult::viewsMatchOracle);
    runs.sort(java.util.Comparator.comparingLong(StrategyResult::recoveryMillis));
    StrategyResult median = runs.get(runs.size() / 2);
    if (runs.size() > 1) {
      LOG.info("Strategy '{}': recovery ms over {} runs: {}", s.name(), runs.size(),
          runs.stream().map(r -> Long.toString(r.recoveryMillis())).toList());
    }
    return allMatch ? median : runs.stream().filter(r -> !r.viewsMatchOracle()).findFirst().orElseThrow();
  }

  private StrategyResult recover(Snap s, Workload w, PgSetup pg, long walAtCrash) {
    LOG.info("Recovering strategy '{}'", s.name());
    if (pg != null) {
      pg.awaitSlotInactive(); // the previous recovery's walsender may still hold the slot: not this recovery's cost
    }
    long scannedBefore = pg == null ? 0 : pg.rowsScanned();
    long decodedBefore = pg == null ? 0 : pg.slotDecodedBytes();
    AtomicReference<MeteredObjectStore> metered = new AtomicReference<>();
    Node.Options options = Node.Options.defaults().withCatchUpTimeout(catchUpTimeout()).withStoreDecorator(st -> {
      MeteredObjectStore m = new MeteredObjectStore(st);
      metered.set(m);
      return m;
    });
    RecoveryReport r;
    boolean match;
    long extraMillis = 0;
    Map<String, Long> kafka;
    Map<String, Long> pgLoad;
    CpuSplit cpu = CpuSplit.start(brokerProcess);
    try (Node node = Node.recover(nodeConfig(s.dir(), List.of()), options)) {
      r = node.report();
      LOG.info("Strategy '{}': recovered in {} ms, phases {}; catch-up {}; CPU ms {}", s.name(), r.totalMillis(), r.phaseMillis(),
          r.catchUpTicks(), cpu.end());
      if (sealedNoted.add(s.name())) { // the first recovery of a strategy (repeats do the same work)
        long read = r.sources().stream().mapToLong(RecoveryReport.SourceReport::recordsReplayed).sum();
        notes.add(String.format(Locale.ROOT, "Strategy '%s': %s for %,d source records read; %s.", s.name(),
            perRecord("updates sealed into arrangements", node.engine().updatesSealed(), read), read,
            perRecord("updates passed between operators", node.engine().updatesEmitted(), read)));
      }
      if (s.name().equals("daily") && config.adviseTarget() != null) {
        dailyAdvice = node.advise(config.adviseTarget(), statedIngest(r, s, pg, walAtCrash));
      }
      match = viewsMatch(node.engine(), w);
      if (!match) {
        // Node.recover said caught up, but not everything has arrived: keep ticking, count the time
        long m0 = System.nanoTime();
        while (!match && System.nanoTime() - m0 < Duration.ofSeconds(60).toNanos()) {
          node.engine().tick();
          match = viewsMatch(node.engine(), w);
          if (!match) {
            sleep(1);
          }
        }
        extraMillis = (System.nanoTime() - m0) / 1_000_000;
        notes.add("Strategy '" + s.name() + "': Node.recover returned (caught up: " + r.caughtUp() + ") after "
            + r.totalMillis() + " ms, but the views did not equal the oracle yet; they did " + extraMillis
            + " ms later" + (match ? "" : " — NO: not even after 60 s")
            + ". The recovery time shown includes that wait.");
      }
      // the sources' meters count since they were opened by this recovery: the whole recovery's load
      kafka = kafkaLoad(node.engine());
      pgLoad = node.engine().sourceStatus(Workload.CUSTOMERS).map(x -> x.load()).orElse(Map.of());
    }
    MeteredObjectStore.Metrics m = metered.get().metrics();
    long rowsScanned = -1;
    long decoded = -1;
    if (pg != null) {
      sleep(1500); // PG 15 publishes table statistics up to ~1 s late
      rowsScanned = pg.rowsScanned() - scannedBefore;
      long decodedAfter = pg.slotDecodedBytes();
      decoded = decodedAfter >= decodedBefore ? decodedAfter - decodedBefore : decodedAfter; // a full replay re-creates the slot
    }
    long[] expectedKafka = w.kafkaAfter(s.kafkaOffsets());
    expectedKafka[0] *= kafkaReaders();
    expectedKafka[1] *= kafkaReaders();
    SnapshotResult sr = s.result();
    MeteredObjectStore.Metrics wm = s.writeMetrics();
    long expectedPg = pg == null ? 0 : s.hour() < 0 ? w.customerRows() : w.customerChanges() - s.pgChangesBefore();
    return new StrategyResult(s.name(), s.hour(), s.hoursBeforeCrash(), r.totalMillis() + extraMillis, r.totalMillis(),
        r.loadMillis(), r.catchUpMillis() + extraMillis, r.catchUpTicks().readingMillis(), r.catchUpTicks().computingMillis(),
        r.rowsLoaded(), kafka.getOrDefault("records", 0L), kafka.getOrDefault("bytes", 0L),
        kafka.getOrDefault("bytes_fetched", 0L), kafka.getOrDefault("fetch_requests", 0L), expectedKafka[0], expectedKafka[1],
        pgLoad.getOrDefault("records", 0L), rowsScanned, decoded,
        pg == null ? -1 : s.hour() < 0 ? 0 : walAtCrash - s.walLsn(), expectedPg,
        m.getClassRequests(), m.putClassRequests(), m.bytesOut(), m.estimatedCostUsd(),
        sr == null ? 0 : sr.bytesTotal(), sr == null ? 0 : sr.files(), sr == null ? 0 : sr.uploadDuration().toMillis(),
        sr == null ? 0 : sr.capturePause().toNanos() / 1000, wm == null ? 0 : wm.putClassRequests(),
        wm == null ? 0 : wm.estimatedCostUsd(), match, null);
  }

  // ------------------------------------------------------------------ standby strategies

  /**
   * How long a recovery may catch up before {@link Node#recover} gives up: 10 minutes, or a minute
   * per 3M records the sources hold (a full replay of the large scenario reads 200M; it was cut
   * off at 10 minutes once, two thirds of the way).
   */
  private Duration catchUpTimeout() {
    long records = (long) config.hours() * config.ordersPerHour() * (config.orderHistory() ? 2 : 1) + config.initialOrders();
    return Duration.ofMinutes(Math.max(10, records / 3_000_000));
  }

  /**
   * A standby strategy: on a copy of the daily snapshot's store, an owner ({@link Node#recover}
   * with a group on the benchmark's broker, caught up) and then a {@code mode} standby (its {@code
   * Node.recover} on a thread of its own: it blocks while standing by). Once the standby's status
   * says it serves the snapshot (hot: caught up on the sources it reads ahead), what it read while
   * standing by is taken from that status; then the owner is closed (it leaves the group at once)
   * and the clock runs until the standby has taken over and its views equal the oracle. The
   * takeover's reading is its recovery report's; Postgres' statistics are read around the takeover.
   */
  private StrategyResult standBy(Snap s, String mode, KafkaBroker kafka, Workload w, PgSetup pg, long walAtCrash) {
    LOG.info("Standby strategy '{}': owner and {} standby on a copy of the daily snapshot", s.name(), mode);
    CairnConfig.Group group = new CairnConfig.Group(kafka.bootstrapServers(), "bench-" + s.name() + "-"
        + UUID.randomUUID().toString().substring(0, 8), Duration.ofSeconds(6), Map.of(), Duration.ofSeconds(1), mode.equals("hot"));
    if (pg != null) {
      pg.awaitSlotInactive();
    }
    Node owner = Node.recover(nodeConfig(s.dir(), List.of()).withGroup(group),
        Node.Options.defaults().withCatchUpTimeout(catchUpTimeout()));
    LOG.info("Standby strategy '{}': the owner recovered in {} ms (epoch {})", s.name(), owner.report().totalMillis(), owner.epoch());
    int port = freePort();
    AtomicReference<MeteredObjectStore> metered = new AtomicReference<>();
    Node.Options options = Node.Options.defaults().withCatchUpTimeout(catchUpTimeout()).withStoreDecorator(st -> {
      MeteredObjectStore m = new MeteredObjectStore(st);
      metered.set(m);
      return m;
    });
    java.util.concurrent.CompletableFuture<Node> standing = new java.util.concurrent.CompletableFuture<>();
    long s0 = System.nanoTime();
    Thread t = new Thread(() -> {
      try {
        standing.complete(Node.recover(nodeConfig(s.dir(), List.of(), port).withGroup(group), options));
      } catch (Throwable e) {
        standing.completeExceptionally(e);
      }
    }, "bench-standby-" + mode);
    t.setDaemon(true);
    t.start();
    Node standby = null;
    try {
      com.fasterxml.jackson.databind.JsonNode sb = awaitStandbyServing(port, mode, standing);
      long readyMillis = (System.nanoTime() - s0) / 1_000_000;
      com.fasterxml.jackson.databind.JsonNode kafkaRead = sb.path("sources").path(Workload.ORDERS);
      com.fasterxml.jackson.databind.JsonNode kafkaLoad = kafkaRead.path("load");
      com.fasterxml.jackson.databind.JsonNode pgRead = sb.path("sources").path(Workload.CUSTOMERS);
      LOG.info("Standby strategy '{}': the standby serves after {} ms; standing by it read: {}", s.name(), readyMillis,
          sb.path("sources"));
      long scannedBefore = 0;
      long decodedBefore = 0;
      if (pg != null) {
        sleep(1500); // the owner's last statistics: not the takeover's
        scannedBefore = pg.rowsScanned();
        decodedBefore = pg.slotDecodedBytes();
      }
      // ---- the owner stops cleanly: it leaves the group as it closes, and the standby takes over
      long c0 = System.nanoTime();
      owner.close();
      long ownerCloseMillis = (System.nanoTime() - c0) / 1_000_000;
      try {
        standby = standing.get(10, java.util.concurrent.TimeUnit.MINUTES);
      } catch (java.util.concurrent.ExecutionException e) {
        throw new IllegalStateException("Cannot take over as the " + mode + " standby: " + e.getCause(), e.getCause());
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IllegalStateException("Cannot take over as the " + mode + " standby: not done 10 min after the owner's close", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted", e);
      }
      long returnedMillis = (System.nanoTime() - c0) / 1_000_000;
      RecoveryReport r = standby.report();
      boolean match = viewsMatch(standby.engine(), w);
      long m0 = System.nanoTime();
      while (!match && System.nanoTime() - m0 < Duration.ofSeconds(60).toNanos()) {
        standby.engine().tick();
        match = viewsMatch(standby.engine(), w);
        if (!match) {
          sleep(1);
        }
      }
      long extraMillis = (System.nanoTime() - m0) / 1_000_000;
      long totalMillis = (System.nanoTime() - c0) / 1_000_000;
      if (extraMillis > 1 || !match) {
        notes.add("Strategy '" + s.name() + "': the standby's Node.recover returned (caught up: " + r.caughtUp() + ") "
            + returnedMillis + " ms after the owner's close began, but the views did not equal the oracle yet; they did "
            + extraMillis + " ms later" + (match ? "" : " — NO: not even after 60 s") + ". The takeover time shown includes that wait.");
      }
      LOG.info("Standby strategy '{}': owner closed in {} ms; the standby took over {} ms after the close began (views = oracle"
          + " after {} ms: {}); takeover phases {}; sources {}", s.name(), ownerCloseMillis, returnedMillis, totalMillis, match,
          r.phaseMillis(), r.sources());
      Map<String, Long> kafkaTakeover = load(r, Workload.ORDERS);
      Map<String, Long> pgTakeover = load(r, Workload.CUSTOMERS);
      long kafkaMeterTotal = meter(standby.engine(), Workload.ORDERS, "records");
      Map<String, Long> phases = new LinkedHashMap<>(r.phaseMillis());
      standby.close();
      standby = null;
      long rowsScanned = -1;
      long decoded = -1;
      if (pg != null) {
        sleep(1500);
        rowsScanned = pg.rowsScanned() - scannedBefore;
        decoded = pg.slotDecodedBytes() - decodedBefore;
      }
      StandbyFigures f = new StandbyFigures(mode, readyMillis, sb.path("lastLoadMillis").asLong(0),
          kafkaLoad.path("records").asLong(0), kafkaLoad.path("bytes").asLong(0), kafkaLoad.path("bytes_fetched").asLong(0),
          kafkaLoad.path("fetch_requests").asLong(0), pgRead.path("load").path("records").asLong(0),
          pgRead.path("readAhead").asBoolean(false), kafkaMeterTotal - kafkaTakeover.getOrDefault("records", 0L),
          ownerCloseMillis, returnedMillis, phases);
      long[] expectedKafka = w.kafkaAfter(s.kafkaOffsets());
      MeteredObjectStore.Metrics m = metered.get().metrics();
      SnapshotResult sr = s.result();
      MeteredObjectStore.Metrics wm = s.writeMetrics();
      return new StrategyResult(s.name(), s.hour(), s.hoursBeforeCrash(), totalMillis, r.totalMillis(), 0,
          r.catchUpMillis() + extraMillis, r.catchUpTicks().readingMillis(), r.catchUpTicks().computingMillis(), r.rowsLoaded(),
          kafkaTakeover.getOrDefault("records", 0L), kafkaTakeover.getOrDefault("bytes", 0L),
          kafkaTakeover.getOrDefault("bytes_fetched", 0L), kafkaTakeover.getOrDefault("fetch_requests", 0L), expectedKafka[0],
          expectedKafka[1], pgTakeover.getOrDefault("records", 0L), rowsScanned, decoded,
          pg == null ? -1 : walAtCrash - s.walLsn(), pg == null ? 0 : w.customerChanges() - s.pgChangesBefore(),
          m.getClassRequests(), m.putClassRequests(), m.bytesOut(), m.estimatedCostUsd(), sr.bytesTotal(), sr.files(),
          sr.uploadDuration().toMillis(), sr.capturePause().toNanos() / 1000, wm.putClassRequests(), wm.estimatedCostUsd(), match, f);
    } finally {
      owner.close(); // idempotent; a standby still standing by then takes over and is closed below
      if (standby == null) {
        try {
          standing.get(2, java.util.concurrent.TimeUnit.MINUTES).close();
        } catch (Exception ignored) {
          // it failed or never took over: its thread is a daemon
        }
      }
    }
  }

  /** Polls the standby's {@code /status} until it serves a snapshot (hot: caught up on what it reads ahead); its {@code standby} block. */
  private static com.fasterxml.jackson.databind.JsonNode awaitStandbyServing(int port, String mode,
      java.util.concurrent.CompletableFuture<Node> standing) {
    java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/status"))
        .timeout(Duration.ofSeconds(5)).build();
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    String last = "no answer";
    while (System.nanoTime() < deadline) {
      if (standing.isDone()) {
        throw new IllegalStateException("Cannot measure the " + mode + " standby: its Node.recover ended while it should stand by"
            + (standing.isCompletedExceptionally() ? " (failed)" : " (it owns the store)") + "; last status: " + last);
      }
      try {
        java.net.http.HttpResponse<String> resp = http.send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
        last = resp.body();
        com.fasterxml.jackson.databind.JsonNode sb = json.readTree(last).path("standby");
        boolean serving = sb.has("snapshot");
        boolean caughtUp = !mode.equals("hot") || sb.path("sources").path(Workload.ORDERS).path("caughtUp").asBoolean(false);
        if (serving && caughtUp) {
          return sb;
        }
      } catch (IOException e) {
        last = e.toString(); // the listener is not up yet
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted", e);
      }
      sleep(100);
    }
    throw new IllegalStateException("Cannot measure the " + mode + " standby: it did not serve its snapshot within 10 min; last status: "
        + last);
  }

  private static int freePort() {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free port on 127.0.0.1: " + e.getMessage(), e);
    }
  }

  private static Map<String, Long> load(RecoveryReport r, String source) {
    return r.sources().stream().filter(s -> s.name().equals(source)).findFirst().map(RecoveryReport.SourceReport::load)
        .orElse(Map.of());
  }

  private boolean viewsMatch(Engine engine, Workload w) {
    boolean ok = sameRows(engine.peek(Workload.BY_CUSTOMER), w.expectedByCustomer());
    if (config.postgres()) {
      ok &= sameRows(engine.peek(Workload.BY_REGION), w.expectedByRegion());
    }
    if (history()) {
      ok &= sameRows(engine.peek(Workload.HISTORY_BY_REGION), w.expectedHistoryByRegion());
    }
    return ok;
  }

  /** The Kafka sources' load meters, summed over the sources reading the topic. */
  private Map<String, Long> kafkaLoad(Engine engine) {
    Map<String, Long> sum = new java.util.HashMap<>(engine.sourceStatus(Workload.ORDERS).map(x -> x.load()).orElse(Map.of()));
    if (history()) {
      engine.sourceStatus(Workload.ORDER_EVENTS).map(x -> x.load()).orElse(Map.of()).forEach((k, v) -> sum.merge(k, v, Long::sum));
    }
    return sum;
  }

  private static boolean sameRows(List<Row> actual, List<Row> expected) {
    return actual.size() == expected.size() && new HashSet<>(actual).equals(new HashSet<>(expected));
  }

  // ------------------------------------------------------------------ the peer

  private PeerComparison comparePeer(KafkaBroker kafka, Workload w, Path work) {
    LOG.info("Peer comparison on topic {} ({} records)", w.topic(), w.ordersProduced());
    Path dir = work.resolve("peer-cairn");
    List<String> sql = w.sql(kafka.bootstrapServers(), null);
    long ingestMillis;
    long snapshotMillis;
    try (Node node = Node.recover(nodeConfig(dir, sql), Node.Options.defaults())) {
      ingestMillis = node.report().catchUpMillis();
      long s0 = System.nanoTime();
      node.snapshotNow();
      snapshotMillis = (System.nanoTime() - s0) / 1_000_000;
    }
    AtomicReference<MeteredObjectStore> metered = new AtomicReference<>();
    Node.Options options = Node.Options.defaults().withStoreDecorator(st -> {
      MeteredObjectStore m = new MeteredObjectStore(st);
      metered.set(m);
      return m;
    });
    RecoveryReport rec;
    boolean cairnOk;
    try (Node node = Node.recover(nodeConfig(dir, List.of()), options)) {
      rec = node.report();
      cairnOk = sameRows(node.engine().peek(Workload.BY_CUSTOMER), w.expectedByCustomer());
    }
    PeerResult peer;
    boolean peerOk;
    try (KafkaStreamsPeer p = KafkaStreamsPeer.create(PeerConfig.defaults(kafka.bootstrapServers(), w.topic(),
        "bench-peer-" + UUID.randomUUID().toString().substring(0, 8)))) {
      ThroughputMeasurement t = p.processFromBeginning();
      RestoreMeasurement restore = p.killAndRestore(true);
      peerOk = samePeer(p.aggregate(), w.expectedByCustomer());
      peer = p.result(t, restore);
    }
    double rps = w.ordersProduced() / (Math.max(1, ingestMillis) / 1000.0);
    return new PeerComparison(w.ordersProduced(), rps, ingestMillis, snapshotMillis, rec.totalMillis(),
        load(rec, Workload.ORDERS).getOrDefault("bytes", 0L), metered.get().metrics().bytesOut(), cairnOk, peer, peerOk);
  }

  private static boolean samePeer(Map<String, CustomerAggregate> peer, List<Row> expected) {
    if (peer.size() != expected.size()) {
      return false;
    }
    for (Row r : expected) {
      CustomerAggregate a = peer.get(Long.toString(r.getLong(0)));
      if (a == null || !a.sameAs(new CustomerAggregate(r.getLong(1), BigDecimal.valueOf(r.getLong(2))))) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ helpers

  static Map<String, String> machine() {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
    m.put("cpus", Integer.toString(Runtime.getRuntime().availableProcessors()));
    try {
      Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name")).findFirst()
          .ifPresent(l -> m.put("cpu", l.substring(l.indexOf(':') + 1).trim()));
      Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal")).findFirst()
          .ifPresent(l -> m.put("memory", l.substring(l.indexOf(':') + 1).trim()));
    } catch (IOException | RuntimeException e) {
      // not Linux: fine
    }
    m.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    m.put("maxHeap", (Runtime.getRuntime().maxMemory() >> 20) + " MiB");
    m.put("kafkaStreams", KafkaStreamsPeer.kafkaStreamsVersion());
    return m;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted", e);
    }
  }

  static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      LOG.warn("Cannot delete {}: {}", dir, e.getMessage());
    }
  }

  /** The benchmark's private Postgres server, database, role and workload connection. */
  static final class PgSetup implements AutoCloseable {
    final PostgresServer server;
    final String database;
    final Connection workloadConnection;
    private final Connection stats;

    private PgSetup(PostgresServer server, String database, Connection workload, Connection stats) {
      this.server = server;
      this.database = database;
      this.workloadConnection = workload;
      this.stats = stats;
    }

    static PgSetup start() {
      PostgresServer server = PostgresServer.start();
      try {
        String password = System.getenv(PASSWORD_ENV);
        try (Connection c = server.connect("postgres"); Statement st = c.createStatement()) {
          st.execute("CREATE ROLE " + PG_USER + " LOGIN SUPERUSER REPLICATION PASSWORD '" + password.replace("'", "''") + "'");
        }
        String db = server.createDatabase("bench");
        return new PgSetup(server, db, server.connect(db), server.connect(db));
      } catch (SQLException | RuntimeException e) {
        server.close();
        throw new IllegalStateException("Cannot prepare the benchmark's Postgres server: " + e.getMessage(), e);
      }
    }

    void closeWorkload() {
      try {
        workloadConnection.close();
      } catch (SQLException ignored) {
        // closing anyway
      }
      sleep(1500);
    }

    /** Waits (up to 60 s) until no walsender holds the benchmark's slot. */
    void awaitSlotInactive() {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (queryLong("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'cairn_bench' AND active") > 0
          && System.nanoTime() < deadline) {
        sleep(100);
      }
    }

    long currentWalLsn() {
      return queryLong("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint");
    }

    long slotRetainedWal() {
      return queryLong("SELECT COALESCE((SELECT (pg_current_wal_lsn() - restart_lsn)::bigint FROM pg_replication_slots"
          + " WHERE slot_name = 'cairn_bench'), -1)");
    }

    /** Transaction data the slot decoded (and sent), cumulative: {@code pg_stat_replication_slots.total_bytes}. */
    long slotDecodedBytes() {
      queryLong("SELECT 0 FROM pg_stat_clear_snapshot()");
      return queryLong("SELECT COALESCE((SELECT total_bytes FROM pg_stat_replication_slots WHERE slot_name = 'cairn_bench'), 0)");
    }

    /**
     * Moves the slot's confirmed position to {@code lsn} if it is behind it (the server then lets go
     * of the WAL before it); false when it was already there or past it.
     */
    boolean advanceSlot(long lsn) {
      long confirmed = queryLong("SELECT COALESCE((SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint FROM pg_replication_slots"
          + " WHERE slot_name = 'cairn_bench'), -1)");
      if (confirmed < 0 || confirmed >= lsn) {
        return false;
      }
      queryLong("SELECT 0 FROM pg_replication_slot_advance('cairn_bench', ('0/0'::pg_lsn + " + lsn + "::numeric))");
      return true;
    }

    long rowsScanned() {
      queryLong("SELECT 0 FROM pg_stat_clear_snapshot()");
      return queryLong("SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) FROM pg_stat_user_tables"
          + " WHERE relname = 'customers'");
    }

    private long queryLong(String sql) {
      try (Statement st = stats.createStatement(); ResultSet rs = st.executeQuery(sql)) {
        return rs.next() ? rs.getLong(1) : -1;
      } catch (SQLException e) {
        throw new IllegalStateException("Cannot query the benchmark's Postgres server: " + e.getMessage(), e);
      }
    }

    @Override
    public void close() {
      for (Connection c : new Connection[] {workloadConnection, stats}) {
        try {
          c.close();
        } catch (SQLException ignored) {
          // closing anyway
        }
      }
      server.close();
    }
  }
}
