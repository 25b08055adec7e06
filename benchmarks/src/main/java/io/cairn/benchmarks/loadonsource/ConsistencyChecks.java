package io.cairn.benchmarks.loadonsource;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Checks that a run's figures agree with each other and with the workload: every strategy ends
 * with the oracle's views; Kafka records and bytes read on recovery are exactly those after the
 * snapshot's offsets (the whole topic for a full replay); Postgres rows delivered are the changes
 * after the snapshot (plus at most one re-delivered transaction) or, for a full replay, the
 * table's rows from an initial load; only a full replay scans the table.
 */
public final class ConsistencyChecks {
  /** One check and its outcome. */
  public record Check(String strategy, String what, boolean passed, String detail) {}

  private ConsistencyChecks() {}

  public static List<Check> of(LoadOnSourceResult r) {
    List<Check> out = new ArrayList<>();
    for (StrategyResult s : r.strategies()) {
      out.add(new Check(s.name(), "views equal the oracle", s.viewsMatchOracle(), ""));
      out.add(new Check(s.name(), "Kafka records read = records after the snapshot's offsets",
          s.kafkaRecords() == s.expectedKafkaRecords(), s.kafkaRecords() + " vs " + s.expectedKafkaRecords()));
      out.add(new Check(s.name(), "Kafka bytes read = bytes after the snapshot's offsets (ratio 1.00)",
          s.kafkaBytes() == s.expectedKafkaBytes(),
          String.format(Locale.ROOT, "%d vs %d (%.2f)", s.kafkaBytes(), s.expectedKafkaBytes(), s.kafkaByteRatio())));
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

  public static boolean allPassed(LoadOnSourceResult r) {
    return of(r).stream().allMatch(Check::passed);
  }
}
