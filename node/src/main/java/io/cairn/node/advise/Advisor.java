package io.cairn.node.advise;

import io.cairn.engine.source.RetentionLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Advice on a snapshot schedule: from a node's measured rates, the longest snapshot interval whose
 * worst-case recovery meets a target, rounded down to a schedule a person would write, and what
 * that schedule asks of the sources' retention. Pure: no clock, no I/O; the node gathers the
 * {@link Inputs} and the sources' {@link RetentionLimits}.
 *
 * <p>The model. {@code I} is the snapshot interval (the schedule's longest gap between two
 * slots), {@code D} a snapshot's duration (capture to commit). A recovery ({@link
 * io.cairn.node.RecoveryReport}'s phases) costs
 *
 * <ul>
 *   <li>{@code P}: the catalog up to the snapshot and the sources' connect, which run while the
 *       snapshot loads, so the two cost {@code max(P, L)};
 *   <li>{@code L = rows / loadRate}: the snapshot load (list, download, verify, decode);
 *   <li>{@code A}: restore, the catalog after the snapshot, seek and report, after the load;
 *   <li>{@code C}: the catch-up, replaying what each source received since the snapshot's capture.
 * </ul>
 *
 * Sources are replayed <em>one after another, not in parallel</em>: one ticking thread polls every
 * source in turn and one tick pipeline computes their records ({@code SourceIngest.poll},
 * {@code Recovery.catchUp}), so their costs add. A backlog of {@code B_s} records of source
 * {@code s} costs {@code B_s / r_s} seconds at its replay rate {@code r_s}, and while the catch-up
 * runs the sources keep receiving records at {@code λ_s}, which take the share {@code U = Σ λ_s /
 * r_s} of the replay's capacity. The backlog at the catch-up's start is what arrived since the
 * snapshot's capture: its age {@code a} at the crash plus the recovery so far ({@code max(P, L) +
 * A}). Catching up a backlog that grows at {@code U} takes {@code work / (1 - U)}, so
 *
 * <pre>
 *   R(a) = max(P, L) + A + U (a + max(P, L) + A) / (1 - U)  =  (max(P, L) + A + U a) / (1 - U)
 * </pre>
 *
 * The worst case is a crash just before the next snapshot commits: {@code a = I + D}. The average,
 * over a crash at a uniformly random moment, is {@code a = D + E[g²] / (2 E[g])} over the
 * schedule's gaps {@code g} ({@code D + I/2} for a regular schedule). Solving {@code R(I + D) ≤
 * target} gives {@code I ≤ (target (1 - U) - max(P, L) - A) / U - D}, rounded down to one of
 * {@link #SCHEDULES}; a schedule shorter than {@code D} is not offered (snapshots would queue).
 * {@code U ≥ 1} means the node cannot even keep up with live ingest; an {@code I} below zero means
 * even continuous snapshots miss the target, and the advice names the largest term. With no
 * ingest the recovery does not depend on the schedule and the longest (daily) is offered.
 *
 * <p>Retention. A recovery falls back past a snapshot that does not verify to the one before,
 * down to the oldest kept ({@code snapshots.retention.keep-last = N}; daily snapshots kept beyond
 * them are not counted). At the worst moment the k-th newest snapshot was captured {@code k I + D}
 * ago. A source that can resume from any snapshot (a Kafka topic) must therefore keep {@code N I +
 * D + margin}; a source that can resume only from the newest (a Postgres slot, confirmed after each
 * commit) must keep {@code I + D + margin} of WAL. The margin, {@code max(1 h, I)}, lets one
 * scheduled snapshot fail (the store unreachable) without the next recovery finding its records
 * gone. Bytes follow from the time and a byte rate: the probe's own (the server's WAL rate, which a
 * slot retains for every table) or the source's ingest bytes, per partition.
 */
public final class Advisor {
  private Advisor() {}

