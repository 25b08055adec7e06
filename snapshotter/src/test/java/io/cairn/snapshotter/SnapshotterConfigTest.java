package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SnapshotterConfigTest {
  @Test
  void defaults() {
    SnapshotterConfig c = SnapshotterConfig.defaults();
    assertThat(c.cron()).isEqualTo("0 0 0 * * ?");
    assertThat(c.zone()).isEqualTo(ZoneId.of("UTC"));
    assertThat(c.retention()).isEqualTo(new RetentionPolicy(7, 30, Duration.ofHours(6)));
    assertThat(c.uploadParallelism()).isEqualTo(4);
    assertThat(c.prefix()).isEmpty();
  }

  @Test
  void readsDottedKebabCaseKeys() {
    SnapshotterConfig c = SnapshotterConfig.fromProperties(Map.of(
        "snapshot.prefix", "prod/node-1", "snapshot.schedule.zone", "Europe/Paris", "snapshot.schedule.cron", "0 30 2 * * ?",
        "snapshot.retention.keep-last", "3", "snapshot.retention.daily-days", "14", "snapshot.gc.grace", "PT30M",
        "snapshot.upload-parallelism", "8", "other.key", "ignored"));
    assertThat(c.prefix()).isEqualTo("prod/node-1");
    assertThat(c.zone()).isEqualTo(ZoneId.of("Europe/Paris"));
    assertThat(c.retention()).isEqualTo(new RetentionPolicy(3, 14, Duration.ofMinutes(30)));
    assertThat(c.uploadParallelism()).isEqualTo(8);
    assertThat(SnapshotterConfig.fromProperties(Map.of("snapshot.gc.grace", "2d")).retention().grace()).isEqualTo(Duration.ofDays(2));
  }

  @Test
  void badValuesNameTheKey() {
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.retention.keep-last", "0")))
        .hasMessageContaining("snapshot.retention.keep-last");
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.schedule.zone", "Mars/Olympus")))
        .hasMessageContaining("snapshot.schedule.zone");
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.gc.grace", "soon")))
        .hasMessageContaining("snapshot.gc.grace");
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.upload-parallelism", "x")))
        .hasMessageContaining("snapshot.upload-parallelism");
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.keep-last", "3")))
        .hasMessageContaining("unknown key 'snapshot.keep-last'");
    assertThatThrownBy(() -> SnapshotterConfig.fromProperties(Map.of("snapshot.schedule.cron", "every day")))
        .hasMessageContaining("snapshot.schedule.cron");
  }
}
