package io.cairn.benchmarks.loadonsource;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Runs the whole load-on-source benchmark end to end — Kafka broker, Postgres with CDC, the ingest
 * node, every strategy's recovery, the Kafka Streams peer, the report — at a tiny size, and checks
 * the report's structure and that its figures agree with the workload. With {@code -Pbench-full}
 * ({@code -Dcairn.bench.size=full}) it runs at the default size of {@code cairn bench
 * load-on-source} and writes the report to {@code target/bench-report}; with {@code -Pbench-large}
 * ({@code -Dcairn.bench.size=large}) at the large scale ({@link LoadOnSourceConfig#large}: 100M
 * records, the order-history join; about an hour and a 20 GiB heap), report in {@code
 * target/bench-report-large}.
 */
class LoadOnSourceBenchmarkTest {

  @Test
  void benchmarkRunsEndToEndAndItsFiguresAgree() throws Exception {
    String size = System.getProperty("cairn.bench.size", "tiny");
    Path out = Path.of("target", switch (size) {
      case "full" -> "bench-report";
      case "large" -> "bench-report-large";
      default -> "bench-report-tiny";
    }).toAbsolutePath();
    LoadOnSourceConfig config = switch (size) {
      case "full" -> LoadOnSourceConfig.defaults(out);
      case "large" -> LoadOnSourceConfig.large(out);
      default -> LoadOnSourceConfig.tiny(out).withAdviseTarget(Duration.ofSeconds(30));
    };
    int readers = config.orderHistory() ? 2 : 1; // the large scale reads the topic twice (orders, order_events)
    LoadOnSourceResult r = new LoadOnSourceBenchmark(config, "LoadOnSourceBenchmarkTest").run();
    List<String> charts = ReportWriter.write(r, out);

    List<String> failed = ConsistencyChecks.of(r).stream().filter(c -> !c.passed())
        .map(c -> c.strategy() + ": " + c.what() + " — " + c.detail()).collect(Collectors.toList());
    assertThat(failed).as("failed consistency checks").isEmpty();

    assertThat(r.strategies()).extracting(StrategyResult::name)
        .startsWith("full-replay", "daily").contains("hourly", "right-after");
    StrategyResult fullReplay = r.strategy("full-replay");
    StrategyResult daily = r.strategy("daily");
    StrategyResult hourly = r.strategy("hourly");
    StrategyResult after = r.strategy("right-after");
    assertThat(fullReplay.kafkaRecords()).isEqualTo(readers * r.kafkaRecordsInTopic());
    assertThat(fullReplay.rowsLoaded()).isZero();
    assertThat(daily.kafkaRecords()).isEqualTo(readers * Math.round(config.ordersPerHour() * (Math.min(24, config.hours()) + 0.5)));
    assertThat(hourly.kafkaRecords()).isEqualTo(readers * Math.round(config.ordersPerHour() * 0.5));
    assertThat(after.kafkaRecords()).isZero();
    assertThat(after.pgRecords()).isLessThanOrEqualTo(config.transactionRows());
    assertThat(daily.pgRecords()).isGreaterThan(hourly.pgRecords());
    assertThat(daily.pgWalBytesNeeded()).isGreaterThan(hourly.pgWalBytesNeeded()).isGreaterThan(after.pgWalBytesNeeded());
    assertThat(r.pgWalRetainedAtCrash()).isGreaterThanOrEqualTo(daily.pgWalBytesNeeded());
    for (StrategyResult s : r.strategies()) {
      assertThat(s.storeGetRequests()).as(s.name() + " store requests").isPositive();
      if (!s.fullReplay()) {
        assertThat(s.rowsLoaded()).as(s.name() + " rows loaded").isPositive();
        assertThat(s.snapshotBytes()).as(s.name() + " snapshot size").isPositive();
        assertThat(s.storeBytesRead()).as(s.name() + " snapshot read").isGreaterThanOrEqualTo(s.snapshotBytes());
      }
    }
    // cairn advise, asked by the node recovered from the daily snapshot: applied when the history has a snapshot as old as
    // the recommended schedule leaves one at worst, else said not applied (a tiny history of 2 hours has none for a daily one)
    AdviceApplied advice = r.advice();
    assertThat(advice).isNotNull();
    assertThat(advice.adviceText()).contains("cairn advise: a snapshot schedule for a recovery within 30.0 s", "current:");
    assertThat(advice.cron()).as(advice.adviceText()).isNotNull();
    if (advice.strategy() != null) {
      StrategyResult applied = r.strategy(advice.strategy());
      assertThat(applied.recoveryMillis()).isEqualTo(advice.measuredMillis());
      assertThat(applied.hoursSinceSnapshot()).isGreaterThanOrEqualTo(advice.intervalMillis() / 3_600_000.0 + 0.5);
    } else {
      assertThat(advice.measuredMillis()).isEqualTo(-1);
      assertThat(r.notes()).anyMatch(n -> n.startsWith("cairn advise recommended " + advice.cron()) && n.contains("not applied"));
    }
    if (config.peer()) {
      assertThat(r.peer()).isNotNull();
      assertThat(r.peer().peer().restore().restoreMillis()).isPositive();
      assertThat(r.peer().cairnRecoveryKafkaBytes()).as("nothing after the peer snapshot").isZero();
    }

    // the report files
    String md = Files.readString(out.resolve(ReportWriter.MD));
    assertThat(md).contains("# cairn load-on-source benchmark", "## Results per strategy", "## Targets",
        "## Consistency checks", "All ", "checks passed", "|full-replay|");
    if (config.peer()) {
      assertThat(md).contains("## Peer: Kafka Streams");
    }
    String html = Files.readString(out.resolve(ReportWriter.HTML));
    assertThat(html).startsWith("<!DOCTYPE html>").contains("<table>", "data:image/png;base64,");
    assertThat(charts).contains("recovery-time.png", "source-load-records.png", "growth-time.png", "growth-load.png");
    if (config.peer()) {
      assertThat(charts).contains("peer-recovery.png");
    }
    for (String c : charts) {
      byte[] png = Files.readAllBytes(out.resolve(c));
      assertThat(png).as(c).startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G');
    }
    // the figures read back from results.json give the same report (`cairn bench report --from`)
    assertThat(ReportWriter.markdown(ReportWriter.read(out.resolve(ReportWriter.JSON)), charts)).isEqualTo(md);
    if (config.postgres()) {
      assertThat(md).contains("## What each strategy requires of the sources", "|keep Kafka logs forever (`full-replay`)|",
          "read replica");
    }
    JsonNode json = new ObjectMapper().readTree(out.resolve(ReportWriter.JSON).toFile());
    assertThat(json.get("strategies")).hasSize(r.strategies().size());
    assertThat(json.get("strategies").get(0).get("name").asText()).isEqualTo("full-replay");
    List<String> csv = Files.readAllLines(out.resolve(ReportWriter.CSV));
    assertThat(csv).hasSize(1 + r.strategies().size());
    assertThat(csv.get(0).split(",")).hasSize(ReportWriter.COLUMNS.size());
    assertThat(csv.get(1)).startsWith("full-replay,");
    // the full replay read and computed: its catch-up split says so, within the catch-up's time
    StrategyResult replay = r.strategies().stream().filter(s -> s.name().equals("full-replay")).findFirst().orElseThrow();
    assertThat(replay.catchUpReadingMillis() + replay.catchUpComputingMillis()).isPositive().isLessThanOrEqualTo(replay.catchUpMillis() + 2);
    assertThat(md).contains("catch-up reading ms|catch-up computing ms");
  }
}
