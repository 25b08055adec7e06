package io.cairn.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class KafkaBrokerTest {
  @Test
  void sharedBrokerListensOnLoopbackAndRoundTripsRecords() {
    KafkaBroker broker = KafkaBroker.shared();
    assertThat(broker.bootstrapServers()).startsWith("127.0.0.1:");
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("broker-smoke"), 2);
    broker.produce(topic, 0, "k0", "v0");
    broker.produce(topic, 1, null, "v1");
    var records = broker.readAll(topic);
    assertThat(records).extracting(r -> new String(r.value(), StandardCharsets.UTF_8)).containsExactly("v0", "v1");
    assertThat(KafkaBroker.shared()).isSameAs(broker);
  }
}
