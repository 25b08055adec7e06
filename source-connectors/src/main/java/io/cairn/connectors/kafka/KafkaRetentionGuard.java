package io.cairn.connectors.kafka;

import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.SourceDefinition;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks that a Kafka source's topic keeps records longer than the snapshot interval: recovery
 * replays from the offsets of the latest snapshot, which can be a whole interval old; if retention
 * deleted them, recovery fails ({@link OffsetsOutOfRangeException}).
 *
 * <pre>{@code
 * KafkaRetentionGuard.check(definition, secrets, Duration.ofDays(1)).ifPresent(report::addWarning);
 * }</pre>
 */
public final class KafkaRetentionGuard {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaRetentionGuard.class);

  private KafkaRetentionGuard() {}

  /**
   * Reads the topic's {@code retention.ms} and {@code cleanup.policy}; returns (and logs at WARN)
   * a warning when records are deleted by time sooner than {@code snapshotInterval}, empty
   * otherwise (no time-based deletion, or retention at least the interval). Throws
   * {@link KafkaSourceException} when the topic cannot be described.
   */
  public static Optional<String> check(SourceDefinition definition, Secrets secrets, Duration snapshotInterval) {
    KafkaSourceConfig config = KafkaSourceConfig.parse(definition, secrets);
    try (Admin admin = Admin.create(KafkaSource.adminProperties(config, "retention-guard"))) {
      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, config.topic());
      Map<ConfigResource, Config> configs;
      try {
        configs = admin.describeConfigs(List.of(res)).all()
            .get(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        throw new KafkaSourceException("Cannot check retention of topic '" + config.topic() + "' for source '"
            + config.sourceName() + "': " + e.getCause(), e.getCause());
      } catch (TimeoutException e) {
        throw new KafkaSourceException("Cannot check retention of topic '" + config.topic() + "' for source '"
            + config.sourceName() + "': no answer within " + config.requestTimeout(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new KafkaSourceException("Cannot check retention of topic '" + config.topic() + "': interrupted", e);
      }
      Config c = configs.get(res);
      return evaluate(config.sourceName(), config.topic(), value(c, "retention.ms"), value(c, "cleanup.policy"),
          snapshotInterval);
    }
  }

  /**
   * Reads the topic's {@code retention.ms}, {@code retention.bytes} and {@code cleanup.policy}
   * and its partition count with a short-lived admin client, every call bounded by {@code
   * timeout}. A compacted-only topic deletes nothing by age or size (its limits are unbounded, with
   * a note). Throws {@link KafkaSourceException} naming the topic when it cannot be described.
   */
  public static io.cairn.engine.source.RetentionLimits probe(SourceDefinition definition, Secrets secrets, Duration timeout) {
    KafkaSourceConfig config = KafkaSourceConfig.parse(definition, secrets);
    Map<String, Object> props = KafkaSource.adminProperties(config, "advise");
    int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    props.put("request.timeout.ms", ms);
    props.put("default.api.timeout.ms", ms);
    props.put("socket.connection.setup.timeout.ms", Math.min(ms, 10_000));
    props.put("socket.connection.setup.timeout.max.ms", Math.min(ms, 10_000));
    Admin admin = Admin.create(props);
    try {
      ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, config.topic());
      long deadline = System.nanoTime() + timeout.toNanos();
      Config c = admin.describeConfigs(List.of(res)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(res);
      long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
      int partitions = admin.describeTopics(List.of(config.topic())).allTopicNames().get(left, TimeUnit.MILLISECONDS)
          .get(config.topic()).partitions().size();
      return limits(value(c, "retention.ms"), value(c, "retention.bytes"), value(c, "cleanup.policy"), partitions);
    } catch (ExecutionException e) {
      throw new KafkaSourceException("Cannot read the retention of topic '" + config.topic() + "' of source '"
          + config.sourceName() + "' on " + config.brokers() + ": " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new KafkaSourceException("Cannot read the retention of topic '" + config.topic() + "' of source '"
          + config.sourceName() + "': no answer from " + config.brokers() + " within " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaSourceException("Cannot read the retention of topic '" + config.topic() + "': interrupted", e);
    } finally {
      admin.close(Duration.ofMillis(Math.min(1000, timeout.toMillis())));
    }
  }

  /** The limits from the topic's settings as text (null: the broker's default, which describeConfigs always fills in). */
  static io.cairn.engine.source.RetentionLimits limits(String retentionMs, String retentionBytes, String cleanupPolicy,
      int partitions) {
    Map<String, String> settings = new java.util.LinkedHashMap<>();
    settings.put("retention.ms", retentionMs == null ? "(not set)" : retentionMs);
    settings.put("retention.bytes", retentionBytes == null ? "(not set)" : retentionBytes);
    settings.put("cleanup.policy", cleanupPolicy == null ? "(not set)" : cleanupPolicy);
    settings.put("partitions", Integer.toString(partitions));
    List<String> notes = new java.util.ArrayList<>();
    Duration maxAge = null;
    long maxBytes = -1;
    if (cleanupPolicy != null && !cleanupPolicy.contains("delete")) {
      notes.add("cleanup.policy=" + cleanupPolicy + ": records are compacted, never deleted by age or size "
          + "(a replay reads the latest record per key, not every change)");
    } else {
      long ms = retentionMs == null ? 7L * 24 * 3600 * 1000 : Long.parseLong(retentionMs.trim());
      maxAge = ms < 0 ? null : Duration.ofMillis(ms);
      long bytes = retentionBytes == null ? -1 : Long.parseLong(retentionBytes.trim());
      maxBytes = bytes < 0 ? -1 : bytes;
    }
    return new io.cairn.engine.source.RetentionLimits(io.cairn.engine.source.RetentionLimits.Reach.ANY_SNAPSHOT, maxAge,
        maxBytes, Math.max(1, partitions), -1, settings, notes);
  }

  /** The decision, separated for testing: {@code retentionMs} -1 means unlimited. */
  static Optional<String> evaluate(
      String source, String topic, String retentionMs, String cleanupPolicy, Duration snapshotInterval) {
    if (cleanupPolicy != null && !cleanupPolicy.contains("delete")) {
      return Optional.empty(); // compact only: nothing is deleted by age
    }
    long ms = retentionMs == null ? 7L * 24 * 3600 * 1000 : Long.parseLong(retentionMs.trim());
    if (ms < 0 || ms >= snapshotInterval.toMillis()) {
      return Optional.empty();
    }
    String warning = "Topic '" + topic + "' of source '" + source + "' keeps records for " + Duration.ofMillis(ms)
        + " (retention.ms=" + ms + ") but snapshots are taken every " + snapshotInterval
        + ": a recovery from the latest snapshot may find the offsets it must replay already deleted."
        + " Raise retention.ms above the snapshot interval (with margin) or snapshot more often";
    LOG.warn(warning);
    return Optional.of(warning);
  }

  private static String value(Config c, String name) {
    ConfigEntry e = c == null ? null : c.get(name);
    return e == null ? null : e.value();
  }
}
