package io.cairn.testkit.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/** The broker in a child JVM: serves clients like the in-process one, and its process ends with close(). */
@org.junit.jupiter.api.Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES) // measured 6-11 s
class KafkaBrokerChildJvmTest {
  @Test
  void aChildBrokerServesAndStopsWithClose() throws Exception {
    ProcessHandle process;
    try (KafkaBroker b = KafkaBroker.startInChildJvm()) {
      process = b.childProcess().orElseThrow();
      assertThat(process.pid()).isNotEqualTo(ProcessHandle.current().pid());
      String topic = b.createTopic(KafkaBroker.uniqueTopic("child"), 2);
      b.produceAll(List.of(new ProducerRecord<>(topic, 0, bytes("k1"), bytes("v1")),
          new ProducerRecord<>(topic, 1, bytes("k2"), bytes("v2"))));
      assertThat(b.readAll(topic)).extracting(r -> new String(r.value(), StandardCharsets.UTF_8)).containsExactly("v1", "v2");
      assertThatThrownBy(() -> b.restart(Duration.ofMillis(1))).isInstanceOf(UnsupportedOperationException.class);
    }
    assertThat(process.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS).isAlive()).isFalse();
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
