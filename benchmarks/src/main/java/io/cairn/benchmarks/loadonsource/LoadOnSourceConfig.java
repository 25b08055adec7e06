package io.cairn.benchmarks.loadonsource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * The size and shape of one load-on-source run.
 *
 * <p>Simulated time: at "midnight" (hour 0) the topic already holds {@code initialOrders} records
 * and the table {@code initialCustomers} rows; then come {@code hours} simulated hours, each one
 * batch of {@code ordersPerHour} Kafka records and {@code customerChangesPerHour} Postgres row
 * changes; then half an hour more (half a batch of each) and the crash. Snapshots are taken at
 * every {@code curveStepHours}-th hour boundary from 0 to {@code hours} (none when {@code
 * curveStepHours} equals {@code hours}), at {@code hours - 24} (the daily snapshot), at {@code hours}
 * (the hourly one) and right before the crash.
 *
 * @param hours simulated hours of history after midnight (≥ 1)
 * @param ordersPerHour Kafka records per simulated hour
 * @param customerChangesPerHour Postgres row changes (insert, update, delete) per simulated hour
 * @param initialOrders Kafka records before midnight
 * @param initialCustomers table rows before midnight
 * @param orderKeys distinct order ids (the topic is keyed by order id; upserts and tombstones)
 * @param partitions partitions of the topic
 * @param transactionRows Postgres rows changed per transaction
 * @param curveStepHours snapshot every this many hours for the "grows with hours since the snapshot" curve
 * @param postgres whether the Postgres table (CDC) is part of the run
 * @param peer whether to run the Kafka Streams comparison
 * @param repeats recoveries per strategy; the one with the median wall time is reported (the load
 *     figures are the same every time)
 * @param seed random seed of the workload
 * @param outputDir where the report, charts and results go
 * @param brokerInChildJvm see {@link #withBrokerInChildJvm}
 * @param standbys whether to also measure a group of two nodes on the daily snapshot, the standby
 *     warm and then hot: what standing by and taking over read from the sources
 * @param orderHistory whether the node also reads the topic append-only (every order record ever
 *     written, tombstones skipped) and joins that history with the table: a join whose state
 *     grows with the whole history, not with the live keys (the large scenario's)
 * @param adviseTargetMillis a recovery time to ask {@code cairn advise} for, or 0: none; else the run also
 *     snapshots at the ages a schedule of {@link io.cairn.node.advise.Advisor#SCHEDULES} from 1 to 12
 *     hours leaves at worst (the interval plus half an hour: a crash just before the next snapshot),
 *     asks the node recovered from the daily snapshot for advice at the scenario's live ingest rates,
 *     and recovers the snapshot of the recommended schedule's age: the advice applied in a measured
 *     run (the large scenario's: {@link #LARGE_ADVISE_TARGET})
 */
public record LoadOnSourceConfig(
    int hours,
    int ordersPerHour,
    int customerChangesPerHour,
    int initialOrders,
    int initialCustomers,
    int orderKeys,
    int partitions,
    int transactionRows,
    int curveStepHours,
    boolean postgres,
    boolean peer,
    int repeats,
    long seed,
    Path outputDir,
    boolean brokerInChildJvm,
    boolean standbys,
    boolean orderHistory,
    long adviseTargetMillis) {

  public LoadOnSourceConfig {
    positive("hours", hours);
    positive("ordersPerHour", ordersPerHour);
    positive("customerChangesPerHour", customerChangesPerHour);
    positive("initialCustomers", initialCustomers);
    positive("orderKeys", orderKeys);
    positive("partitions", partitions);
    positive("transactionRows", transactionRows);
    positive("curveStepHours", curveStepHours);
    positive("repeats", repeats);
    if (initialOrders < 0) {
      throw new IllegalArgumentException("Cannot configure the benchmark: initialOrders must be >= 0, was " + initialOrders);
    }
    if (curveStepHours > hours) {
      throw new IllegalArgumentException("Cannot configure the benchmark: curveStepHours (" + curveStepHours
          + ") must not exceed hours (" + hours + ")");
    }
    Objects.requireNonNull(outputDir, "outputDir");
    if (adviseTargetMillis < 0) {
      throw new IllegalArgumentException("Cannot configure the benchmark: adviseTargetMillis must be >= 0, was " + adviseTargetMillis);
    }
  }

  /** The large scenario's recovery target for {@code cairn advise} (see {@link #adviseTargetMillis}). */
  public static final Duration LARGE_ADVISE_TARGET = Duration.ofSeconds(30);

  /** The recovery time {@code cairn advise} is asked for (see {@link #adviseTargetMillis}), or null: none. */
  public Duration adviseTarget() {
    return adviseTargetMillis == 0 ? null : Duration.ofMillis(adviseTargetMillis);
  }

  /** See {@link #adviseTargetMillis}; null: no advised strategy. */
  public LoadOnSourceConfig withAdviseTarget(Duration target) {
    if (target != null && (target.isNegative() || target.isZero())) {
      throw new IllegalArgumentException("Cannot configure the benchmark: the advise target must be positive, was " + target);
    }
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, target == null ? 0 : target.toMillis());
  }

  private static void positive(String name, long v) {
    if (v <= 0) {
      throw new IllegalArgumentException("Cannot configure the benchmark: " + name + " must be > 0, was " + v);
    }
  }

  /** The default size of {@code cairn bench load-on-source}: 24 simulated hours, a few minutes here. */
  public static LoadOnSourceConfig defaults(Path outputDir) {
    return new LoadOnSourceConfig(24, 10_000, 2_000, 20_000, 10_000, 20_000, 3, 200, 6, true, true, 3, 42, outputDir, true, true, false, 0);
  }

  /** The size the default test suite runs: seconds. */
  public static LoadOnSourceConfig tiny(Path outputDir) {
    return new LoadOnSourceConfig(2, 600, 120, 300, 200, 400, 3, 40, 2, true, true, 1, 7, outputDir, false, false, false, 0);
  }

  /**
   * The large scenario ({@code cairn bench load-on-source --scale large}): 30 simulated days, 100M
   * Kafka records (1M before midnight, 137,500 an hour) over 10M order ids, a table of 1M customers
   * changed 3M times (4,167 changes an hour in transactions of 200), 6 partitions, and the order
   * history join (about 95M rows of join state at the crash). Snapshots a day before the crash, at
   * the last hour and right before it, no growth curve; one recovery per strategy; no Kafka
   * Streams peer (it processes about 31K records/s here: 100M records would take an hour) and no
   * standbys. Needs a heap of about 20 GiB.
   */
  public static LoadOnSourceConfig large(Path outputDir) {
    return new LoadOnSourceConfig(720, 137_500, 4_167, 1_000_000, 1_000_000, 10_000_000, 6, 200, 720, true, false, 1, 42,
        outputDir, true, false, true, LARGE_ADVISE_TARGET.toMillis());
  }

  /** See {@link #orderHistory}. */
  public LoadOnSourceConfig withOrderHistory(boolean on) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        on, adviseTargetMillis);
  }

  /** The same scenario with other sizes (the order history and every other choice kept). */
  public LoadOnSourceConfig withSizes(int initialOrders, int initialCustomers, int orderKeys, int partitions) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withHours(int h, int step) {
    return new LoadOnSourceConfig(h, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, step, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withRates(int orders, int customerChanges) {
    return new LoadOnSourceConfig(hours, orders, customerChanges, initialOrders, initialCustomers, orderKeys, partitions,
        transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withPostgres(boolean on) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, on, peer, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withPeer(boolean on) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, on, repeats, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withRepeats(int n) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, n, seed, outputDir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  public LoadOnSourceConfig withOutputDir(Path dir) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, dir, brokerInChildJvm, standbys,
        orderHistory, adviseTargetMillis);
  }

  /**
   * Whether the Kafka broker runs in a child JVM (the default of {@code cairn bench load-on-source}:
   * as in production, the node's JVM then holds no broker threads, heap or compiled broker code)
   * or in the benchmark's own JVM (the test suite's tiny run).
   */
  public LoadOnSourceConfig withBrokerInChildJvm(boolean on) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, on, standbys,
        orderHistory, adviseTargetMillis);
  }

  /**
   * Whether to measure the standby strategies ({@code warm-standby}, {@code hot-standby}): an owner
   * and a standby in a group on a copy of the daily snapshot's store, the owner stopped cleanly.
   */
  public LoadOnSourceConfig withStandbys(boolean on) {
    return new LoadOnSourceConfig(hours, ordersPerHour, customerChangesPerHour, initialOrders, initialCustomers, orderKeys,
        partitions, transactionRows, curveStepHours, postgres, peer, repeats, seed, outputDir, brokerInChildJvm, on,
        orderHistory, adviseTargetMillis);
  }
}
