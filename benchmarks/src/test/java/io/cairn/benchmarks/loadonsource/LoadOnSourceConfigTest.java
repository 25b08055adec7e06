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
  void theLargeScaleIsTheSizeItPromises() {
    LoadOnSourceConfig l = LoadOnSourceConfig.large(out);
    long records = l.initialOrders() + (long) l.ordersPerHour() * l.hours() + l.ordersPerHour() / 2;
    long changes = (long) l.customerChangesPerHour() * l.hours() + l.customerChangesPerHour() / 2;
    assertThat(l.hours()).isEqualTo(30 * 24);
    assertThat(records).isBetween(100_000_000L, 101_000_000L);
    assertThat(l.orderKeys()).isEqualTo(10_000_000);
    assertThat(l.initialCustomers()).isEqualTo(1_000_000);
    assertThat(changes).isBetween(3_000_000L, 3_010_000L);
    assertThat(l.orderHistory()).isTrue(); // the join holding the whole history: ~95M rows of state
    assertThat(l.peer()).isFalse();
  }

  @Test
  void aScaleOtherThanSmallOrLargeIsRefusedNamingIt() {
    PrintStream old = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int code;
    try {
      code = CairnCommand.execute("bench", "load-on-source", "--scale", "huge", "--no-postgres", "--out", out.toString());
    } finally {
      System.setErr(old);
    }
    assertThat(code).isEqualTo(2);
    assertThat(buf.toString(StandardCharsets.UTF_8)).contains("--scale must be small or large, was 'huge'");
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
