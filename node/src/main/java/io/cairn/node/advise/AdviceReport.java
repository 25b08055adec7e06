package io.cairn.node.advise;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code cairn advise} (and {@code GET /advise}) answers: the {@link Advisor.Advice}, the
 * retention each source's settings give against the schedule checked, the warnings, and every
 * assumption made where the node had no measurement. Rendered as text for people and as a JSON
 * document (durations in milliseconds, rates per second) for machines.
 *
 * @param advice the schedule advice
 * @param checkedInterval the interval the retention was checked against (the recommended one, or
 *     the current schedule's longest gap when nothing meets the target)
 * @param retention one check per source whose settings could be read
 * @param warnings every warning: retention too short, a source that could not be reached, ...
 * @param assumptions the figures that were not measured, with the value taken and why
 */
public record AdviceReport(Advisor.Advice advice, Duration checkedInterval, List<Advisor.RetentionCheck> retention,
    List<String> warnings, List<String> assumptions) {
  public AdviceReport {
    retention = List.copyOf(retention);
    warnings = List.copyOf(warnings);
    assumptions = List.copyOf(assumptions);
  }

  /** The JSON document (a tree of maps and lists, in a stable order). */
  public Map<String, Object> toJsonTree() {
    Advisor.Advice a = advice;
    Advisor.Inputs in = a.inputs();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("targetMillis", in.target().toMillis());
    out.put("feasible", a.feasible());
    if (!a.feasible()) {
      out.put("infeasible", a.infeasible());
    }
    out.put("dominant", a.dominant());
    Map<String, Object> rec = new LinkedHashMap<>();
    if (a.feasible()) {
      rec.put("configKey", "snapshots.cron");
      rec.put("cron", a.recommended().cron());
      rec.put("intervalMillis", a.recommended().interval().toMillis());
      rec.put("worstRecoveryMillis", millis(a.atRecommended().worst()));
      rec.put("averageRecoveryMillis", millis(a.atRecommended().average()));
    }
    out.put("recommended", rec);
    out.put("maxIntervalMillis", a.maxInterval() == null ? null : a.maxInterval().toMillis());
    out.put("shortestRecoveryMillis", a.floor() == null ? null : millis(a.floor().worst()));
    Map<String, Object> cur = new LinkedHashMap<>();
    cur.put("cron", in.currentCron());
    cur.put("longestGapMillis", in.current().longestGap().toMillis());
    cur.put("worstRecoveryMillis", a.atCurrent() == null ? null : millis(a.atCurrent().worst()));
    cur.put("averageRecoveryMillis", a.atCurrent() == null ? null : millis(a.atCurrent().average()));
    cur.put("meetsTarget", a.currentMeetsTarget());
    out.put("current", cur);
    Map<String, Object> model = new LinkedHashMap<>();
    model.put("sourcesReplay", "one after another (one ticking thread reads every source): their catch-up costs add");
    model.put("liveShare", Math.round(a.liveShare() * 10_000) / 10_000.0);
    model.put("beforeLoadMillis", in.beforeLoad().value().toMillis());
    model.put("beforeLoadBasis", in.beforeLoad().basis());
    model.put("loadMillis", in.load().toMillis());
    model.put("afterLoadMillis", in.afterLoad().value().toMillis());
    model.put("afterLoadBasis", in.afterLoad().basis());
    model.put("snapshotDurationMillis", in.snapshotDuration().value().toMillis());
    model.put("snapshotDurationBasis", in.snapshotDuration().basis());
    model.put("stateRows", in.stateRows());
    model.put("stateBytes", in.stateBytes());
    model.put("loadRowsPerSecond", Math.round(in.loadRowsPerSecond()));
    model.put("loadBasis", in.loadBasis());
    model.put("keepLast", in.keepLast());
    out.put("model", model);
    List<Object> sources = new ArrayList<>();
    for (Advisor.SourceRates s : in.sources()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("name", s.name());
      m.put("ingestRecordsPerSecond", round1(s.ingestRecordsPerSecond()));
      m.put("ingestBytesPerSecond", Math.round(s.ingestBytesPerSecond()));
      m.put("ingestWindowSeconds", round1(s.ingestWindow().toMillis() / 1000.0));
      m.put("replayRecordsPerSecond", Math.round(s.replayRecordsPerSecond()));
      m.put("replayBasis", s.replayBasis());
      sources.add(m);
    }
    out.put("sources", sources);
    out.put("retentionCheckedForIntervalMillis", checkedInterval.toMillis());
    List<Object> ret = new ArrayList<>();
    for (Advisor.RetentionCheck c : retention) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("source", c.source());
      m.put("reach", c.reach().name());
      m.put("keepMillis", c.keep().toMillis());
      m.put("keepWhy", c.keepWhy());
      m.put("bytes", Math.round(c.bytes()));
      m.put("bytesWhy", c.bytesWhy());
      m.put("settings", c.limits().settings());
      m.put("reachesBackSnapshots", c.reachesBack());
      m.put("ok", c.warnings().isEmpty());
      ret.add(m);
    }
    out.put("retention", ret);
    out.put("warnings", warnings);
    out.put("assumptions", assumptions);
    out.put("notes", a.notes());
    return out;
  }

  /** The text for people. */
  public String toText() {
    Advisor.Advice a = advice;
    Advisor.Inputs in = a.inputs();
    StringBuilder sb = new StringBuilder();
    sb.append("cairn advise: a snapshot schedule for a recovery within ").append(Advisor.human(in.target())).append('\n');
    if (a.feasible()) {
      sb.append(String.format(Locale.ROOT, "  recommended:     every %s   snapshots.cron: \"%s\"%n",
          Advisor.human(a.recommended().interval()), a.recommended().cron()));
      sb.append(String.format(Locale.ROOT, "  recovery then:   worst %s, average %s (longest interval meeting the target: %s)%n",
          Advisor.human(a.atRecommended().worst()), Advisor.human(a.atRecommended().average()),
          a.maxInterval() == null ? "any" : Advisor.human(a.maxInterval())));
    } else {
      sb.append("  NOT POSSIBLE:    ").append(a.infeasible()).append('\n');
      if (a.floor() != null) {
        sb.append("  shortest recovery possible: ").append(Advisor.human(a.floor().worst())).append('\n');
      }
    }
    sb.append(String.format(Locale.ROOT, "  current:         \"%s\" (longest gap %s): worst %s, average %s — %s%n", in.currentCron(),
        Advisor.human(in.current().longestGap()), a.atCurrent() == null ? "never catches up" : Advisor.human(a.atCurrent().worst()),
        a.atCurrent() == null ? "-" : Advisor.human(a.atCurrent().average()),
        a.currentMeetsTarget() ? "meets the target" : "misses the target"));
    sb.append("  dominant cost:   ").append(a.dominant()).append('\n');
    sb.append(String.format(Locale.ROOT, "  recovery model:  before/beside the load %s, load %s (%,d rows, %s, at %,.0f rows/s), after the load %s,%n",
        Advisor.human(in.beforeLoad().value()), Advisor.human(in.load()), in.stateRows(), Advisor.bytes(in.stateBytes()),
        in.loadRowsPerSecond(), Advisor.human(in.afterLoad().value())));
    sb.append(String.format(Locale.ROOT, "                   snapshot takes %s; live ingest uses %.1f%% of the replay rate; sources replay one after another%n",
        Advisor.human(in.snapshotDuration().value()), a.liveShare() * 100));
    sb.append(String.format(Locale.ROOT, "  %-20s %14s %14s %16s  %s%n", "source", "ingest rec/s", "ingest B/s", "replay rec/s", "replay rate from"));
    for (Advisor.SourceRates s : in.sources()) {
      sb.append(String.format(Locale.ROOT, "  %-20s %14s %14s %16s  %s%n", s.name(), String.format(Locale.ROOT, "%,.1f", s.ingestRecordsPerSecond()),
          String.format(Locale.ROOT, "%,.0f", s.ingestBytesPerSecond()), String.format(Locale.ROOT, "%,.0f", s.replayRecordsPerSecond()),
          s.replayBasis()));
    }
    if (!retention.isEmpty()) {
      sb.append("  retention needed for a snapshot every ").append(Advisor.human(checkedInterval)).append(":\n");
      for (Advisor.RetentionCheck c : retention) {
        sb.append(String.format(Locale.ROOT, "    %-18s keep %s = %s; %s; has %s — %s%n", c.source(), Advisor.human(c.keep()),
            c.keepWhy(), c.bytesWhy(), c.limits().settings(), c.warnings().isEmpty() ? "OK" : "TOO SHORT"));
      }
    }
    for (String w : warnings) {
      sb.append("  WARNING: ").append(w).append('\n');
    }
    for (String n : a.notes()) {
      sb.append("  note: ").append(n).append('\n');
    }
    for (String s : assumptions) {
      sb.append("  assumed: ").append(s).append('\n');
    }
    return sb.toString();
  }

  private static Long millis(Duration d) {
    return d == null ? null : d.toMillis();
  }

  private static double round1(double v) {
    return Math.round(v * 10) / 10.0;
  }
}
