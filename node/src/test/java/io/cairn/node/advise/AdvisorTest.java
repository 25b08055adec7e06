package io.cairn.node.advise;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.source.RetentionLimits;
import io.cairn.snapshotter.SnapshotSchedule;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The schedule model: rounding, infeasible targets, several sources, retention by a source's reach. */
class AdvisorTest {
  private static final Advisor.Basis ONE_SECOND = new Advisor.Basis(Duration.ofSeconds(1), "test");

  private static Advisor.SourceRates source(String name, double ingest, double replay) {
    return new Advisor.SourceRates(name, ingest, ingest * 100, Duration.ofMinutes(5), replay, "test");
  }

  /** One second before and after the load, 1M rows at 1M rows/s, 10 s snapshots, daily now, keep-last 7. */
  private static Advisor.Inputs inputs(Duration target, long rows, Duration snapshot, Advisor.SourceRates... sources) {
    return new Advisor.Inputs(target, List.of(sources), rows, rows * 30, 1_000_000, "test", ONE_SECOND, ONE_SECOND,
        new Advisor.Basis(snapshot, "test"), Advisor.Cadence.every(Duration.ofDays(1)), "0 0 0 * * ?", 7);
  }

  @Test
  void roundsTheLongestIntervalDownToAScheduleAPersonWouldWrite() {
    // U = 0.01; base = max(1 s, 1 s load) + 1 s = 2 s; I <= (120 * 0.99 - 2) / 0.01 - 10 = 11,670 s = 3h 14m 30s
    Advisor.Inputs in = inputs(Duration.ofMinutes(2), 1_000_000, Duration.ofSeconds(10), source("orders", 1000, 100_000));
    Advisor.Advice a = Advisor.advise(in);
    assertThat(a.feasible()).isTrue();
    assertThat(a.maxInterval()).isEqualTo(Duration.ofSeconds(11_670));
    assertThat(a.recommended().interval()).isEqualTo(Duration.ofHours(3));
    assertThat(a.recommended().cron()).isEqualTo("0 0 0/3 * * ?");
    // R(3h + 10 s) = (2 + 0.01 * 10,810) / 0.99 = 111.2 s; average (2 + 0.01 * (5,400 + 10)) / 0.99 = 56.7 s
    assertThat(a.atRecommended().worst().toMillis()).isBetween(111_200L, 111_220L);
    assertThat(a.atRecommended().average().toMillis()).isBetween(56_660L, 56_680L);
    assertThat(a.atCurrent().worst()).as("daily misses 2 minutes").isGreaterThan(Duration.ofMinutes(2));
    assertThat(a.currentMeetsTarget()).isFalse();
    // the schedule above the one picked would miss the target; every one up to it meets it
    for (Advisor.Schedule s : Advisor.SCHEDULES) {
      Duration worst = Advisor.estimate(in, Advisor.Cadence.every(s.interval())).worst();
      assertThat(worst.compareTo(in.target()) <= 0).as(s.interval() + " meets the target")
          .isEqualTo(s.interval().compareTo(Duration.ofHours(3)) <= 0);
    }
  }

  @Test
  void aScheduleJustLongEnoughIsKeptAndTheCurrentOneIsJudgedTheSameWay() {
    // U = 0.1, base 2 s, D 0: I <= (100 * 0.9 - 2) / 0.1 = 880 s -> 10m, and 15m misses
    Advisor.Inputs in = inputs(Duration.ofSeconds(100), 1_000_000, Duration.ZERO, source("a", 10_000, 100_000));
    Advisor.Advice a = Advisor.advise(in);
    assertThat(a.recommended().interval()).isEqualTo(Duration.ofMinutes(10));
    assertThat(a.recommended().cron()).isEqualTo("0 0/10 * * * ?");
    Advisor.Inputs now15 = new Advisor.Inputs(in.target(), in.sources(), in.stateRows(), in.stateBytes(), in.loadRowsPerSecond(),
        "test", ONE_SECOND, ONE_SECOND, in.snapshotDuration(), Advisor.Cadence.every(Duration.ofMinutes(10)), "0 0/10 * * * ?", 7);
    assertThat(Advisor.advise(now15).currentMeetsTarget()).isTrue();
  }