  /** Schedules offered, shortest first: each divides an hour or a day, so its slots are evenly spaced. */
  public static final List<Schedule> SCHEDULES = List.of(
      new Schedule(Duration.ofMinutes(1), "0 * * * * ?"),
      new Schedule(Duration.ofMinutes(2), "0 0/2 * * * ?"),
      new Schedule(Duration.ofMinutes(5), "0 0/5 * * * ?"),
      new Schedule(Duration.ofMinutes(10), "0 0/10 * * * ?"),
      new Schedule(Duration.ofMinutes(15), "0 0/15 * * * ?"),
      new Schedule(Duration.ofMinutes(30), "0 0/30 * * * ?"),
      new Schedule(Duration.ofHours(1), "0 0 * * * ?"),
      new Schedule(Duration.ofHours(2), "0 0 0/2 * * ?"),
      new Schedule(Duration.ofHours(3), "0 0 0/3 * * ?"),
      new Schedule(Duration.ofHours(4), "0 0 0/4 * * ?"),
      new Schedule(Duration.ofHours(6), "0 0 0/6 * * ?"),
      new Schedule(Duration.ofHours(8), "0 0 0/8 * * ?"),
      new Schedule(Duration.ofHours(12), "0 0 0/12 * * ?"),
      new Schedule(Duration.ofHours(24), "0 0 0 * * ?"));

  /** The least margin added to a retention requirement (see the class comment). */
  public static final Duration MIN_RETENTION_MARGIN = Duration.ofHours(1);

  /** WAL bytes per change assumed when the server's WAL rate was not measured: 49,000 rows made 10.1 MB of WAL (RESULTS.md), rounded up. */
  public static final double ASSUMED_WAL_BYTES_PER_CHANGE = 250;

  /** A schedule: its interval and the Quartz cron expression for {@code snapshots.cron}. */
  public record Schedule(Duration interval, String cron) {
    public Schedule {
      requirePositive(interval, "interval");
      Objects.requireNonNull(cron, "cron");
    }
  }

  /**
   * A schedule's gaps: the longest (the worst case waits for it) and the mean age of the newest
   * snapshot's capture at a random moment, {@code E[g²] / (2 E[g])}.
   */
  public record Cadence(Duration longestGap, Duration meanAge) {
    public Cadence {
      requirePositive(longestGap, "longestGap");
      requireNonNegative(meanAge, "meanAge");
    }

    /** A regular schedule: every gap is {@code interval}. */
    public static Cadence every(Duration interval) {
      return new Cadence(interval, interval.dividedBy(2));
    }

    /** From the gaps between consecutive slots (at least one). */
    public static Cadence of(List<Duration> gaps) {
      if (gaps.isEmpty()) {
        throw new IllegalArgumentException("Cannot describe a schedule without gaps");
      }
      double sum = 0;
      double squares = 0;
      Duration longest = Duration.ZERO;
      for (Duration g : gaps) {
        double s = g.toNanos() / 1e9;
        sum += s;
        squares += s * s;
        longest = g.compareTo(longest) > 0 ? g : longest;
      }
      return new Cadence(longest, seconds(squares / (2 * sum)));
    }
  }

  /**
   * One source: its live ingest over a recent window and the rate its records replay at, each
   * with where the figure comes from ({@code measured ...} or {@code assumed ...}).
   */
  public record SourceRates(String name, double ingestRecordsPerSecond, double ingestBytesPerSecond, Duration ingestWindow,
      double replayRecordsPerSecond, String replayBasis) {
    public SourceRates {
      Objects.requireNonNull(name, "name");
      requireRate(ingestRecordsPerSecond, "ingestRecordsPerSecond of " + name);
      requireRate(ingestBytesPerSecond, "ingestBytesPerSecond of " + name);
      requireNonNegative(ingestWindow, "ingestWindow");
      if (!(replayRecordsPerSecond > 0) || Double.isInfinite(replayRecordsPerSecond)) {
        throw new IllegalArgumentException("Cannot advise: replay rate of source '" + name + "' is " + replayRecordsPerSecond
            + " records/s; it must be positive");
      }
      Objects.requireNonNull(replayBasis, "replayBasis");
    }
  }

