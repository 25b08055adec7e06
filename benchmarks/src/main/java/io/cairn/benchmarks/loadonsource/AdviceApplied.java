package io.cairn.benchmarks.loadonsource;

/**
 * {@code cairn advise} applied in a measured run: the advice the node recovered from the daily
 * snapshot gave for a target at the scenario's live ingest, and the recovery from the snapshot
 * whose age that schedule leaves at worst.
 *
 * @param targetMillis the recovery time asked for
 * @param cron the recommended {@code snapshots.cron}, or null when no schedule meets the target
 * @param intervalMillis the recommended schedule's interval (0 when none)
 * @param predictedWorstMillis the advice's worst-case recovery at that schedule (0 when none)
 * @param strategy the strategy recovered ({@code advised-every-Nh}), or null when none was
 * @param hoursSinceSnapshot that snapshot's age at the crash: the interval plus half an hour
 * @param measuredMillis that recovery's time (-1 when none ran)
 * @param adviceText the advice as {@code cairn advise} prints it
 */
public record AdviceApplied(long targetMillis, String cron, long intervalMillis, long predictedWorstMillis, String strategy,
    double hoursSinceSnapshot, long measuredMillis, String adviceText) {

  /** Whether a recovery ran and took no longer than the target. */
  public boolean withinTarget() {
    return measuredMillis >= 0 && measuredMillis <= targetMillis;
  }
}
