package io.cairn.benchmarks.loadonsource;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks that a run's figures agree with each other and with the workload: every strategy ends
 * with the oracle's views; Kafka records and bytes read on recovery are exactly those after the
 * snapshot's offsets (the whole topic for a full replay); Postgres rows delivered are the changes
 * after the snapshot (plus at most one re-delivered transaction) or, for a full replay, the
 * table's rows from an initial load; only a full replay scans the table. For a standby strategy
 * the Kafka figures standing by and at takeover add up to what follows the snapshot's offsets.
 */
public final class ConsistencyChecks {
  /** One check and its outcome. */
  public record Check(String strategy, String what, boolean passed, String detail) {}

  private ConsistencyChecks() {}

  public static List<Check> of(LoadOnSourceResult r) {
    List<Check> out = new ArrayList<>();
    for (StrategyResult s : r.strategies()) {
      out.add(new Check(s.name(), "views equal the oracle", s.viewsMatchOracle(), ""));
      if (s.isStandby()) {
        standby(s, out);
      } else {
        out.add(new Check(s.name(), "Kafka records read = records after the snapshot's offsets",
            s.kafkaRecords() == s.expectedKafkaRecords(), s.kafkaRecords() + " vs " + s.expectedKafkaRecords()));
        out.add(new Check(s.name(), "Kafka bytes read = bytes after the snapshot's offsets (ratio 1.00)",
            s.kafkaBytes() == s.expectedKafkaBytes(),
            String.format(Locale.ROOT, "%d vs %d (%.2f)", s.kafkaBytes(), s.expectedKafkaBytes(), s.kafkaByteRatio())));
      }
      if (r.config().postgres()) {
        if (s.fullReplay()) {
          out.add(new Check(s.name(), "Postgres rows delivered = table rows (initial load)",
              s.pgRecords() == s.expectedPgChanges(), s.pgRecords() + " vs " + s.expectedPgChanges()));
          out.add(new Check(s.name(), "initial load scanned at least the table's rows",
              s.pgRowsScanned() >= s.expectedPgChanges(), s.pgRowsScanned() + " vs " + s.expectedPgChanges()));
        } else {
          long max = s.expectedPgChanges() + r.config().transactionRows();
          out.add(new Check(s.name(), "Postgres rows delivered = changes after the snapshot (+ at most one re-delivered transaction)",
              s.pgRecords() >= s.expectedPgChanges() && s.pgRecords() <= max,
              s.pgRecords() + " vs " + s.expectedPgChanges() + ".." + max));
          out.add(new Check(s.name(), "no table scan when resuming from a snapshot", s.pgRowsScanned() == 0,
              "rows scanned " + s.pgRowsScanned()));
        }
      }
    }
    if (r.peer() != null) {
      out.add(new Check("peer", "cairn's view equals the oracle after recovery", r.peer().cairnMatchesOracle(), ""));
      out.add(new Check("peer", "Kafka Streams' aggregate equals the oracle after its restore", r.peer().peerMatchesOracle(), ""));
    }
    return out;
  }

  /**
   * A standby strategy: what it read standing by plus what its takeover read is exactly what follows
   * the snapshot's offsets (a warm standby reads nothing standing by; a hot one reads Kafka then,
   * and Postgres never, a slot having one reader); the load meter agrees with the status.
   */
  private static void standby(StrategyResult s, List<Check> out) {
    StandbyFigures f = s.standby();
    long records = f.standingByKafkaRecords() + s.kafkaRecords();
    long bytes = f.standingByKafkaBytes() + s.kafkaBytes();
    out.add(new Check(s.name(), "Kafka records read standing by + at takeover = records after the snapshot's offsets",
        records == s.expectedKafkaRecords(), f.standingByKafkaRecords() + " + " + s.kafkaRecords() + " vs " + s.expectedKafkaRecords()));
    out.add(new Check(s.name(), "Kafka bytes read standing by + at takeover = bytes after the snapshot's offsets",
        bytes == s.expectedKafkaBytes(), f.standingByKafkaBytes() + " + " + s.kafkaBytes() + " vs " + s.expectedKafkaBytes()));
    out.add(new Check(s.name(), "Kafka records read standing by: status = load meter",
        f.standingByKafkaRecords() == f.meteredKafkaRecordsBeforeTakeover(),
        f.standingByKafkaRecords() + " vs " + f.meteredKafkaRecordsBeforeTakeover()));
    if (!f.hot()) {
      out.add(new Check(s.name(), "a warm standby reads no source standing by", f.standingByKafkaRecords() == 0
          && f.standingByPgRecords() == 0, f.standingByKafkaRecords() + " Kafka records, " + f.standingByPgRecords() + " PG rows"));
    } else {
      out.add(new Check(s.name(), "a hot standby reads Postgres neither standing by nor ahead", f.standingByPgRecords() == 0
          && !f.pgReadAhead(), f.standingByPgRecords() + " PG rows, read ahead " + f.pgReadAhead()));
    }
  }

  public static boolean allPassed(LoadOnSourceResult r) {
    return of(r).stream().allMatch(Check::passed);
  }
}