  /**
   * A source's live ingest: records and bytes per second over a window (a zero window: not measured
   * yet). What a serving node measures ({@code IngestRates}), or what a caller states instead.
   */
  public record Ingest(double recordsPerSecond, double bytesPerSecond, Duration window) {
    public Ingest {
      requireRate(recordsPerSecond, "recordsPerSecond");
      requireRate(bytesPerSecond, "bytesPerSecond");
      requireNonNegative(window, "window");
    }
  }

  /** A figure and where it comes from. */
  public record Basis(Duration value, String basis) {
    public Basis {
      requireNonNegative(value, "value");
      Objects.requireNonNull(basis, "basis");
    }
  }

  /**
   * Everything the model needs.
   *
   * @param target the recovery time asked for
   * @param sources every source of the node
   * @param stateRows rows of the snapshot a recovery would load (the newest)
   * @param stateBytes its bytes
   * @param loadRowsPerSecond the snapshot load's rate, with {@code loadBasis}
   * @param beforeLoad recovery work that overlaps the load (catalog to snapshot, connect sources)
   * @param afterLoad recovery work after it (restore, catalog after snapshot, seek, report)
   * @param snapshotDuration a snapshot's capture to commit
   * @param current the schedule configured now, {@code currentCron} its expression
   * @param keepLast {@code snapshots.retention.keep-last}
   */
  public record Inputs(Duration target, List<SourceRates> sources, long stateRows, long stateBytes, double loadRowsPerSecond,
      String loadBasis, Basis beforeLoad, Basis afterLoad, Basis snapshotDuration, Cadence current, String currentCron,
      int keepLast) {
    public Inputs {
      requirePositive(target, "target recovery time");
      sources = List.copyOf(sources);
      if (stateRows < 0 || stateBytes < 0) {
        throw new IllegalArgumentException("Cannot advise: state of " + stateRows + " rows, " + stateBytes + " bytes");
      }
      if (!(loadRowsPerSecond > 0)) {
        throw new IllegalArgumentException("Cannot advise: load rate " + loadRowsPerSecond + " rows/s must be positive");
      }
      Objects.requireNonNull(loadBasis, "loadBasis");
      Objects.requireNonNull(beforeLoad, "beforeLoad");
      Objects.requireNonNull(afterLoad, "afterLoad");
      Objects.requireNonNull(snapshotDuration, "snapshotDuration");
      Objects.requireNonNull(current, "current");
      Objects.requireNonNull(currentCron, "currentCron");
      if (keepLast < 1) {
        throw new IllegalArgumentException("Cannot advise: keep-last " + keepLast + " must be at least 1");
      }
    }

    /** The snapshot load's time, {@code L}. */
    public Duration load() {
      return seconds(stateRows / loadRowsPerSecond);
    }

    /** {@code U}: the share of the replay's capacity that live ingest takes. */
    public double liveShare() {
      return sources.stream().mapToDouble(s -> s.ingestRecordsPerSecond() / s.replayRecordsPerSecond()).sum();
    }
  }

  /** Worst-case and average recovery of a schedule. */
  public record Estimate(Duration worst, Duration average) {}

  /**
   * The advice: the recommended schedule (null when none meets the target, {@code infeasible}
   * saying why and {@code dominant} what costs most), the longest interval that meets it
   * unrounded (null: any), the recovery expected at the recommended and at the current schedule.
   */
  public record Advice(Inputs inputs, Schedule recommended, Duration maxInterval, Estimate atRecommended, Estimate atCurrent,
      boolean currentMeetsTarget, double liveShare, String infeasible, String dominant, Estimate floor, List<String> notes) {
    public Advice {
      notes = List.copyOf(notes);
    }

    public boolean feasible() {
      return recommended != null;
    }
  }

  /** The recovery after a crash whose newest snapshot was captured {@code age} ago: {@code R(a)}. */
  public static Duration recovery(Inputs in, Duration age) {
    double u = in.liveShare();
    if (u >= 1) {
      return null;
    }
    double base = base(in);
    return seconds((base + u * secs(age)) / (1 - u));
  }

  /** Worst case and average for a schedule of {@code cadence}. */
  public static Estimate estimate(Inputs in, Cadence cadence) {
    Duration d = in.snapshotDuration().value();
    return new Estimate(recovery(in, cadence.longestGap().plus(d)), recovery(in, cadence.meanAge().plus(d)));
  }