  @Test
  void severalSourcesReplayOneAfterAnotherSoTheirSharesAdd() {
    Advisor.Advice one = Advisor.advise(inputs(Duration.ofMinutes(5), 0, Duration.ofSeconds(5), source("k", 2000, 200_000)));
    Advisor.Advice two = Advisor.advise(inputs(Duration.ofMinutes(5), 0, Duration.ofSeconds(5), source("k", 2000, 200_000),
        source("pg", 100, 10_000)));
    Advisor.Advice same = Advisor.advise(inputs(Duration.ofMinutes(5), 0, Duration.ofSeconds(5), source("k", 4000, 200_000)));
    assertThat(one.liveShare()).isEqualTo(0.01);
    assertThat(two.liveShare()).as("0.01 + 0.01").isEqualTo(0.02);
    assertThat(two.maxInterval()).as("two sources of share 0.01 cost what one of 0.02 does").isEqualTo(same.maxInterval());
    assertThat(two.maxInterval()).isLessThan(one.maxInterval());
    assertThat(two.recommended().interval()).isLessThanOrEqualTo(one.recommended().interval());
  }

  @Test
  void aTargetTheFixedCostsAndTheLoadAloneExceedIsInfeasibleAndSaysWhatDominates() {
    // 200M rows at 1M rows/s: the load alone is 200 s
    Advisor.Advice a = Advisor.advise(inputs(Duration.ofMinutes(2), 200_000_000, Duration.ofSeconds(10), source("o", 100, 100_000)));
    assertThat(a.feasible()).isFalse();
    assertThat(a.infeasible()).contains("even with continuous snapshots", "loading the snapshot");
    assertThat(a.dominant()).startsWith("loading the snapshot (200,000,000 rows");
    assertThat(a.floor().worst()).isGreaterThan(Duration.ofSeconds(201));
  }

  @Test
  void ingestFasterThanReplayNeverCatchesUp() {
    Advisor.Advice a = Advisor.advise(inputs(Duration.ofHours(1), 0, Duration.ofSeconds(1), source("k", 150_000, 200_000),
        source("pg", 5_000, 10_000)));
    assertThat(a.feasible()).isFalse();
    assertThat(a.liveShare()).isEqualTo(1.25);
    assertThat(a.infeasible()).contains("125%", "never catch up");
    assertThat(a.atCurrent()).isNull();
  }

  @Test
  void noIngestMakesTheScheduleIrrelevant() {
    Advisor.Advice a = Advisor.advise(inputs(Duration.ofSeconds(30), 1000, Duration.ofSeconds(1), source("idle", 0, 200_000)));
    assertThat(a.recommended().interval()).isEqualTo(Duration.ofDays(1));
    assertThat(a.notes()).anyMatch(n -> n.contains("does not depend on the schedule"));
    Advisor.Advice tooTight = Advisor.advise(inputs(Duration.ofSeconds(1), 1000, Duration.ofSeconds(1), source("idle", 0, 1)));
    assertThat(tooTight.feasible()).isFalse();
    assertThat(tooTight.infeasible()).contains("before any replay");
  }

