package io.cairn.benchmarks.takeover;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Writes the takeover benchmark's results as {@code report.md} and {@code results.json}. */
public final class TakeoverReport {
  public static final String MD = "report.md";
  public static final String JSON = "results.json";

  private TakeoverReport() {}

  /** Writes both files into {@code dir}; returns the markdown. */
  public static String write(List<TakeoverResult> results, String command, Path dir) {
    String md = markdown(results, command);
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve(JSON), new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT)
          .writeValueAsString(java.util.Map.of("command", command, "results", results)));
      Files.writeString(dir.resolve(MD), md);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write the takeover report to " + dir + ": " + e.getMessage(), e);
    }
    return md;
  }

  static String markdown(List<TakeoverResult> results, String command) {
    StringBuilder sb = new StringBuilder("# Takeover vs cold restart\n\n");
    sb.append("`").append(command).append("`\n\n");
    sb.append("Times in ms from the owner's kill -9 to the moment named. *Fresh*: a query answered with the oracle's view, the node the"
        + " owner, the generator at least where the killed owner was. Both recoveries load the snapshot the first owner wrote at the"
        + " generator's end (nothing to catch up); the cold restart includes its JVM's start, the takeover the group's session"
        + " timeout.\n\n");
    sb.append("| rows | heap | standby | session timeout | takeover: store taken | ready | **fresh** | cold: JVM start | ready | **fresh**"
        + " | cold from its start | cold / takeover |\n");
    sb.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (TakeoverResult r : results) {
      var t = r.takeover();
      var c = r.coldRestart();
      sb.append(String.format(Locale.ROOT, "| %,d | %s | %s | %,d | %,d | %,d | **%,d** | %,d | %,d | **%,d** | %,d | %.2fx |%n", r.rows(),
          r.heap(), r.standbyWarm() ? "warm" : "cold", r.sessionTimeoutMillis(), t.killToTookStoreMillis(), t.killToReadyMillis(),
          t.killToFreshMillis(), c.killToStartMillis(), c.killToReadyMillis(), c.killToFreshMillis(), c.startToFreshMillis(),
          r.coldOverTakeover()));
    }
    for (TakeoverResult r : results) {
      sb.append(String.format(Locale.ROOT, "%n## %,d rows%n%n", r.rows()));
      sb.append(String.format(Locale.ROOT, "- workload: load generator keys %,d, %,d records, table %,d rows, view by_cat over %d categories%n",
          r.keys(), r.limit(), r.tableRows(), TakeoverConfig.CATEGORIES));
      sb.append(String.format(Locale.ROOT, "- first owner: read the generator in %,d ms; snapshot in %,d ms; at the kill: epoch %d, tick %d,"
          + " offset %,d%n", r.firstOwnerCaughtUpMillis(), r.snapshotMillis(), r.firstOwner().epoch(), r.firstOwner().lastClosedTick(),
          r.firstOwner().offset()));
      sb.append(String.format(Locale.ROOT, "- standby: %s (%,d ms from STANDBY until the kill)%n",
          r.standbyWarm() ? "warm: answered queries while standing by" : "cold: no answer while standing by",
          r.standbyPreparedMillis()));
      sb.append(String.format(Locale.ROOT, "- same snapshot for both recoveries: %s; answers checked against the oracle: %d, all equal%n",
          r.sameSnapshot() ? "yes" : "NO", r.queriesChecked()));
      sb.append("\n| phase (from `GET /recovery`) | takeover | cold restart |\n|---|---:|---:|\n");
      JsonNode tp = r.takeover().recovery().path("phaseMillis");
      JsonNode cp = r.coldRestart().recovery().path("phaseMillis");
      java.util.LinkedHashSet<String> names = new java.util.LinkedHashSet<>();
      tp.fieldNames().forEachRemaining(names::add);
      cp.fieldNames().forEachRemaining(names::add);
      for (String n : names) {
        sb.append("| ").append(n).append(" | ").append(cell(tp.path(n))).append(" | ").append(cell(cp.path(n))).append(" |\n");
      }
      for (String k : List.of("totalMillis", "loadMillis", "catchUpMillis", "rowsLoaded", "bytesLoaded", "snapshotId")) {
        sb.append("| ").append(k).append(" | ").append(cell(r.takeover().recovery().path(k))).append(" | ")
            .append(cell(r.coldRestart().recovery().path(k))).append(" |\n");
      }
      sb.append("| records replayed | ").append(replayed(r.takeover().recovery())).append(" | ").append(replayed(r.coldRestart().recovery()))
          .append(" |\n");
      sb.append("\n| goal (applies at 10M rows) | bound | measured | met |\n|---|---|---|---|\n");
      for (TakeoverResult.Goal g : r.goals()) {
        sb.append("| ").append(g.what()).append(" | ").append(g.bound()).append(" | ").append(g.measured()).append(" | ")
            .append(g.met() ? "yes" : "no").append(g.applies() ? "" : " (not at this size)").append(" |\n");
      }
    }
    return sb.toString();
  }

  private static String cell(JsonNode v) {
    if (v.isMissingNode() || v.isNull()) {
      return "–";
    }
    return v.isNumber() ? String.format(Locale.ROOT, "%,d", v.asLong()) : v.asText();
  }

  private static String replayed(JsonNode recovery) {
    long n = 0;
    for (JsonNode s : recovery.path("sources")) {
      n += s.path("recordsReplayed").asLong();
    }
    return String.format(Locale.ROOT, "%,d", n);
  }
}