  private static double base(Inputs in) {
    return Math.max(secs(in.beforeLoad().value()), secs(in.load())) + secs(in.afterLoad().value());
  }

  /** Solves the model for {@code in} (see the class comment). */
  public static Advice advise(Inputs in) {
    double u = in.liveShare();
    double t = secs(in.target());
    double d = secs(in.snapshotDuration().value());
    double base = base(in);
    List<String> notes = new ArrayList<>();
    Estimate current = u < 1 ? estimate(in, in.current()) : null;
    boolean currentMeets = current != null && current.worst().compareTo(in.target()) <= 0;
    if (u >= 1) {
      String why = String.format(Locale.ROOT, "the sources' live ingest needs %.0f%% of the rate their records replay at: "
          + "a recovery would never catch up, whatever the schedule (%s)", u * 100, shares(in));
      return new Advice(in, null, null, null, null, false, u, why, "live ingest", null, notes);
    }
    Estimate floor = new Estimate(recovery(in, Duration.ofNanos((long) (d * 1e9))), recovery(in, Duration.ofNanos((long) (d * 1e9))));
    String dominant = dominant(in, u);
    if (u == 0) {
      if (base > t) {
        return new Advice(in, null, null, null, current, currentMeets, u, "a recovery costs " + human(seconds(base))
            + " before any replay, more than the target " + human(in.target()) + "; " + dominant + " dominates",
            dominant, floor, notes);
      }
      notes.add("no source received records in the measured window: the recovery does not depend on the schedule");
      Schedule longest = SCHEDULES.get(SCHEDULES.size() - 1);
      return new Advice(in, longest, null, estimate(in, Cadence.every(longest.interval())), current, currentMeets, u, null,
          dominant, floor, notes);
    }
    double maxI = (t * (1 - u) - base) / u - d;
    if (maxI < 0) {
      return new Advice(in, null, seconds(Math.max(0, maxI)), null, current, currentMeets, u,
          "even with continuous snapshots a recovery takes at least " + human(floor.worst()) + ", more than the target "
              + human(in.target()) + "; " + dominant + " dominates", dominant, floor, notes);
    }
    Duration maxInterval = seconds(maxI);
    Schedule pick = null;
    for (Schedule s : SCHEDULES) {
      if (s.interval().compareTo(maxInterval) <= 0) {
        pick = s;
      }
    }
    if (pick == null) {
      return new Advice(in, null, maxInterval, null, current, currentMeets, u, "the target needs a snapshot at least every "
          + human(maxInterval) + "; the shortest schedule offered is every minute", dominant, floor, notes);
    }
    if (pick.interval().compareTo(in.snapshotDuration().value()) < 0) {
      return new Advice(in, null, maxInterval, null, current, currentMeets, u, "the target needs a snapshot every "
          + human(pick.interval()) + ", but a snapshot takes " + human(in.snapshotDuration().value())
          + ": snapshots would queue behind each other", dominant, floor, notes);
    }
    if (maxInterval.compareTo(SCHEDULES.get(SCHEDULES.size() - 1).interval()) > 0) {
      notes.add("a longer interval than a day would meet the target too; daily is the longest schedule offered");
    }
    return new Advice(in, pick, maxInterval, estimate(in, Cadence.every(pick.interval())), current, currentMeets, u, null,
        dominant, floor, notes);
  }

  /** The largest term of the shortest recovery possible ({@code R(D)}), named for a person. */
  static String dominant(Inputs in, double u) {
    double pre = secs(in.beforeLoad().value());
    double load = secs(in.load());
    double post = secs(in.afterLoad().value());
    double replay = u * secs(in.snapshotDuration().value()) / (1 - u)
        + (u / (1 - u)) * (Math.max(pre, load) + post);
    String[] names = {
      "the fixed recovery costs before the load (" + in.beforeLoad().basis() + ")",
      String.format(Locale.ROOT, "loading the snapshot (%,d rows at %,.0f rows/s)", in.stateRows(), in.loadRowsPerSecond()),
      "the fixed recovery costs after the load (" + in.afterLoad().basis() + ")",
      "replaying what arrives while a snapshot is taken and while the node recovers (" + shares(in) + ")"};
    double[] values = {load >= pre ? 0 : pre, load >= pre ? load : 0, post, replay};
    int best = 0;
    for (int i = 1; i < values.length; i++) {
      if (values[i] > values[best]) {
        best = i;
      }
    }
    return names[best] + ", " + human(seconds(values[best]));
  }