  @Test
  void aTargetThatNeedsSnapshotsMoreOftenThanAMinuteOrFasterThanTheyRunIsInfeasible() {
    // U = 0.5, base 2 s: I <= (10 * 0.5 - 2) / 0.5 - 1 = 5 s
    Advisor.Advice a = Advisor.advise(inputs(Duration.ofSeconds(10), 0, Duration.ofSeconds(1), source("k", 50_000, 100_000)));
    assertThat(a.feasible()).isFalse();
    assertThat(a.maxInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(a.infeasible()).contains("every 5.0 s", "every minute");
    // I <= (700 * 0.99 - 2) / 0.01 - 600 = 68,500 s, but a snapshot takes 25 hours: the daily schedule cannot keep up
    Advisor.Advice slow = Advisor.advise(inputs(Duration.ofSeconds(1000), 0, Duration.ofHours(25), source("k", 1000, 100_000)));
    assertThat(slow.feasible()).isFalse();
    assertThat(slow.infeasible()).contains("snapshots would queue");
  }

  @Test
  void anIrregularScheduleIsJudgedByItsLongestGapAndAveragedOverItsGaps() {
    Advisor.Cadence c = Advisor.Cadence.of(List.of(Duration.ofHours(1), Duration.ofHours(23)));
    assertThat(c.longestGap()).isEqualTo(Duration.ofHours(23));
    // E[g^2] / (2 E[g]) = (1 + 529) / 48 h
    assertThat(c.meanAge().toSeconds()).isEqualTo(Math.round(530.0 / 48 * 3600));
    assertThat(Advisor.Cadence.every(Duration.ofHours(2)).meanAge()).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void everyOfferedScheduleIsAValidCronWhoseSlotsAreItsInterval() {
    for (Advisor.Schedule s : Advisor.SCHEDULES) {
      SnapshotSchedule.validate(s.cron());
      SnapshotSchedule q = new SnapshotSchedule(s.cron(), ZoneId.of("UTC"), Clock.systemUTC(), null, reason -> { });
      Instant a = q.nextSlotAfter(Instant.parse("2026-03-01T00:00:30Z")).orElseThrow();
      for (int i = 0; i < 30; i++) {
        Instant b = q.nextSlotAfter(a).orElseThrow();
        assertThat(Duration.between(a, b)).as(s.cron()).isEqualTo(s.interval());
        a = b;
      }
    }
    assertThat(Advisor.SCHEDULES.get(Advisor.SCHEDULES.size() - 1).cron()).isEqualTo(SnapshotSchedule.DEFAULT_CRON);
  }

  @Test
  void badInputsAreRefusedNamingWhatWasWrong() {
    assertThatThrownBy(() -> inputs(Duration.ZERO, 0, Duration.ZERO)).hasMessageContaining("target recovery time PT0S must be positive");
    assertThatThrownBy(() -> inputs(Duration.ofSeconds(-5), 0, Duration.ZERO)).hasMessageContaining("must be positive");
    assertThatThrownBy(() -> source("k", 10, 0)).hasMessageContaining("replay rate of source 'k' is 0.0");
    assertThatThrownBy(() -> source("k", Double.NaN, 10)).hasMessageContaining("ingestRecordsPerSecond of k");
  }

  // ------------------------------------------------------------------ retention

  private static RetentionLimits kafka(Duration maxAge, long maxBytes, int partitions) {
    return new RetentionLimits(RetentionLimits.Reach.ANY_SNAPSHOT, maxAge, maxBytes, partitions, -1,
        Map.of("retention.ms", maxAge == null ? "-1" : Long.toString(maxAge.toMillis()), "retention.bytes", Long.toString(maxBytes)),
        List.of());
  }

  private static RetentionLimits postgres(long maxSlotWalKeepSize, double walRate) {
    return new RetentionLimits(RetentionLimits.Reach.NEWEST_SNAPSHOT, null, maxSlotWalKeepSize, 1, walRate,
        Map.of("max_slot_wal_keep_size", maxSlotWalKeepSize < 0 ? "-1" : (maxSlotWalKeepSize >> 20) + "MB"), List.of());
  }

  @Test
  void aKafkaTopicMustKeepEverySnapshotAFallbackMayReach() {
    Advisor.SourceRates k = source("orders", 10, 1000);
    Advisor.Inputs in = inputs(Duration.ofMinutes(2), 0, Duration.ofSeconds(10), k);
    // keep-last 7 at 1h: 7h + 10 s + margin 1h
    Advisor.RetentionCheck week = Advisor.retention(in, k, kafka(Duration.ofDays(7), -1, 1), Duration.ofHours(1));
    assertThat(week.keep()).isEqualTo(Duration.ofHours(8).plusSeconds(10));
    assertThat(week.warnings()).isEmpty();
    assertThat(Advisor.retention(in, k, kafka(null, -1, 1), Duration.ofHours(1)).warnings()).as("infinite").isEmpty();

    Advisor.RetentionCheck fourHours = Advisor.retention(in, k, kafka(Duration.ofHours(4), -1, 1), Duration.ofHours(1));
    assertThat(fourHours.reachesBack()).isEqualTo(2); // (4h - 10 s - 1h) / 1h
    assertThat(fourHours.warnings()).singleElement().asString()
        .contains("source 'orders'", "retention.ms=14400000", "newest 2 of the 7", "at least 28810000 ms", "keep-last to 2");
    Advisor.RetentionCheck oneHour = Advisor.retention(in, k, kafka(Duration.ofHours(1), -1, 1), Duration.ofHours(1));
    assertThat(oneHour.reachesBack()).isZero();
    assertThat(oneHour.warnings()).singleElement().asString().contains("even from the newest snapshot");
    // daily, keep-last 7, Kafka's default week: the oldest kept snapshot is out of reach
    Advisor.RetentionCheck daily = Advisor.retention(in, k, kafka(Duration.ofDays(7), -1, 1), Duration.ofDays(1));
    assertThat(daily.keep()).isEqualTo(Duration.ofDays(8).plusSeconds(10));
    assertThat(daily.warnings()).singleElement().asString().contains("newest 5 of the 7");
  }

  @Test
  void aKafkaTopicsSizeLimitIsPerPartition() {
    Advisor.SourceRates k = new Advisor.SourceRates("orders", 10, 1000, Duration.ofMinutes(5), 1000, "test");
    Advisor.Inputs in = inputs(Duration.ofMinutes(2), 0, Duration.ofSeconds(10), k);
    // 8h 00m 10s at 1000 B/s over 4 partitions = 7,202,500 B a partition
    Advisor.RetentionCheck c = Advisor.retention(in, k, kafka(null, 1 << 20, 4), Duration.ofHours(1));
    assertThat(Math.round(c.bytes())).isEqualTo(7_202_500L);
    assertThat(c.warnings()).singleElement().asString().contains("retention.bytes", "per partition", "6.9 MiB");
    assertThat(Advisor.retention(in, k, kafka(null, 8 << 20, 4), Duration.ofHours(1)).warnings()).isEmpty();
  }

  @Test
  void aPostgresSlotMustKeepOneIntervalOfTheServersWal() {
    Advisor.SourceRates pg = source("customers", 10, 10_000);
    Advisor.Inputs in = inputs(Duration.ofMinutes(2), 0, Duration.ofSeconds(10), pg);
    // only the newest snapshot: 1h + 10 s + 1h of WAL at 10 KiB/s = 70.4 MiB
    Advisor.RetentionCheck c = Advisor.retention(in, pg, postgres(64L << 20, 10_240), Duration.ofHours(1));
    assertThat(c.keep()).isEqualTo(Duration.ofHours(2).plusSeconds(10));
    assertThat(Math.round(c.bytes())).isEqualTo(10_240L * 7210);
    assertThat(c.warnings()).singleElement().asString().contains("max_slot_wal_keep_size=64MB", "invalidate the slot");
    assertThat(Advisor.retention(in, pg, postgres(128L << 20, 10_240), Duration.ofHours(1)).warnings()).isEmpty();
    assertThat(Advisor.retention(in, pg, postgres(-1, 10_240), Duration.ofHours(1)).warnings()).as("unlimited").isEmpty();
    // a sample that saw no WAL while the source receives 10 changes/s: 250 B a change is assumed
    Advisor.RetentionCheck quiet = Advisor.retention(in, pg, postgres(-1, 0), Duration.ofHours(1));
    assertThat(Math.round(quiet.bytes())).isEqualTo(2_500L * 7210);
    assertThat(quiet.bytesWhy()).contains("250 B assumed");
    // a daily schedule's margin is a day: two days of WAL
    assertThat(Advisor.retention(in, pg, postgres(-1, 1), Duration.ofDays(1)).keep()).isEqualTo(Duration.ofDays(2).plusSeconds(10));
  }

  @Test
  void durationsAndBytesReadAsAPersonWritesThem() {
    assertThat(Advisor.human(Duration.ofMillis(850))).isEqualTo("850 ms");
    assertThat(Advisor.human(Duration.ofMillis(12_345))).isEqualTo("12.3 s");
    assertThat(Advisor.human(Duration.ofSeconds(250))).isEqualTo("4m 10s");
    assertThat(Advisor.human(Duration.ofMinutes(15))).isEqualTo("15m");
    assertThat(Advisor.human(Duration.ofSeconds(11_670))).isEqualTo("3h 14m");
    assertThat(Advisor.human(Duration.ofHours(193))).isEqualTo("8d 01h");
    assertThat(Advisor.bytes(1536)).isEqualTo("1.5 KiB");
  }
}
