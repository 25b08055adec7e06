package io.cairn.node;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.node.advise.Advisor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code GET /status} and {@code cairn status --json} show, built from published values only
 * (source statuses, dataflow states, the last {@link SnapshotOutcome}): a status poll never touches a
 * source's client and never waits for a tick or a snapshot. Each source's {@code ingest} is its live rate
 * over the last minutes ({@link IngestRates}), measured while the node serves.
 */
final class NodeStatus {
  private NodeStatus() {}

  static Map<String, Object> of(String nodeState, Engine engine, long catalogPosition, Optional<SnapshotOutcome> lastSnapshot,
      String lastSnapshotError, List<String> retentionWarnings, Map<String, Advisor.Ingest> ingest) {
    Map<String, Object> s = new LinkedHashMap<>();
    s.put("state", nodeState);
    s.put("lastClosedTick", engine.lastClosedTick());
    s.put("catalogPosition", catalogPosition);
    Map<String, Object> srcs = new LinkedHashMap<>();
    Map<String, SourceStatus> statuses = engine.sourceStatuses();
    for (SourceStatus st : statuses.values()) {
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("state", st.state().name());
      one.put("offsets", st.offsets().values());
      one.put("caughtUp", st.caughtUp());
      if (st.error() != null) {
        one.put("error", st.error());
      }
      if (st.state() != SourceStatus.State.RUNNING) {
        one.put("restartAttempts", st.attempts());
      }
      if (st.nextAttempt() != null) {
        one.put("nextAttempt", st.nextAttempt().toString());
      }
      one.put("load", st.load());
      Advisor.Ingest r = ingest.get(st.name());
      if (r != null) {
        Map<String, Object> rate = new LinkedHashMap<>();
        rate.put("recordsPerSecond", Math.round(r.recordsPerSecond() * 10) / 10.0);
        rate.put("bytesPerSecond", Math.round(r.bytesPerSecond()));
        rate.put("windowSeconds", Math.round(r.window().toMillis() / 100.0) / 10.0);
        one.put("ingest", rate); // live rate while serving (0 s window: not measured yet)
      }
      srcs.put(st.name(), one);
    }
    s.put("sources", srcs);
    Map<String, Object> views = new LinkedHashMap<>();
    List<String> notInSnapshots = new ArrayList<>();
    for (Dataflow d : engine.dataflows()) {
      views.put(d.name(), Map.of("id", d.id(), "kind", d.kind().name(), "state", displayState(d, statuses), "error",
          displayError(d, statuses), "subscribers", engine.subscribers(d.name())));
      if (d.kind() == Dataflow.Kind.VIEW && d.state() == Dataflow.State.FAILED) {
        notInSnapshots.add(d.name());
      }
    }
    s.put("dataflows", views);
    Map<String, Object> snap = new LinkedHashMap<>();
    snap.put("failedViewsLeftOut", notInSnapshots);
    snap.put("note", notInSnapshots.isEmpty()
        ? "every source and view is in each snapshot"
        : "FAILED views are left out of snapshots and recomputed from their inputs at recovery; "
            + "sources are always snapshotted at the offsets their state is at, also while RESTARTING or FAILED");
    snap.put("lastError", lastSnapshotError);
    s.put("snapshots", snap);
    s.put("lastSnapshot", lastSnapshot.<Object>map(o -> o).orElse(Map.of())); // {} before the first
    s.put("retentionWarnings", retentionWarnings);
    s.put("deadlockedThreads", Deadlocks.count());
    return s;
  }

  /** A dataflow's state for people: a source shows its client's state (RUNNING, RESTARTING, FAILED). */
  static String displayState(Dataflow d, Map<String, SourceStatus> statuses) {
    if (d.state() == Dataflow.State.FAILED) {
      return "FAILED";
    }
    SourceStatus st = statuses.get(d.name());
    return d.kind() == Dataflow.Kind.SOURCE && st != null ? st.state().name() : d.state().name();
  }

  static String displayError(Dataflow d, Map<String, SourceStatus> statuses) {
    if (d.error() != null) {
      return d.error();
    }
    SourceStatus st = statuses.get(d.name());
    return st == null || st.error() == null ? "" : st.error();
  }
}
