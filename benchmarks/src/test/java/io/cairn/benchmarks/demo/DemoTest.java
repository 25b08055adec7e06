package io.cairn.benchmarks.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.node.RecoveryReport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code cairn demo} at a small size: the recovery from the snapshot reads only what followed it. */
class DemoTest {

  @Test
  void demoRecoversFromItsSnapshotAndReadsOnlyTheRecordsAfterIt(@TempDir Path dir) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    long t0 = System.nanoTime();
    Demo.Outcome o = new Demo(dir, new PrintStream(buf, true, StandardCharsets.UTF_8)).run(20_000, 3_000);
    String out = buf.toString(StandardCharsets.UTF_8);
    assertThat((System.nanoTime() - t0) / 1e9).as("demo seconds").isLessThan(120);

    assertThat(o.viewsAgree()).as("views after both recoveries equal the view before the kill").isTrue();
    assertThat(o.fromSnapshot().fullReplay()).isFalse();
    assertThat(o.fullReplay().fullReplay()).isTrue();
    assertThat(kafka(o.fromSnapshot()).get("records")).isEqualTo(3_000L);
    assertThat(kafka(o.fromSnapshot()).get("bytes")).isEqualTo(o.bytesAfterSnapshot());
    assertThat(kafka(o.fullReplay()).get("records")).isEqualTo(23_000L);
    assertThat(o.snapshotStore().bytesOut()).isPositive();
    assertThat(out).contains("cairn recovery report", "recovering from the snapshot", "from the snapshot",
        "full replay (no snapshot)", "records produced after the snapshot: 3,000", "the view is the same after both recoveries");
  }

  private static Map<String, Long> kafka(RecoveryReport r) {
    return r.sources().stream().filter(s -> s.name().equals("kafka_orders")).findFirst().orElseThrow().load();
  }
}
