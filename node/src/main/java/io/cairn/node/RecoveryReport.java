package io.cairn.node;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one recovery did and what it cost: the snapshot used (or that there was none and every
 * source was replayed from its beginning), fallbacks taken past snapshots that did not verify,
 * state loaded, records replayed per source during catch-up and each source's load meter for the
 * recovery. Rendered as text for people and JSON for machines.
 *
 * <p>{@code phaseMillis} splits {@code totalMillis} into the recovery's phases, in the order they
 * ran: {@code catalog to snapshot} (replay the catalog up to the newest readable manifest's
 * position: create its sources and views) and {@code connect sources} (let them prepare their
 * seeks), both while that snapshot's files load on other threads; {@code snapshot load} (the rest
 * of listing, downloading, verifying and decoding the newest valid snapshot, fallbacks included);
 * after a fallback to an older snapshot at another catalog position, {@code snapshot load (first
 * attempt)} (all of the above) and {@code catalog to snapshot} again on a fresh engine; then
 * {@code restore} (its batches into the spines), {@code
 * catalog after snapshot} (later catalog entries and init statements), {@code seek} (open every
 * source at its offsets), {@code catch-up} (ticks until every source is caught up) and {@code
 * report}. Phases that did not run (no snapshot) are absent. {@code catchUpTicks} splits the
 * catch-up's ticks into reading the sources and computing.
 */
public record RecoveryReport(
    String snapshotId,
    long snapshotTick,
    long snapshotAgeSeconds,
    long catalogPosition,
    boolean fullReplay,
    List<Fallback> fallbacks,
    long rowsLoaded,
    long bytesLoaded,
    long loadMillis,
    long catchUpMillis,
    CatchUpTicks catchUpTicks,
    boolean caughtUp,
    long totalMillis,
    Map<String, Long> phaseMillis,
    List<SourceReport> sources,
    List<DataflowReport> dataflows) {
  /** One JSON mapper for the node's documents (thread-safe once configured), not one per call. */
  static final ObjectMapper JSON = new ObjectMapper();


  public RecoveryReport {
    fallbacks = List.copyOf(fallbacks);
    phaseMillis = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(phaseMillis));
    sources = List.copyOf(sources);
    dataflows = List.copyOf(dataflows);
  }

  /**
   * One dataflow at the end of recovery: its state (RUNNING, RESTARTING or FAILED, with the
   * error) and where its state came from ({@code snapshot}; {@code recomputed} from its inputs;
   * {@code re-read} from the source's beginning because the snapshot did not hold its state;
   * {@code new}: created after the snapshot).
   */
  public record DataflowReport(String name, String kind, String state, String error, String restoredFrom) {}

  /** Whether every dataflow ended RUNNING (a FAILED or RESTARTING one makes {@code recover} exit non-zero). */
  public boolean healthy() {
    return dataflows.stream().allMatch(d -> d.state().equals("RUNNING"));
  }

  /** The dataflows that are not RUNNING. */
  public List<DataflowReport> unhealthy() {
    return dataflows.stream().filter(d -> !d.state().equals("RUNNING")).toList();
  }

  /**
   * The ticks of a catch-up: how many, the time they spent reading their sources (polls: a
   * fetch's wait and the records' decoding) and the time from there until each closed (the
   * dataflows and the seal; a full tick reads the next one's records meanwhile). The two sum to
   * about the catch-up's time; what is left is between ticks.
   */
  public record CatchUpTicks(long ticks, long readingMillis, long computingMillis) {}

  /** A snapshot that was rejected, and why. */
  public record Fallback(String snapshot, String reason) {}

  /**
   * One source's recovery: where it resumed, how many records it re-read to catch up, and the
   * load meter's increase (records, bytes, requests, and connector-specific counters).
   */
  public record SourceReport(String name, Map<String, String> resumedFrom, long recordsReplayed, Map<String, Long> load) {
    public SourceReport {
      resumedFrom = Map.copyOf(resumedFrom);
      load = Map.copyOf(load);
    }
  }

  public String toJson() {
    try {
      return JSON.writer().with(SerializationFeature.INDENT_OUTPUT).writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  public String toText() {
    StringBuilder sb = new StringBuilder();
    sb.append("cairn recovery report\n");
    if (fullReplay) {
      sb.append("  snapshot:        NONE — full replay: every source was read from its beginning\n");
    } else {
      sb.append(String.format(Locale.ROOT, "  snapshot:        %s (tick %d, %s old, catalog position %d)%n",
          snapshotId, snapshotTick, age(snapshotAgeSeconds), catalogPosition));
    }
    for (Fallback f : fallbacks) {
      sb.append("  fallback:        skipped ").append(f.snapshot()).append(": ").append(f.reason()).append('\n');
    }
    sb.append(String.format(Locale.ROOT, "  state loaded:    %,d rows, %,d bytes in %d ms%n", rowsLoaded, bytesLoaded, loadMillis));
    sb.append(String.format(Locale.ROOT, "  catch-up:        %d ms in %d tick(s): reading the sources %d ms, computing %d ms%s%n",
        catchUpMillis, catchUpTicks.ticks(), catchUpTicks.readingMillis(), catchUpTicks.computingMillis(),
        caughtUp ? "" : " (not caught up yet)"));
    sb.append(String.format(Locale.ROOT, "  total:           %d ms%n", totalMillis));
    if (!phaseMillis.isEmpty()) {
      StringBuilder p = new StringBuilder();
      phaseMillis.forEach((k, v) -> p.append(p.length() == 0 ? "" : ", ").append(k).append(' ').append(v).append(" ms"));
      sb.append("  phases:          ").append(p).append('\n');
    }
    for (SourceReport s : sources) {
      sb.append(String.format(Locale.ROOT, "  source %-10s resumed from %s, replayed %,d records, load %s%n",
          s.name(), s.resumedFrom().isEmpty() ? "the beginning" : s.resumedFrom(), s.recordsReplayed(), s.load()));
    }
    for (DataflowReport d : dataflows) {
      sb.append(String.format(Locale.ROOT, "  %-6s %-18s %-10s state from %s%s%n", d.kind().toLowerCase(Locale.ROOT), d.name(),
          d.state(), d.restoredFrom(), d.error() == null || d.error().isEmpty() ? "" : ": " + d.error()));
    }
    if (!healthy()) {
      sb.append(String.format(Locale.ROOT, "  NOT HEALTHY:     %d dataflow(s) not running: %s%n", unhealthy().size(),
          unhealthy().stream().map(DataflowReport::name).toList()));
    }
    return sb.toString();
  }

  private static String age(long seconds) {
    if (seconds < 120) {
      return seconds + " s";
    }
    if (seconds < 7200) {
      return (seconds / 60) + " min";
    }
    return String.format(Locale.ROOT, "%.1f h", seconds / 3600.0);
  }
}
