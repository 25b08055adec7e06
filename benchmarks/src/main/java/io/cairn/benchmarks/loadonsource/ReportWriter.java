package io.cairn.benchmarks.loadonsource;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.Styler;

/**
 * Writes a {@link LoadOnSourceResult} as {@code report.md}, a self-contained {@code report.html}
 * (charts as base64 PNGs), {@code results.json}, {@code results.csv} and the chart PNGs.
 */
public final class ReportWriter {
  public static final String MD = "report.md";
  public static final String HTML = "report.html";
  public static final String JSON = "results.json";
  public static final String CSV = "results.csv";

  private ReportWriter() {}

  /** Writes every output into {@code dir}; returns the chart file names written. */
  public static List<String> write(LoadOnSourceResult r, Path dir) {
    System.setProperty("java.awt.headless", "true");
    try {
      Files.createDirectories(dir);
      Map<String, byte[]> charts = charts(r);
      for (Map.Entry<String, byte[]> c : charts.entrySet()) {
        Files.write(dir.resolve(c.getKey()), c.getValue());
      }
      Files.writeString(dir.resolve(JSON), new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
          .writeValueAsString(r));
      Files.writeString(dir.resolve(CSV), csv(r));
      Files.writeString(dir.resolve(MD), markdown(r, charts.keySet()));
      Files.writeString(dir.resolve(HTML), html(r, charts));
      return new ArrayList<>(charts.keySet());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the benchmark report to " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Reads back a {@code results.json} that {@link #write} wrote: the run's figures, so that a report
   * can be written again (by a newer report writer) without running the benchmark again.
   */
  public static LoadOnSourceResult read(Path resultsJson) {
    try {
      ObjectMapper mapper = new ObjectMapper()
          .configure(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
      com.fasterxml.jackson.databind.JsonNode tree = mapper.readTree(resultsJson.toFile());
      for (com.fasterxml.jackson.databind.JsonNode s : tree.path("strategies")) {
        if (s.path("standby").isBoolean()) {
          // written before StrategyResult.isStandby was kept out of the file: it hid the standby figures
          ((com.fasterxml.jackson.databind.node.ObjectNode) s).remove("standby");
        }
      }
      return mapper.treeToValue(tree, LoadOnSourceResult.class);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot read the benchmark's figures from " + resultsJson + ": " + e.getMessage(), e);
    }
  }

  // ------------------------------------------------------------------ tables

  static final List<String> COLUMNS = List.of("strategy", "snapshot hour", "hours since snapshot", "recovery ms", "Node.recover ms", "load ms",
      "catch-up ms", "catch-up reading ms", "catch-up computing ms", "rows loaded", "Kafka records", "Kafka bytes", "Kafka bytes fetched", "Kafka fetch requests",
      "Kafka bytes ratio", "PG rows delivered", "PG rows scanned", "PG WAL decoded", "PG WAL needed", "store GETs",
      "store PUT/LIST", "store bytes read", "store cost USD", "snapshot bytes", "snapshot files", "snapshot upload ms",
      "snapshot pause µs", "snapshot PUTs", "snapshot cost USD", "views = oracle", "Kafka records standing by",
      "Kafka bytes standing by", "Kafka bytes fetched standing by", "PG rows standing by");

  static List<String> row(StrategyResult s) {
    return List.of(s.name(), s.snapshotHour() < 0 ? "-" : Integer.toString(s.snapshotHour()),
        s.hoursSinceSnapshot() < 0 ? "-" : fmt(s.hoursSinceSnapshot()), Long.toString(s.recoveryMillis()),
        Long.toString(s.nodeRecoverMillis()),
        Long.toString(s.loadMillis()), Long.toString(s.catchUpMillis()), Long.toString(s.catchUpReadingMillis()),
        Long.toString(s.catchUpComputingMillis()), Long.toString(s.rowsLoaded()),
        Long.toString(s.kafkaRecords()), Long.toString(s.kafkaBytes()), Long.toString(s.kafkaBytesFetched()),
        Long.toString(s.kafkaFetchRequests()), String.format(Locale.ROOT, "%.2f", s.kafkaByteRatio()),
        Long.toString(s.pgRecords()), Long.toString(s.pgRowsScanned()), Long.toString(s.pgWalBytesStreamed()),
        Long.toString(s.pgWalBytesNeeded()), Long.toString(s.storeGetRequests()), Long.toString(s.storeListAndPutRequests()),
        Long.toString(s.storeBytesRead()), String.format(Locale.ROOT, "%.6f", s.storeCostUsd()), Long.toString(s.snapshotBytes()),
        Integer.toString(s.snapshotFiles()), Long.toString(s.snapshotUploadMillis()), Long.toString(s.snapshotPauseMicros()),
        Long.toString(s.snapshotPutRequests()), String.format(Locale.ROOT, "%.6f", s.snapshotCostUsd()),
        Boolean.toString(s.viewsMatchOracle()), standby(s, StandbyFigures::standingByKafkaRecords),
        standby(s, StandbyFigures::standingByKafkaBytes), standby(s, StandbyFigures::standingByKafkaBytesFetched),
        standby(s, StandbyFigures::standingByPgRecords));
  }

  private static String standby(StrategyResult s, java.util.function.ToLongFunction<StandbyFigures> f) {
    return s.isStandby() ? Long.toString(f.applyAsLong(s.standby())) : "-";
  }

  private static String fmt(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : String.format(Locale.ROOT, "%.1f", d);
  }

  static String csv(LoadOnSourceResult r) {
    StringBuilder sb = new StringBuilder(String.join(",", COLUMNS)).append('\n');
    for (StrategyResult s : r.strategies()) {
      sb.append(String.join(",", row(s))).append('\n');
    }
    return sb.toString();
  }

  /** The targets of the peer comparison: name, target, measured, met. */
  record Target(String name, String target, String measured, boolean met) {}

  static List<Target> targets(LoadOnSourceResult r) {
    List<Target> t = new ArrayList<>();
    double worstRatio = r.strategies().stream().filter(s -> !s.fullReplay() && !s.isStandby()).mapToDouble(StrategyResult::kafkaByteRatio)
        .map(x -> Math.abs(x - 1.0)).max().orElse(0);
    double ratio = r.strategies().stream().filter(s -> !s.fullReplay() && !s.isStandby()).mapToDouble(StrategyResult::kafkaByteRatio)
        .filter(x -> Math.abs(x - 1.0) == worstRatio).findFirst().orElse(1.0);
    t.add(new Target("Kafka bytes re-read on recovery / bytes after the snapshot's offsets", "1.00",
        String.format(Locale.ROOT, "%.2f (worst of %d snapshot strategies)", ratio,
            r.strategies().stream().filter(s -> !s.fullReplay() && !s.isStandby()).count()), Math.abs(ratio - 1.0) < 0.005));
    StrategyResult full = r.strategies().stream().filter(StrategyResult::fullReplay).findFirst().orElse(null);
    StrategyResult daily = r.strategies().stream().filter(s -> s.name().equals("daily")).findFirst().orElse(null);
    if (full != null && daily != null) {
      double speedup = full.recoveryMillis() / (double) Math.max(1, daily.recoveryMillis());
      if (r.config().hours() >= 48) {
        t.add(new Target(String.format(Locale.ROOT, "recovery from the day-old snapshot vs full replay of %.0f days",
            (r.config().hours() + 0.5) / 24), "≥ 20×", String.format(Locale.ROOT, "%.1f× (%d ms vs %d ms)", speedup,
            daily.recoveryMillis(), full.recoveryMillis()), speedup >= 20));
      }
      double fullRate = perMillis(full.kafkaRecords() + Math.max(0, full.pgRecords()), full.catchUpMillis());
      double dailyRate = perMillis(daily.kafkaRecords() + Math.max(0, daily.pgRecords()), daily.catchUpMillis());
      t.add(new Target("catch-up after a restore ÷ full replay, records/s", "≥ 1.0", String.format(Locale.ROOT,
          "%.2f (%,.0f vs %,.0f records/s)", dailyRate / Math.max(1e-9, fullRate), dailyRate * 1000, fullRate * 1000),
          dailyRate >= fullRate));
    }
    AdviceApplied a = r.advice();
    if (a != null && (a.strategy() != null || a.cron() == null)) { // a schedule the history has no snapshot for: a note says so
      t.add(new Target(String.format(Locale.ROOT, "`cairn advise` for %,d s, applied: recovery at the recommended schedule's"
          + " worst case", a.targetMillis() / 1000), String.format(Locale.ROOT, "≤ %,d ms", a.targetMillis()), a.measuredMillis() < 0
          ? "no schedule recommended" : String.format(Locale.ROOT, "%,d ms (`%s`, every %s, snapshot %.1f h old; predicted %,d ms)",
              a.measuredMillis(), a.cron(), io.cairn.node.advise.Advisor.human(java.time.Duration.ofMillis(a.intervalMillis())),
              a.hoursSinceSnapshot(), a.predictedWorstMillis()), a.withinTarget()));
    }
    if (r.peer() != null) {
      PeerComparison p = r.peer();
      t.add(new Target("recovery speed-up vs Kafka Streams changelog restore", "≥ 5×",
          String.format(Locale.ROOT, "%.1f× (%d ms vs %d ms)", p.recoverySpeedup(), p.cairnRecoveryMillis(),
              p.peer().restore().restoreMillis()), p.recoverySpeedup() >= 5));
      t.add(new Target("full replay (ingest from the beginning) vs Kafka Streams, records/s", "≥ 10×",
          String.format(Locale.ROOT, "%.2f× (%,.0f vs %,.0f records/s)", p.throughputRatio(), p.cairnThroughputRecordsPerSecond(),
              p.peer().throughput().recordsPerSecond()), p.throughputRatio() >= 10));
    }
    return t;
  }

  private static double perMillis(long records, long millis) {
    return records / (double) Math.max(1, millis);
  }

  // ------------------------------------------------------------------ markdown

  static String markdown(LoadOnSourceResult r, Iterable<String> chartFiles) {
    StringBuilder sb = new StringBuilder();
    LoadOnSourceConfig c = r.config();
    sb.append("# cairn load-on-source benchmark\n\n");
    sb.append("Command: `").append(r.command()).append("`  \nStarted: ").append(r.startedAt())
        .append(String.format(Locale.ROOT, "; total %.1f s (history ingested in %.1f s)%n%n", r.totalMillis() / 1000.0,
            r.ingestMillis() / 1000.0));
    sb.append("Machine: ");
    new java.util.TreeMap<>(r.machine()).forEach((k, v) -> sb.append(k).append(" `").append(v).append("`; "));
    sb.append("\n\n## Scenario\n\n");
    sb.append(String.format(Locale.ROOT,
        "Midnight: a keyed Kafka topic of %,d order records (%d partitions, %,d order ids, upserts and tombstones)%s. "
            + "Then %d simulated hours of %,d Kafka records%s each, half an hour more, and a crash. "
            + "Views: orders per customer (COUNT, SUM)%s. At the crash: %,d records in the topic%s.%n%n",
        c.initialOrders(), c.partitions(), c.orderKeys(),
        c.postgres() ? String.format(Locale.ROOT, " and a Postgres table of %,d customers (Debezium CDC)", c.initialCustomers()) : "",
        c.hours(), c.ordersPerHour(),
        c.postgres() ? String.format(Locale.ROOT, " and %,d customer row changes (in transactions of %d)", c.customerChangesPerHour(),
            c.transactionRows()) : "",
        (c.postgres() ? ", orders per customer region (join of the topic with the table, aggregated)" : "")
            + (c.orderHistory() && c.postgres() ? " and order history per customer region (the topic read a second time,"
                + " append-only, as source `order_events`: every order record ever written, its tombstones skipped; joined"
                + " with the table and aggregated, so the join's state holds the whole history). Kafka figures add both"
                + " sources' reading of the topic" : ""),
        r.kafkaRecordsInTopic(),
        c.postgres() ? String.format(Locale.ROOT, ", %,d rows in the table after %,d changes, %,d WAL bytes retained by the slot",
            r.pgRowsAtCrash(), r.pgChanges(), r.pgWalRetainedAtCrash()) : ""));
    sb.append("Strategies: `full-replay` (no snapshot: Kafka from the beginning, Postgres initial load), `daily` (snapshot"
        + " at the last midnight, a day before the crash), `hourly` (snapshot at the last full hour), `right-after` (restart right after a snapshot), and"
        + " `snapshot-hNN` (extra points for the curve)"
        + (r.strategies().stream().anyMatch(StrategyResult::isStandby) ? "; `warm-standby` and `hot-standby`: on a copy of the"
            + " daily snapshot's store, an owner and a standby of that mode in a group (both in this JVM), the owner stopped"
            + " cleanly once the standby served, the standby taking over" : "")
        + ". Each snapshot was written into a store of its own; each"
        + " recovery is `Node.recover` on that store wrapped in a `MeteredObjectStore` (S3 prices, us-east-1)"
        + (c.repeats() > 1 ? "; each strategy was recovered " + c.repeats() + " times and the run with the median wall time is shown" : "")
        + ".\n\n");
    sb.append("## Results per strategy\n\n");
    List<String> brief = List.of("strategy", "hours since snapshot", "recovery ms", "Node.recover ms", "load ms", "catch-up ms",
        "catch-up reading ms", "catch-up computing ms", "Kafka records",
        "Kafka bytes", "Kafka fetch requests", "Kafka records standing by", "Kafka bytes standing by", "PG rows delivered", "PG rows scanned", "PG WAL decoded", "PG WAL needed",
        "store GETs", "store bytes read", "store cost USD", "snapshot bytes", "snapshot upload ms", "views = oracle");
    sb.append('|').append(String.join("|", brief)).append("|\n|");
    brief.forEach(x -> sb.append("---|"));
    sb.append('\n');
    for (StrategyResult s : r.strategies()) {
      List<String> all = row(s);
      sb.append('|');
      for (String col : brief) {
        sb.append(all.get(COLUMNS.indexOf(col))).append('|');
      }
      sb.append('\n');
    }
    sb.append("\nAll columns are in `results.csv` / `results.json`. PG WAL needed = WAL written between the snapshot and the"
        + " crash: what the slot must retain for that strategy."
        + (r.strategies().stream().anyMatch(StrategyResult::isStandby) ? " For `warm-standby` and `hot-standby` the recovery"
            + " figures are the takeover's (recovery ms: from the start of the owner's clean close until the standby's views"
            + " equal the oracle; source figures: what the takeover read; store figures: the standby's whole life), and"
            + " \"standing by\" is what the standby read before it." : "")
        + "\n\n");
    availability(r, sb);
    sourceRequirements(r, sb);
    sb.append("## Targets\n\n|target|goal|measured|met?|\n|---|---|---|---|\n");
    for (Target t : targets(r)) {
      sb.append('|').append(t.name()).append('|').append(t.target()).append('|').append(t.measured()).append('|')
          .append(t.met() ? "**met**" : "**missed**").append("|\n");
    }
    if (r.peer() != null) {
      PeerComparison p = r.peer();
      var pr = p.peer();
      sb.append("\n## Peer: Kafka Streams on the same topic and aggregation\n\n");
      sb.append("|figure|cairn|Kafka Streams ").append(pr.kafkaStreamsVersion()).append(" (").append(pr.storeType())
          .append(", ").append(pr.streamThreads()).append(" threads)|\n|---|---|---|\n");
      sb.append(String.format(Locale.ROOT, "|process the topic from the beginning (%,d records)|%,d ms, %,.0f records/s|%,d ms (incl. %,d ms start-up), %,.0f records/s|%n",
          p.inputRecords(), p.cairnIngestMillis(), p.cairnThroughputRecordsPerSecond(), pr.throughput().elapsedMillis(),
          pr.throughput().startupMillis(), pr.throughput().recordsPerSecond()));
      sb.append(String.format(Locale.ROOT, "|recover after a kill at the end of the input|%,d ms (from a snapshot taken in %,d ms)|%,d ms (changelog restore, local state wiped)|%n",
          p.cairnRecoveryMillis(), p.cairnSnapshotMillis(), pr.restore().restoreMillis()));
      sb.append(String.format(Locale.ROOT, "|Kafka bytes read to recover|%,d|%,d (restore %,d + main %,d)|%n",
          p.cairnRecoveryKafkaBytes(), pr.restore().totalBytesRead(), pr.restore().restoreConsumerBytes(),
          pr.restore().mainConsumerBytes()));
      sb.append(String.format(Locale.ROOT, "|other bytes read to recover|%,d from the object store|-|%n", p.cairnRecoveryStoreBytes()));
      sb.append(String.format(Locale.ROOT, "|result equals the oracle after recovery|%s|%s|%n", p.cairnMatchesOracle(),
          p.peerMatchesOracle()));
    }
    if (r.advice() != null) {
      sb.append("\n## `cairn advise`, applied\n\nAsked of the node recovered from the daily snapshot, at the scenario's live"
          + " ingest (simulated hours: the history runs faster than the clock, so the rates the node measured are stated"
          + " instead); every other figure is the node's own, measured at that recovery. Then the snapshot as old as the"
          + " recommended schedule leaves it at worst (its interval plus half an hour) was recovered and timed.\n\n```\n")
          .append(r.advice().adviceText().strip()).append("\n```\n");
    }
    sb.append("\n## Consistency checks\n\n");
    List<ConsistencyChecks.Check> checks = ConsistencyChecks.of(r);
    long failed = checks.stream().filter(x -> !x.passed()).count();
    sb.append(failed == 0 ? "All " + checks.size() + " checks passed.\n" : failed + " of " + checks.size() + " checks FAILED:\n");
    for (ConsistencyChecks.Check x : checks) {
      if (!x.passed()) {
        sb.append("- FAILED ").append(x.strategy()).append(": ").append(x.what()).append(" — ").append(x.detail()).append('\n');
      }
    }
    if (!r.notes().isEmpty()) {
      sb.append("\n## Notes\n\n");
      r.notes().forEach(n -> sb.append("- ").append(n).append('\n'));
    }
    sb.append("\n## Charts\n\n");
    for (String f : chartFiles) {
      sb.append("![").append(f).append("](").append(f).append(")\n\n");
    }
    return sb.toString();
  }

  /**
   * The seed discussion's questions — set up a read replica for Debezium to hammer, build snapshots
   * in-house, or keep Kafka logs forever; and what cairn requires of the systems of record — answered
   * per strategy from this run's measured figures: the Kafka retention and Postgres WAL each needs,
   * its recovery time, the load it puts on each source, and the storage it costs. The read-replica
   * row is derived from the full replay's figures (it is not run; the text says why).
   */
  static void sourceRequirements(LoadOnSourceResult r, StringBuilder sb) {
    StrategyResult full = r.strategies().stream().filter(StrategyResult::fullReplay).findFirst().orElse(null);
    if (full == null) {
      return;
    }
    boolean pg = r.config().postgres();
    int readers = r.config().orderHistory() && pg ? 2 : 1;
    long topicBytes = full.expectedKafkaBytes() / readers;
    double historyHours = r.config().hours() + 0.5;
    sb.append("## What each strategy requires of the sources\n\n");
    sb.append("The seed discussion asks whether to keep Kafka logs forever, set up a read replica for Debezium to"
        + " hammer, or build snapshots in-house, and what cairn requires of the systems of record. From this run's"
        + " figures:\n\n");
    sb.append("|strategy|Kafka retention needed|Postgres WAL needed|recovery ms|Kafka bytes read|")
        .append(pg ? "PG rows scanned on the primary|PG WAL decoded|" : "")
        .append("storage: Kafka log kept|storage: object store|\n|");
    for (int i = 0; i < (pg ? 9 : 7); i++) {
      sb.append("---|");
    }
    sb.append('\n');
    sb.append(String.format(Locale.ROOT, "|keep Kafka logs forever (`full-replay`)|all of it (%.1f h here, growing)|%s|%,d|%,d|",
        historyHours, pg ? "none (a new slot; the table is scanned)" : "-", full.recoveryMillis(), full.kafkaBytes()));
    if (pg) {
      sb.append(String.format(Locale.ROOT, "%,d|%,d|", full.pgRowsScanned(), full.pgWalBytesStreamed()));
    }
    sb.append(String.format(Locale.ROOT, "%,d B (every record ever written)|0|%n", topicBytes));
    if (pg) {
      sb.append(String.format(Locale.ROOT, "|full replay, table scanned on a read replica (derived, not run)|all of it|none on"
          + " the replica; the slot stays on the primary|≈ %,d|%,d|0 (%,d on the replica)|%,d|%,d B + a replica of the"
          + " database|0|%n", full.recoveryMillis(), full.kafkaBytes(), full.pgRowsScanned(), full.pgWalBytesStreamed(), topicBytes));
    }
    for (StrategyResult s : r.strategies()) {
      if (s.fullReplay() || s.isStandby() || s.snapshotHour() < 0) {
        continue;
      }
      sb.append(String.format(Locale.ROOT, "|snapshot, restart %.1f h after it (`%s`)|≥ %.1f h (× snapshots kept, for a"
          + " fallback)|%s|%,d|%,d|", s.hoursSinceSnapshot(), s.name(), s.hoursSinceSnapshot(),
          pg ? String.format(Locale.ROOT, "%,d B", s.pgWalBytesNeeded()) : "-", s.recoveryMillis(), s.kafkaBytes()));
      if (pg) {
        sb.append(String.format(Locale.ROOT, "%,d|%,d|", s.pgRowsScanned(), s.pgWalBytesStreamed()));
      }
      sb.append(String.format(Locale.ROOT, "%,d B (the records after the snapshot)|%,d B a snapshot|%n",
          s.expectedKafkaBytes() / readers, s.snapshotBytes()));
    }
    sb.append("\nWhat cairn requires of the systems of record, from these figures:\n\n");
    sb.append("- **Kafka** keeps every record written since the oldest snapshot cairn may fall back to: the interval times"
        + " the snapshots kept, plus the time a snapshot takes. `cairn advise --target-recovery D` computes the schedule for"
        + " a recovery target and checks each topic's `retention.ms`. Keeping the log forever is needed only for a full"
        + " replay, and its recovery grows with the history; a snapshot's does not.\n");
    if (pg) {
      sb.append("- **PostgreSQL** keeps a logical replication slot (`wal_level = logical`) whose WAL is released when a"
          + " snapshot commits, so it retains about one interval of the cluster's WAL (`PG WAL needed` above);"
          + " `max_slot_wal_keep_size` must exceed it, which `cairn advise` checks. A snapshot recovery scans no table"
          + " rows; a full replay scans the whole table on the primary.\n");
      sb.append("- **A read replica** can take a full replay's table scan off the primary, but on PostgreSQL 15 it"
          + " cannot serve the change stream (logical decoding on a standby needs PostgreSQL 16), and Debezium reads its"
          + " initial snapshot and its stream from one server: cairn does not split them, so that row is derived from the"
          + " full replay (same records, the scan moved). A snapshot strategy needs no replica: it scans nothing.\n");
    }
    sb.append('\n');
  }

  /**
   * "What availability costs the sources": per strategy, the time until fresh views and what was
   * read from each source standing by (per day of the workload) and at the takeover or recovery,
   * then a paragraph from the figures. Nothing when no standby strategy ran.
   */
  static void availability(LoadOnSourceResult r, StringBuilder sb) {
    List<StrategyResult> standbys = r.strategies().stream().filter(StrategyResult::isStandby).toList();
    if (standbys.isEmpty()) {
      return;
    }
    boolean pg = r.config().postgres();
    sb.append("## What availability costs the sources\n\n");
    sb.append("|strategy|until fresh views, ms|Kafka records standing by|Kafka bytes standing by (fetched)|per day of the workload: Kafka records / bytes")
        .append(pg ? "|PG rows standing by" : "").append("|Kafka records at takeover / recovery|Kafka bytes at takeover / recovery")
        .append(pg ? "|PG rows at takeover / recovery|PG WAL decoded at takeover / recovery|PG rows scanned" : "").append("|\n|");
    for (int i = 0; i < (pg ? 11 : 7); i++) {
      sb.append("---|");
    }
    sb.append('\n');
    List<StrategyResult> rows = new ArrayList<>();
    r.strategies().stream().filter(s -> s.fullReplay() || s.name().equals("daily")).forEach(rows::add);
    rows.addAll(standbys);
    for (StrategyResult s : rows) {
      StandbyFigures f = s.standby();
      double perDay = s.hoursSinceSnapshot() > 0 ? 24.0 / s.hoursSinceSnapshot() : 0;
      sb.append('|').append(s.name()).append('|').append(String.format(Locale.ROOT, "%,d", s.recoveryMillis())).append('|');
      if (f == null) {
        sb.append("-|-|-|");
      } else {
        sb.append(String.format(Locale.ROOT, "%,d|%,d (%,d)|%,.0f / %,.0f|", f.standingByKafkaRecords(), f.standingByKafkaBytes(),
            f.standingByKafkaBytesFetched(), f.standingByKafkaRecords() * perDay, f.standingByKafkaBytes() * perDay));
      }
      if (pg) {
        sb.append(f == null ? "-" : String.format(Locale.ROOT, "%,d", f.standingByPgRecords())).append('|');
      }
      sb.append(String.format(Locale.ROOT, "%,d|%,d|", s.kafkaRecords(), s.kafkaBytes()));
      if (pg) {
        sb.append(String.format(Locale.ROOT, "%,d|%,d|%,d|", s.pgRecords(), s.pgWalBytesStreamed(), s.pgRowsScanned()));
      }
      sb.append('\n');
    }
    StrategyResult hot = standbys.stream().filter(s -> s.standby().hot()).findFirst().orElse(null);
    StrategyResult warm = standbys.stream().filter(s -> !s.standby().hot()).findFirst().orElse(null);
    StrategyResult daily = r.strategies().stream().filter(s -> s.name().equals("daily")).findFirst().orElse(null);
    StrategyResult full = r.strategies().stream().filter(StrategyResult::fullReplay).findFirst().orElse(null);
    sb.append('\n');
    if (hot != null) {
      StandbyFigures f = hot.standby();
      double perDay = 24.0 / Math.max(1e-9, hot.hoursSinceSnapshot());
      sb.append(String.format(Locale.ROOT, "A hot standby reads Kafka as the owner does: standing by, it read %,d records"
          + " (%,d bytes; %,d fetched in %,d requests) over the %s simulated hours since the snapshot it loaded — %,.0f records,"
          + " %,.0f bytes per day of this workload, the topic's whole traffic once more for each hot standby (%.2f× what"
          + " the owner reads). Its steady state is the same: it reads each record as it arrives, and re-reads from each"
          + " snapshot the owner commits only what arrived between that snapshot and its load (within the %s refresh).",
          f.standingByKafkaRecords(), f.standingByKafkaBytes(), f.standingByKafkaBytesFetched(), f.standingByKafkaFetchRequests(),
          fmt(hot.hoursSinceSnapshot()), f.standingByKafkaRecords() * perDay, f.standingByKafkaBytes() * perDay,
          f.standingByKafkaBytes() / (double) Math.max(1, hot.expectedKafkaBytes()), "1 s"));
      if (pg) {
        sb.append(String.format(Locale.ROOT, " It reads no Postgres while standing by (%,d rows; a replication slot has one"
            + " reader, the owner's), so it adds no load there — and its takeover still resumes the slot from the newest"
            + " snapshot's LSN: %,d rows delivered, %,d bytes of WAL decoded, as many rows as a recovery from that snapshot"
            + "%s.", f.standingByPgRecords(), hot.pgRecords(), hot.pgWalBytesStreamed(),
            daily == null ? "" : String.format(Locale.ROOT, " (daily: %,d rows)", daily.pgRecords())));
      }
      sb.append(String.format(Locale.ROOT, " What it buys: fresh views %,d ms after the owner began a clean stop (its"
          + " takeover read %,d Kafka records)", hot.recoveryMillis(), hot.kafkaRecords()));
      if (daily != null) {
        sb.append(String.format(Locale.ROOT, ", against %,d ms to recover from the daily snapshot", daily.recoveryMillis()));
      }
      if (full != null) {
        sb.append(String.format(Locale.ROOT, " and %,d ms for a full replay", full.recoveryMillis()));
      }
      sb.append('.');
    }
    if (warm != null) {
      sb.append(String.format(Locale.ROOT, " A warm standby reads no source while standing by (%,d Kafka records) and"
          + " takes over in %,d ms, reading at takeover what a recovery from its snapshot reads (%,d Kafka records%s) but"
          + " not loading the snapshot again.", warm.standby().standingByKafkaRecords(), warm.recoveryMillis(), warm.kafkaRecords(),
          pg ? String.format(Locale.ROOT, ", %,d Postgres rows", warm.pgRecords()) : ""));
    }
    sb.append(" The owner was stopped cleanly, so it left the group at once; an owner killed outright is noticed only after"
        + " the group's session timeout (6 s here), which adds to every standby's takeover.\n\n");
  }

  // ------------------------------------------------------------------ html

  static String html(LoadOnSourceResult r, Map<String, byte[]> charts) {
    String md = markdown(r, List.of());
    StringBuilder sb = new StringBuilder();
    sb.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>cairn load-on-source benchmark</title><style>")
        .append("body{font-family:sans-serif;max-width:1200px;margin:2em auto}table{border-collapse:collapse;font-size:13px}")
        .append("td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}code{background:#f4f4f4}</style></head><body>\n");
    boolean inTable = false;
    boolean inList = false;
    for (String line : md.split("\n")) {
      if (line.startsWith("|")) {
        if (line.startsWith("|---")) {
          continue;
        }
        if (!inTable) {
          sb.append("<table>\n");
          inTable = true;
        }
        sb.append("<tr>");
        for (String cell : line.substring(1, line.length() - 1).split("\\|", -1)) {
          sb.append("<td>").append(inline(cell)).append("</td>");
        }
        sb.append("</tr>\n");
        continue;
      }
      if (inTable) {
        sb.append("</table>\n");
        inTable = false;
      }
      if (line.startsWith("- ")) {
        if (!inList) {
          sb.append("<ul>\n");
          inList = true;
        }
        sb.append("<li>").append(inline(line.substring(2))).append("</li>\n");
        continue;
      }
      if (inList) {
        sb.append("</ul>\n");
        inList = false;
      }
      if (line.startsWith("## ")) {
        sb.append("<h2>").append(inline(line.substring(3))).append("</h2>\n");
      } else if (line.startsWith("# ")) {
        sb.append("<h1>").append(inline(line.substring(2))).append("</h1>\n");
      } else if (!line.isBlank()) {
        sb.append("<p>").append(inline(line)).append("</p>\n");
      }
    }
    if (inTable) {
      sb.append("</table>\n");
    }
    if (inList) {
      sb.append("</ul>\n");
    }
    for (Map.Entry<String, byte[]> c : charts.entrySet()) {
      sb.append("<p><img alt=\"").append(c.getKey()).append("\" src=\"data:image/png;base64,")
          .append(Base64.getEncoder().encodeToString(c.getValue())).append("\"></p>\n");
    }
    return sb.append("</body></html>\n").toString();
  }

  private static String inline(String s) {
    String e = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    e = e.replaceAll("\\*\\*([^*]+)\\*\\*", "<b>$1</b>").replaceAll("`([^`]+)`", "<code>$1</code>");
    return e.replace("  ", "<br>");
  }

  // ------------------------------------------------------------------ charts

  static Map<String, byte[]> charts(LoadOnSourceResult r) throws IOException {
    Map<String, byte[]> out = new LinkedHashMap<>();
    List<String> names = r.strategies().stream().map(StrategyResult::name).toList();

    CategoryChart time = new CategoryChartBuilder().width(900).height(450).title("Recovery wall time per strategy")
        .xAxisTitle("strategy").yAxisTitle("ms").build();
    time.getStyler().setStacked(true);
    time.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    time.addSeries("load snapshot", names, r.strategies().stream().map(s -> (Number) s.loadMillis()).toList());
    time.addSeries("catch up", names, r.strategies().stream().map(s -> (Number) s.catchUpMillis()).toList());
    time.addSeries("other (open, catalog)", names,
        r.strategies().stream().map(s -> (Number) Math.max(0, s.recoveryMillis() - s.loadMillis() - s.catchUpMillis())).toList());
    out.put("recovery-time.png", png(time));

    CategoryChart load = new CategoryChartBuilder().width(900).height(450).title("Source load per strategy (records / rows)")
        .xAxisTitle("strategy").yAxisTitle("records").build();
    load.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    load.addSeries("Kafka records read", names, r.strategies().stream().map(s -> (Number) s.kafkaRecords()).toList());
    if (r.strategies().stream().anyMatch(StrategyResult::isStandby)) {
      load.addSeries("Kafka records read standing by", names, r.strategies().stream()
          .map(s -> (Number) (s.isStandby() ? s.standby().standingByKafkaRecords() : 0L)).toList());
    }
    if (r.config().postgres()) {
      load.addSeries("Postgres rows delivered", names, r.strategies().stream().map(s -> (Number) s.pgRecords()).toList());
      load.addSeries("Postgres rows scanned", names, r.strategies().stream().map(s -> (Number) Math.max(0, s.pgRowsScanned())).toList());
    }
    out.put("source-load-records.png", png(load));

    CategoryChart bytes = new CategoryChartBuilder().width(900).height(450).title("Bytes read per strategy")
        .xAxisTitle("strategy").yAxisTitle("KiB").build();
    bytes.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
    bytes.addSeries("Kafka (fetched)", names, r.strategies().stream().map(s -> (Number) (s.kafkaBytesFetched() / 1024.0)).toList());
    if (r.config().postgres()) {
      bytes.addSeries("Postgres WAL decoded (pg_stat_replication_slots)", names,
          r.strategies().stream().map(s -> (Number) (Math.max(0, s.pgWalBytesStreamed()) / 1024.0)).toList());
    }
    bytes.addSeries("object store", names, r.strategies().stream().map(s -> (Number) (s.storeBytesRead() / 1024.0)).toList());
    out.put("source-load-bytes.png", png(bytes));

    List<StrategyResult> curve = r.strategies().stream().filter(s -> !s.fullReplay() && !s.isStandby())
        .sorted((a, b) -> Double.compare(a.hoursSinceSnapshot(), b.hoursSinceSnapshot())).toList();
    List<Double> x = curve.stream().map(StrategyResult::hoursSinceSnapshot).toList();
    XYChart growT = new XYChartBuilder().width(900).height(450).title("Recovery time vs hours since the snapshot")
        .xAxisTitle("simulated hours since the snapshot").yAxisTitle("ms").build();
    growT.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    growT.addSeries("recovery", x, curve.stream().map(s -> (double) s.recoveryMillis()).toList());
    growT.addSeries("catch-up", x, curve.stream().map(s -> (double) s.catchUpMillis()).toList());
    out.put("growth-time.png", png(growT));

    XYChart growL = new XYChartBuilder().width(900).height(450).title("Source load vs hours since the snapshot")
        .xAxisTitle("simulated hours since the snapshot").yAxisTitle("records / rows / KiB").build();
    growL.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    growL.addSeries("Kafka records read", x, curve.stream().map(s -> (double) s.kafkaRecords()).toList());
    if (r.config().postgres()) {
      growL.addSeries("Postgres rows delivered", x, curve.stream().map(s -> (double) s.pgRecords()).toList());
      growL.addSeries("Postgres WAL needed (KiB)", x, curve.stream().map(s -> Math.max(0, s.pgWalBytesNeeded()) / 1024.0).toList());
    }
    out.put("growth-load.png", png(growL));

    if (r.peer() != null) {
      PeerComparison p = r.peer();
      CategoryChart peer = new CategoryChartBuilder().width(900).height(450).title("Recovery after a kill: cairn vs Kafka Streams")
          .xAxisTitle("").yAxisTitle("ms").build();
      peer.getStyler().setLegendVisible(false);
      peer.addSeries("recovery", List.of("cairn (snapshot)", "Kafka Streams (changelog restore)"),
          List.of((Number) p.cairnRecoveryMillis(), (Number) p.peer().restore().restoreMillis()));
      out.put("peer-recovery.png", png(peer));
    }
    return out;
  }

  private static byte[] png(Chart<?, ?> chart) throws IOException {
    return BitmapEncoder.getBitmapBytes(chart, BitmapEncoder.BitmapFormat.PNG);
  }
}
