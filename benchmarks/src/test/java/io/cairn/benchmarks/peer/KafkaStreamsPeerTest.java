package io.cairn.benchmarks.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.testkit.kafka.KafkaBroker;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

/** The Kafka Streams peer against the real in-process broker, checked against a naive oracle. */
class KafkaStreamsPeerTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void rocksDbAggregateSurvivesKillWithLostLocalStateAndRestoresFromChangelogs() throws Exception {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("peer-orders"), 2);
    UpsertWorkload workload = new UpsertWorkload(7, 5_000, 1_000, 30, 0.1);
    workload.produceTo(broker, topic, 2);
    Map<String, CustomerAggregate> oracle = naiveOracle(broker, topic);
    assertThat(UpsertWorkload.sameResult(oracle, workload.oracle())).as("workload oracle agrees with the topic").isTrue();

    PeerConfig config = PeerConfig.defaults(broker.bootstrapServers(), topic, "peer-test-" + UUID.randomUUID())
        .withStreamThreads(2).withTimeout(Duration.ofSeconds(40));
    try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(config)) {
      ThroughputMeasurement t = peer.processFromBeginning();
      assertThat(t.inputRecords()).isEqualTo(5_000);
      assertThat(t.recordsPerSecond()).isPositive();
      assertThat(t.consumerRecords()).isGreaterThanOrEqualTo(5_000);
      assertThat(UpsertWorkload.normalized(peer.aggregate())).isEqualTo(UpsertWorkload.normalized(oracle));

      RestoreMeasurement r = peer.killAndRestore(true);
      assertThat(UpsertWorkload.normalized(peer.aggregate())).isEqualTo(UpsertWorkload.normalized(oracle));

      assertThat(r.wipedLocalState()).isTrue();
      assertThat(r.restoreMillis()).isPositive();
      assertThat(r.changelogsAtKill()).extracting(ChangelogTopic::name).containsExactlyInAnyOrder(
          config.applicationId() + "-peer-orders-changelog", config.applicationId() + "-peer-customer-agg-changelog");
      assertThat(r.changelogsAtKill()).allSatisfy(c -> assertThat(c.records()).isPositive());
      // everything local was lost: the stores come back from the whole changelogs, and only from them
      assertThat(r.restoredRecords()).isPositive().isLessThanOrEqualTo(r.changelogRecords()).isEqualTo(r.restoreConsumerRecords());
      assertThat(r.restoredRecords()).isEqualTo(r.changelogRecords());
      assertThat(r.restoreConsumerBytes()).isPositive();
      long changelogBytes = r.changelogsAtKill().stream().mapToLong(ChangelogTopic::bytes).sum();
      assertThat(r.restoreConsumerBytes()).isLessThanOrEqualTo(changelogBytes);
      // the old instance committed the whole input before the kill: nothing is re-read from it
      assertThat(r.mainConsumerRecords()).isZero();
      // the orders store holds the latest order per id: its changelog has at least one record per live id
      long liveIds = oracle.values().stream().mapToLong(CustomerAggregate::count).sum();
      assertThat(r.changelogsAtKill()).filteredOn(c -> c.name().endsWith("-peer-orders-changelog"))
          .singleElement().satisfies(c -> assertThat(c.records()).isGreaterThanOrEqualTo(liveIds));

      PeerResult result = peer.result(t, r);
      String json = JSON.writeValueAsString(result);
      JsonNode tree = JSON.readTree(json);
      assertThat(tree.at("/restore/restoreConsumerBytes").asLong()).isEqualTo(r.restoreConsumerBytes());
      assertThat(tree.at("/throughput/recordsPerSecond").asDouble()).isEqualTo(t.recordsPerSecond());
      assertThat(tree.at("/storeType").asText()).isEqualTo("ROCKSDB");
      assertThat(result.internalTopics()).extracting(ChangelogTopic::name)
          .contains(config.applicationId() + "-peer-by-customer-repartition");
    }
  }

  @Test
  void inMemoryStoresRestoreFullyEvenWhenLocalStateIsKept() {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("peer-orders-mem"), 1);
    UpsertWorkload workload = new UpsertWorkload(11, 2_000, 400, 10, 0.1);
    workload.produceTo(broker, topic, 1);
    Map<String, CustomerAggregate> oracle = naiveOracle(broker, topic);

    PeerConfig config = PeerConfig.defaults(broker.bootstrapServers(), topic, "peer-test-mem-" + UUID.randomUUID())
        .withStoreType(StoreType.IN_MEMORY).withStreamThreads(1).withTimeout(Duration.ofSeconds(40));
    try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(config)) {
      peer.processFromBeginning();
      assertThat(UpsertWorkload.normalized(peer.aggregate())).isEqualTo(UpsertWorkload.normalized(oracle));
      RestoreMeasurement r = peer.killAndRestore(false);
      assertThat(UpsertWorkload.normalized(peer.aggregate())).isEqualTo(UpsertWorkload.normalized(oracle));
      assertThat(r.wipedLocalState()).isFalse();
      assertThat(r.restoredRecords()).isEqualTo(r.changelogRecords()).isEqualTo(r.restoreConsumerRecords()).isPositive();
    }
  }

  @Test
  void aValueThatIsNotAnOrderFailsTheRunWithTheReason() {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("peer-orders-bad"), 1);
    broker.produce(topic, 0, "{\"id\":1}", "{\"id\":1,\"customer\":\"c1\",\"amount\":2.5}");
    broker.produce(topic, 0, "{\"id\":2}", "{\"id\":2,\"customer\":\"c1\"}");
    PeerConfig config = PeerConfig.defaults(broker.bootstrapServers(), topic, "peer-test-bad-" + UUID.randomUUID())
        .withStreamThreads(1).withTimeout(Duration.ofSeconds(30));
    try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(config)) {
      assertThatThrownBy(peer::processFromBeginning)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Kafka Streams")
          .hasStackTraceContaining("field amount is missing");
    }
  }

  @Test
  void configNamesWhatIsWrong() {
    assertThatThrownBy(() -> PeerConfig.defaults("127.0.0.1:9092", "t", "bad id"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("applicationId 'bad id'");
    assertThatThrownBy(() -> PeerConfig.defaults(" ", "t", "a"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrapServers is missing");
    assertThatThrownBy(() -> PeerConfig.defaults("127.0.0.1:9092", "t", "a").withStreamThreads(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("streamThreads must be >= 1, was 0");
  }

  @Test
  void missingInputTopicIsReportedByName() {
    KafkaBroker broker = KafkaBroker.shared();
    String topic = KafkaBroker.uniqueTopic("peer-missing");
    try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(
        PeerConfig.defaults(broker.bootstrapServers(), topic, "peer-test-missing-" + UUID.randomUUID()))) {
      assertThatThrownBy(peer::processFromBeginning)
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("input topic " + topic + " does not exist");
    }
  }

  /** Reads the topic back and aggregates it the obvious way, independently of the peer's serdes. */
  private static Map<String, CustomerAggregate> naiveOracle(KafkaBroker broker, String topic) {
    Map<String, JsonNode> latest = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> rec : broker.readAll(topic)) {
      String key = new String(rec.key(), StandardCharsets.UTF_8);
      if (rec.value() == null) {
        latest.remove(key);
      } else {
        try {
          latest.put(key, JSON.readTree(rec.value()));
        } catch (java.io.IOException e) {
          throw new AssertionError(e);
        }
      }
    }
    Map<String, CustomerAggregate> out = new TreeMap<>();
    for (JsonNode v : latest.values()) {
      String customer = v.get("customer").asText();
      BigDecimal amount = new BigDecimal(v.get("amount").asText());
      CustomerAggregate a = out.getOrDefault(customer, CustomerAggregate.ZERO);
      out.put(customer, new CustomerAggregate(a.count() + 1, a.sum().add(amount)));
    }
    return out;
  }
}
