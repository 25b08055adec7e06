package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.snapshotter.SnapshotResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON of {@code POST /snapshot} and status's {@code lastSnapshot}: the field names the CLI and scripts read. */
class SnapshotOutcomeTest {
  private static final SnapshotResult RESULT = new SnapshotResult("id-1", "snapshots/x.manifest.json", 42, Instant.EPOCH, 3, 1000,
      5, 2, 3, 12_345, 67_890, Duration.ofNanos(1_500_000), Duration.ofMillis(250), Map.of());

  @Test
  void rendersTheFieldNamesItAlwaysHad() throws Exception {
    JsonNode n = RecoveryReport.JSON.readTree(Node.json(SnapshotOutcome.committed(RESULT)));
    List<String> names = new ArrayList<>();
    n.fieldNames().forEachRemaining(names::add);
    assertThat(names).containsExactly("snapshotId", "manifest", "tick", "catalogPosition", "rows", "files", "filesNew",
        "filesReused", "bytesUploaded", "bytesTotal", "capturePauseMicros", "uploadMillis", "committed", "ownership",
        "sourcesConfirmed");
    assertThat(n.path("capturePauseMicros").asLong()).isEqualTo(1500);
    assertThat(n.path("uploadMillis").asLong()).isEqualTo(250);
    assertThat(n.path("ownership").asText()).isEqualTo("checking");

    JsonNode after = RecoveryReport.JSON.readTree(Node.json(
        SnapshotOutcome.committed(RESULT).withSourcesConfirmed("confirmed (epoch 7)").withRetention("ok")));
    assertThat(after.path("sourcesConfirmed").asBoolean()).isTrue();
    assertThat(after.path("ownership").asText()).isEqualTo("confirmed (epoch 7)");
    assertThat(after.path("retention").asText()).isEqualTo("ok");
  }
}
