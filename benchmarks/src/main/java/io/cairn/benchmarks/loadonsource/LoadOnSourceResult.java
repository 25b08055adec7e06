package io.cairn.benchmarks.loadonsource;

import java.util.List;
import java.util.Map;

/**
 * Everything one load-on-source run measured.
 *
 * @param config the run's size
 * @param machine where it ran (OS, CPUs, JVM, heap)
 * @param command the command line that reproduces it
 * @param startedAt ISO instant
 * @param totalMillis wall time of the whole run
 * @param ingestMillis wall time of ingesting the history (with the snapshots)
 * @param kafkaRecordsInTopic records in the topic at the crash
 * @param pgRowsAtCrash rows in the table at the crash
 * @param pgChanges row changes made after midnight
 * @param pgWalRetainedAtCrash WAL the slot retained at the crash (never confirmed during the history)
 * @param strategies one entry per strategy, full replay first
 * @param peer the Kafka Streams comparison, or null when not run
 * @param advice {@code cairn advise} applied (see {@link LoadOnSourceConfig#adviseTarget}), or null
 * @param notes caveats worth reading next to the figures
 */
public record LoadOnSourceResult(
    LoadOnSourceConfig config,
    Map<String, String> machine,
    String command,
    String startedAt,
    long totalMillis,
    long ingestMillis,
    long kafkaRecordsInTopic,
    long pgRowsAtCrash,
    long pgChanges,
    long pgWalRetainedAtCrash,
    List<StrategyResult> strategies,
    PeerComparison peer,
    AdviceApplied advice,
    List<String> notes) {

  public LoadOnSourceResult {
    machine = Map.copyOf(machine);
    strategies = List.copyOf(strategies);
    notes = List.copyOf(notes);
  }

  public StrategyResult strategy(String name) {
    return strategies.stream().filter(s -> s.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("No strategy named '" + name + "'"));
  }
}
