package io.cairn.benchmarks.loadonsource;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The standby strategies' checks and report section, on figures made up here (the benchmark's
 * own run of them takes about 30 s and is left out of the test suite's tiny run): what a standby
 * read standing by and at takeover must add up to what follows the snapshot's offsets, a warm
 * standby reads nothing standing by, a hot one no Postgres, and the report says what that costs.
 */
class StandbyStrategyReportTest {
  private static final LoadOnSourceConfig CONFIG = LoadOnSourceConfig.tiny(Path.of("target", "unused")).withStandbys(true);

  @Test
  void standingByPlusTakeoverMustAddUpToWhatFollowsTheSnapshot() {
    LoadOnSourceResult ok = result(standby("hot", 25_000, 0, 25_000), standby("warm", 0, 25_000, 0));
    assertThat(ConsistencyChecks.of(ok)).filteredOn(c -> !c.passed()).isEmpty();

    // a hot standby that read a record twice (standing by and again at takeover) is caught
    LoadOnSourceResult twice = result(standby("hot", 25_000, 10, 25_000));
    assertThat(ConsistencyChecks.of(twice)).filteredOn(c -> !c.passed()).extracting(ConsistencyChecks.Check::what)
        .contains("Kafka records read standing by + at takeover = records after the snapshot's offsets");
    // a warm standby that read Kafka while standing by is caught
    LoadOnSourceResult warmRead = result(standby("warm", 5, 24_995, 5));
    assertThat(ConsistencyChecks.of(warmRead)).filteredOn(c -> !c.passed()).extracting(ConsistencyChecks.Check::what)
        .contains("a warm standby reads no source standing by");
    // the status and the load meter disagreeing is caught
    LoadOnSourceResult meters = result(standby("hot", 25_000, 0, 24_000));
    assertThat(ConsistencyChecks.of(meters)).filteredOn(c -> !c.passed()).extracting(ConsistencyChecks.Check::what)
        .containsExactly("Kafka records read standing by: status = load meter");
  }

  @Test
  void reportHasTheAvailabilitySectionAndKeepsStandbysOffTheGrowthCurve() throws Exception {
    LoadOnSourceResult r = result(standby("warm", 0, 25_000, 0), standby("hot", 25_000, 0, 25_000));
    String md = ReportWriter.markdown(r, List.of());
    assertThat(md).contains("## What availability costs the sources", "|hot-standby|", "|warm-standby|",
        "standing by, it read 25,000 records", "240,000 records", "A warm standby reads no source while standing by");
    assertThat(ReportWriter.csv(r).lines().skip(1)).allSatisfy(line -> assertThat(line.split(",")).hasSize(ReportWriter.COLUMNS.size()));
    assertThat(ReportWriter.targets(r).get(0).met()).as("a hot standby's takeover reading nothing is not a Kafka re-read ratio").isTrue();
    assertThat(ReportWriter.markdown(result(), List.of())).doesNotContain("What availability costs");
  }

  /** A standby strategy on a snapshot 2.5 simulated hours before the crash, 25,000 Kafka records after it. */
  private static StrategyResult standby(String mode, long standingBy, long atTakeover, long metered) {
    StandbyFigures f = new StandbyFigures(mode, 7_000, 200, standingBy, standingBy * 50, standingBy * 57, 3, 0, false, metered, 150,
        1_200, Map.of("catch-up", 700L));
    return strategy(mode + "-standby", 0, 2.5, atTakeover, f);
  }

  private static StrategyResult strategy(String name, int hour, double since, long kafka, StandbyFigures f) {
    return new StrategyResult(name, hour, since, 1_300, 800, 0, 700, 600, 50, 1_000, kafka, kafka * 50, kafka * 57, 2, 25_000,
        1_250_000, 300, 0, 1_000_000, 700_000, 300, 30, 3, 350_000, 0.0001, 340_000, 16, 2_000, 500, 20, 0.0001, true, f);
  }

  private static LoadOnSourceResult result(StrategyResult... standbys) {
    List<StrategyResult> all = new java.util.ArrayList<>();
    all.add(new StrategyResult("full-replay", -1, -1, 2_600, 2_600, 0, 2_300, 1_700, 200, 0, 45_000, 2_250_000, 2_500_000, 4,
        45_000, 2_250_000, 9_600, 9_600, 160, 0, 9_600, 9, 3, 1_500, 0.00006, 0, 0, 0, 0, 0, 0, true, null));
    all.add(strategy("daily", 0, 2.5, 25_000, null));
    all.addAll(List.of(standbys));
    return new LoadOnSourceResult(CONFIG, Map.of(), "test", "now", 1, 1, 45_000, 9_600, 300, 700_000, all, null, null, List.of());
  }
}
