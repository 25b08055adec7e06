package io.cairn.benchmarks.peer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * How to run the Kafka Streams peer.
 *
 * @param bootstrapServers Kafka brokers, {@code host:port[,host:port…]}
 * @param inputTopic the topic of JSON upsert records (key {@code {"id":…}}, value
 *     {@code {"id":…,"customer":…,"amount":…}} or a null tombstone)
 * @param applicationId Kafka Streams' {@code application.id}: consumer group and prefix of the
 *     internal topics; a fresh one per measurement, or the changelogs of an earlier run are reused
 * @param stateDir parent of the local state directory, or null for a temporary directory deleted by
 *     {@link KafkaStreamsPeer#close()}
 * @param storeType RocksDB (Kafka Streams' default) or in-memory stores
 * @param streamThreads {@code num.stream.threads}
 * @param commitInterval {@code commit.interval.ms}. Also the granularity at which the peer sees
 *     that the input has been processed (it watches the group's committed offsets)
 * @param optimizeTopology {@code topology.optimization=all}: the source table then uses the input
 *     topic as its changelog instead of a {@code -changelog} topic of its own (a restore then reads
 *     the input topic; {@link RestoreMeasurement#changelogsAtKill()} lists only {@code -changelog}
 *     topics, and this mode is not covered by a test)
 * @param timeout the longest any single wait (processing, restore, shutdown) may take
 * @param internalTopicConfigs topic configs for the internal topics Kafka Streams creates
 *     (changelogs and repartition topic), e.g. {@code segment.bytes} and
 *     {@code min.cleanable.dirty.ratio} so that the broker compacts changelogs during a short run
 */
public record PeerConfig(
    String bootstrapServers,
    String inputTopic,
    String applicationId,
    Path stateDir,
    StoreType storeType,
    int streamThreads,
    Duration commitInterval,
    boolean optimizeTopology,
    Duration timeout,
    Map<String, String> internalTopicConfigs) {

  public PeerConfig {
    requireText(bootstrapServers, "bootstrapServers");
    requireText(inputTopic, "inputTopic");
    requireText(applicationId, "applicationId");
    if (!applicationId.matches("[A-Za-z0-9._-]+")) {
      throw new IllegalArgumentException("Cannot configure the Kafka Streams peer: applicationId '" + applicationId
          + "' may contain only letters, digits, '.', '_' and '-'");
    }
    Objects.requireNonNull(storeType, "storeType");
    if (streamThreads < 1) {
      throw new IllegalArgumentException("Cannot configure the Kafka Streams peer: streamThreads must be >= 1, was " + streamThreads);
    }
    Objects.requireNonNull(commitInterval, "commitInterval");
    if (commitInterval.isNegative() || commitInterval.isZero()) {
      throw new IllegalArgumentException("Cannot configure the Kafka Streams peer: commitInterval must be positive, was " + commitInterval);
    }
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("Cannot configure the Kafka Streams peer: timeout must be positive, was " + timeout);
    }
    internalTopicConfigs = Map.copyOf(Objects.requireNonNull(internalTopicConfigs, "internalTopicConfigs"));
  }

  /**
   * Defaults: a temporary state directory, RocksDB stores, one stream thread per available
   * processor, a 100 ms commit interval, no topology optimization, a 5 minute timeout.
   */
  public static PeerConfig defaults(String bootstrapServers, String inputTopic, String applicationId) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, null, StoreType.ROCKSDB,
        Runtime.getRuntime().availableProcessors(), Duration.ofMillis(100), false, Duration.ofMinutes(5), Map.of());
  }

  public PeerConfig withStateDir(Path dir) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, dir, storeType, streamThreads, commitInterval, optimizeTopology, timeout, internalTopicConfigs);
  }

  public PeerConfig withStoreType(StoreType type) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, type, streamThreads, commitInterval, optimizeTopology, timeout, internalTopicConfigs);
  }

  public PeerConfig withStreamThreads(int threads) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, storeType, threads, commitInterval, optimizeTopology, timeout, internalTopicConfigs);
  }

  public PeerConfig withCommitInterval(Duration interval) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, storeType, streamThreads, interval, optimizeTopology, timeout, internalTopicConfigs);
  }

  public PeerConfig withOptimizeTopology(boolean optimize) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, storeType, streamThreads, commitInterval, optimize, timeout, internalTopicConfigs);
  }

  public PeerConfig withTimeout(Duration t) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, storeType, streamThreads, commitInterval, optimizeTopology, t, internalTopicConfigs);
  }

  public PeerConfig withInternalTopicConfigs(Map<String, String> configs) {
    return new PeerConfig(bootstrapServers, inputTopic, applicationId, stateDir, storeType, streamThreads, commitInterval, optimizeTopology, timeout, configs);
  }

  private static void requireText(String s, String name) {
    if (s == null || s.isBlank()) {
      throw new IllegalArgumentException("Cannot configure the Kafka Streams peer: " + name + " is missing");
    }
  }
}
