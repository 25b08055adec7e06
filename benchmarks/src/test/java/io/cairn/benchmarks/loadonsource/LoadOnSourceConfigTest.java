package io.cairn.benchmarks.loadonsource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.server.cli.CairnCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class LoadOnSourceConfigTest {
  private final Path out = Path.of("target", "unused");

  @Test
  void badSizesAreRejectedNamingTheSetting() {
    assertThatThrownBy(() -> LoadOnSourceConfig.defaults(out).withHours(0, 1))
        .hasMessage("Cannot configure the benchmark: hours must be > 0, was 0");
    assertThatThrownBy(() -> LoadOnSourceConfig.defaults(out).withHours(4, 6))
        .hasMessage("Cannot configure the benchmark: curveStepHours (6) must not exceed hours (4)");
    assertThatThrownBy(() -> LoadOnSourceConfig.defaults(out).withRates(-1, 10))
        .hasMessage("Cannot configure the benchmark: ordersPerHour must be > 0, was -1");
  }

  @Test
  void storeUriIsAnAbsoluteFileUriThatCreatesTheDirectory() {
    assertThat(LoadOnSourceBenchmark.storeUri(Path.of("/tmp/x y/ingest"))).isEqualTo("file:///tmp/x%20y/ingest?create=true");
  }

  @Test
  void cairnCommandLineHasTheBenchAndDemoSubcommands() {
    PrintStream old = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = CairnCommand.execute("bench", "load-on-source", "--help");
      CairnCommand.execute("demo", "--help");
    } finally {
      System.setOut(old);
    }
    assertThat(code).isZero();
    assertThat(buf.toString(StandardCharsets.UTF_8)).contains("--hours", "--orders-per-hour", "--no-postgres", "--no-standby", "--records",
        "--after");
  }
}
