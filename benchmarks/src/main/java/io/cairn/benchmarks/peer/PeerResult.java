package io.cairn.benchmarks.peer;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The Kafka Streams side of the peer comparison, serializable with Jackson.
 *
 * @param kafkaStreamsVersion the kafka-streams library version that ran
 * @param storeType RocksDB or in-memory stores
 * @param streamThreads {@code num.stream.threads}
 * @param commitIntervalMs {@code commit.interval.ms}
 * @param optimizeTopology whether {@code topology.optimization=all} was set
 * @param throughput processing the input from the beginning
 * @param restore the kill and restore
 * @param internalTopics the changelog and repartition topics after the restore
 * @param internalTopicConfigs the topic configs given for the internal topics (empty: broker defaults)
 */
public record PeerResult(
    String kafkaStreamsVersion,
    StoreType storeType,
    int streamThreads,
    long commitIntervalMs,
    boolean optimizeTopology,
    ThroughputMeasurement throughput,
    RestoreMeasurement restore,
    List<ChangelogTopic> internalTopics,
    Map<String, String> internalTopicConfigs) {

  public PeerResult {
    Objects.requireNonNull(storeType, "storeType");
    Objects.requireNonNull(throughput, "throughput");
    Objects.requireNonNull(restore, "restore");
    internalTopics = List.copyOf(Objects.requireNonNull(internalTopics, "internalTopics"));
    internalTopicConfigs = Map.copyOf(Objects.requireNonNull(internalTopicConfigs, "internalTopicConfigs"));
  }
}
