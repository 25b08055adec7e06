package io.cairn.benchmarks.takeover;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Objects;

/**
 * One size of the takeover benchmark: the workload, the standby's kind, the two measurements and
 * the goal checks. Times are milliseconds; -1 where a moment was not observed.
 *
 * @param rows the requested table size; {@code tableRows} is what the generator's records leave
 * @param standbyWarm whether the standby served reads before it took the store (a warm standby)
 * @param standbyStatus the standby's last {@code /status} before the kill
 * @param snapshot the answer of {@code POST /snapshot} on the first owner
 * @param queriesChecked every answer of every node compared with the oracle (all equal, else the run fails)
 */
public record TakeoverResult(
    long rows,
    String heap,
    long sessionTimeoutMillis,
    long keys,
    long limit,
    long tableRows,
    long firstOwnerCaughtUpMillis,
    long snapshotMillis,
    JsonNode snapshot,
    boolean standbyWarm,
    long standbyPreparedMillis,
    JsonNode standbyStatus,
    Freshness firstOwner,
    Timeline takeover,
    Timeline coldRestart,
    boolean sameSnapshot,
    long queriesChecked,
    List<Goal> goals) {
  public TakeoverResult {
    Objects.requireNonNull(takeover, "takeover");
    Objects.requireNonNull(coldRestart, "coldRestart");
    goals = List.copyOf(goals);
  }

  /** A result with its goals: at 10M rows or more, fresh within the session timeout + 2 s of the kill, and at least 5x a cold restart. */
  static TakeoverResult withGoals(long rows, String heap, long sessionTimeoutMillis, long keys, long limit, long tableRows,
      long firstOwnerCaughtUpMillis, long snapshotMillis, JsonNode snapshot, boolean standbyWarm, long standbyPreparedMillis,
      JsonNode standbyStatus, Freshness firstOwner, Timeline takeover, Timeline coldRestart, boolean sameSnapshot, long queriesChecked) {
    boolean applies = rows >= 10_000_000;
    long bound = sessionTimeoutMillis + 2_000;
    long took = takeover.killToFreshMillis();
    double ratio = took <= 0 ? Double.NaN : (double) coldRestart.killToFreshMillis() / took;
    List<Goal> goals = List.of(
        new Goal("takeover (kill to fresh answer) within the session timeout + 2 s", "<= " + bound + " ms", took + " ms", took <= bound,
            applies),
        new Goal("takeover at least 5x faster than a cold restart (both from the kill)", ">= 5.0x",
            String.format(java.util.Locale.ROOT, "%.2fx", ratio), ratio >= 5.0, applies));
    return new TakeoverResult(rows, heap, sessionTimeoutMillis, keys, limit, tableRows, firstOwnerCaughtUpMillis, snapshotMillis, snapshot,
        standbyWarm, standbyPreparedMillis, standbyStatus, firstOwner, takeover, coldRestart, sameSnapshot, queriesChecked, goals);
  }

  /** coldRestart.killToFresh / takeover.killToFresh. */
  public double coldOverTakeover() {
    return takeover.killToFreshMillis() <= 0 ? Double.NaN : (double) coldRestart.killToFreshMillis() / takeover.killToFreshMillis();
  }

  /** How fresh the killed owner was just before its kill: its last closed tick and the generator's offset. */
  public record Freshness(long epoch, long lastClosedTick, long offset) {}

  /**
   * One recovery after a kill -9, each moment measured from the kill.
   *
   * @param killToStartMillis when the recovering JVM started (0 for a standby: it was running)
   * @param killToTookStoreMillis when its status first showed it past standing by (the group gave it the store)
   * @param killToReadyMillis when its status first said ready (recovered, caught up, serving)
   * @param killToFreshMillis when a query first returned the oracle's answer with the source at least where the
   *     killed owner was, the node the owner
   * @param epoch the epoch it took
   * @param recovery its {@code GET /recovery} report (phases, snapshot, records replayed)
   */
  public record Timeline(long killToStartMillis, long killToTookStoreMillis, long killToReadyMillis, long killToFreshMillis, long epoch,
      JsonNode recovery) {
    /** From the JVM's start to the fresh answer (the same as from the kill for a standby). */
    public long startToFreshMillis() {
      return killToFreshMillis - killToStartMillis;
    }
  }

  /** One goal: what, the bound, the measured value, whether met, and at which size it applies. */
  public record Goal(String what, String bound, String measured, boolean met, boolean applies) {}
}