  private static String shares(Inputs in) {
    StringBuilder sb = new StringBuilder();
    for (SourceRates s : in.sources()) {
      if (s.ingestRecordsPerSecond() > 0) {
        sb.append(sb.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %,.0f/s of %,.0f/s", s.name(),
            s.ingestRecordsPerSecond(), s.replayRecordsPerSecond()));
      }
    }
    return sb.length() == 0 ? "no ingest" : sb.toString();
  }

  // ------------------------------------------------------------------ retention

  /**
   * What one source must keep for {@code interval}: the time and bytes, and whether its limits
   * hold them (null limits: no probe result). {@code reachesBack} is how many of the newest
   * snapshots its age limit still covers at the worst moment (-1: unlimited).
   */
  public record RetentionCheck(String source, RetentionLimits.Reach reach, Duration keep, String keepWhy, double bytes,
      String bytesWhy, RetentionLimits limits, long reachesBack, List<String> warnings) {
    public RetentionCheck {
      warnings = List.copyOf(warnings);
    }
  }

  /** The margin added to a retention requirement for {@code interval}: {@code max(1 h, interval)}. */
  public static Duration margin(Duration interval) {
    return interval.compareTo(MIN_RETENTION_MARGIN) > 0 ? interval : MIN_RETENTION_MARGIN;
  }

  /**
   * Checks one source's {@code limits} against a schedule of {@code interval}: the time it must
   * keep (by its reach), the bytes that makes, and a warning per limit that is too small.
   */
  public static RetentionCheck retention(Inputs in, SourceRates src, RetentionLimits limits, Duration interval) {
    Duration d = in.snapshotDuration().value();
    Duration margin = margin(interval);
    boolean any = limits.reach() == RetentionLimits.Reach.ANY_SNAPSHOT;
    int n = any ? in.keepLast() : 1;
    Duration keep = interval.multipliedBy(n).plus(d).plus(margin);
    String keepWhy = (any ? n + " × " + human(interval) + " (keep-last " + n + ": a recovery may fall back to the oldest kept)"
        : human(interval) + " (only the newest snapshot can be resumed from)")
        + " + snapshot " + human(d) + " + margin " + human(margin);
    double rate;
    String rateWhy;
    if (limits.bytesPerSecond() >= 0) {
      double assumed = src.ingestRecordsPerSecond() * ASSUMED_WAL_BYTES_PER_CHANGE;
      if (limits.bytesPerSecond() >= assumed) {
        rate = limits.bytesPerSecond();
        rateWhy = String.format(Locale.ROOT, "measured %s/s", bytes(rate));
      } else {
        rate = assumed;
        rateWhy = String.format(Locale.ROOT, "%,.0f changes/s × %.0f B assumed (the %s/s sampled is less)",
            src.ingestRecordsPerSecond(), ASSUMED_WAL_BYTES_PER_CHANGE, bytes(limits.bytesPerSecond()));
      }
    } else {
      rate = src.ingestBytesPerSecond() / limits.shares();
      rateWhy = String.format(Locale.ROOT, "ingest %s/s%s", bytes(src.ingestBytesPerSecond()),
          limits.shares() > 1 ? " over " + limits.shares() + " partitions, assumed even" : "");
    }
    double needBytes = rate * secs(keep);
    String bytesWhy = bytes(needBytes) + (limits.shares() > 1 ? " per partition" : "") + " (" + rateWhy + " × " + human(keep) + ")";
    List<String> warnings = new ArrayList<>();
    long reachesBack = -1;
    Duration maxAge = limits.maxAge();
    if (maxAge != null) {
      Duration usable = maxAge.minus(d).minus(margin);
      reachesBack = usable.isNegative() ? 0 : usable.toNanos() / interval.toNanos();
      if (maxAge.compareTo(keep) < 0) {
        String reachText = reachesBack == 0
            ? "a recovery even from the newest snapshot may find records it must replay already deleted"
            : reachesBack == 1 && n > 1 ? "a recovery cannot fall back past the newest snapshot"
            : "a fallback reaches only the newest " + reachesBack + " of the " + n + " snapshots kept";
        warnings.add(String.format(Locale.ROOT, "source '%s': %s keeps records for %s, but a snapshot every %s needs %s = %s: %s. "
                + "Raise it to at least %d ms%s", src.name(), setting(limits, "retention.ms", "the age limit"), human(maxAge),
            human(interval), keepWhy, human(keep), reachText, keep.toMillis(),
            any && reachesBack >= 1 ? " or lower snapshots.retention.keep-last to " + reachesBack : ""));
      }
    }
    if (limits.maxBytes() >= 0 && needBytes > limits.maxBytes()) {
      warnings.add(String.format(Locale.ROOT, "source '%s': %s is %s%s, but a snapshot every %s needs about %s: %s. Raise it "
              + "or snapshot more often", src.name(), any ? setting(limits, "retention.bytes", "the size limit")
              : setting(limits, "max_slot_wal_keep_size", "the WAL limit"), bytes(limits.maxBytes()),
          limits.shares() > 1 ? " per partition" : "", human(interval), bytesWhy,
          any ? "the oldest records a fallback needs may be deleted"
              : "Postgres would invalidate the slot and the next recovery could not resume it"));
    }
    for (String note : limits.notes()) {
      warnings.add("source '" + src.name() + "': " + note);
    }
    return new RetentionCheck(src.name(), limits.reach(), keep, keepWhy, needBytes, bytesWhy, limits, reachesBack, warnings);
  }

  private static String setting(RetentionLimits limits, String name, String otherwise) {
    String v = limits.settings().get(name);
    return v == null ? otherwise : name + "=" + v;
  }

  // ------------------------------------------------------------------ figures

  /** A duration for people: {@code 850 ms}, {@code 12.3 s}, {@code 4m 10s}, {@code 2h 05m}, {@code 8d 01h}. */
  public static String human(Duration d) {
    if (d == null) {
      return "-";
    }
    long ms = d.toMillis();
    if (ms < 1000) {
      return ms + " ms";
    }
    if (ms < 60_000) {
      return String.format(Locale.ROOT, "%.1f s", ms / 1000.0);
    }
    long s = d.toSeconds();
    if (s < 3600) {
      return s % 60 == 0 ? s / 60 + "m" : String.format(Locale.ROOT, "%dm %02ds", s / 60, s % 60);
    }
    if (s < 86_400) {
      long m = s / 60;
      return m % 60 == 0 ? m / 60 + "h" : String.format(Locale.ROOT, "%dh %02dm", m / 60, m % 60);
    }
    long h = s / 3600;
    return h % 24 == 0 ? h / 24 + "d" : String.format(Locale.ROOT, "%dd %02dh", h / 24, h % 24);
  }

  /** Bytes for people: {@code 512 B}, {@code 1.5 MiB}. */
  public static String bytes(double b) {
    String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < units.length - 1) {
      b /= 1024;
      i++;
    }
    return i == 0 ? String.format(Locale.ROOT, "%.0f B", b) : String.format(Locale.ROOT, "%.1f %s", b, units[i]);
  }

  static double secs(Duration d) {
    return d.toNanos() / 1e9;
  }

  static Duration seconds(double s) {
    return Duration.ofNanos(Math.round(Math.min(s, Long.MAX_VALUE / 1e9 / 2) * 1e9));
  }

  private static void requirePositive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("Cannot advise: " + what + " " + d + " must be positive");
    }
  }

  private static void requireNonNegative(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative()) {
      throw new IllegalArgumentException("Cannot advise: " + what + " " + d + " is negative");
    }
  }

  private static void requireRate(double r, String what) {
    if (!(r >= 0) || Double.isInfinite(r)) {
      throw new IllegalArgumentException("Cannot advise: " + what + " is " + r + "; it must be >= 0");
    }
  }
}
