package io.cairn.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.sql.Result;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** {@code cairn status} for a human: the node line, a table of sources, a table of dataflows, snapshots and warnings. */
final class StatusText {
  private static final ObjectMapper JSON = new ObjectMapper();

  private StatusText() {}

  /** {@code {"a":"1","b":"2"}} as {@code a=1 b=2}. */
  private static String pairs(JsonNode object) {
    StringBuilder sb = new StringBuilder();
    object.fields().forEachRemaining(e -> sb.append(sb.length() == 0 ? "" : " ").append(e.getKey()).append('=').append(e.getValue().asText()));
    return sb.toString();
  }

  static String render(String statusJson) {
    JsonNode s;
    try {
      s = JSON.readTree(statusJson);
    } catch (java.io.IOException e) {
      return statusJson; // not JSON: show what the node said
    }
    StringBuilder sb = new StringBuilder();
    sb.append("node: ").append(s.path("state").asText()).append(", tick ").append(s.path("lastClosedTick").asLong())
        .append(", catalog position ").append(s.path("catalogPosition").asLong());
    if (s.path("deadlockedThreads").asInt() > 0) {
      sb.append(", DEADLOCKED THREADS: ").append(s.path("deadlockedThreads").asInt());
    }
    sb.append("\n\n");
    List<List<Object>> rows = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = s.path("sources").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode src = e.getValue();
      String problem = src.path("error").asText("");
      if (src.has("restartAttempts")) {
        problem = "attempt " + src.path("restartAttempts").asInt() + (src.has("nextAttempt") ? ", next at " + src.path("nextAttempt").asText() : "")
            + (problem.isEmpty() ? "" : ": " + problem);
      }
      rows.add(List.of(e.getKey(), src.path("state").asText(), src.path("caughtUp").asBoolean() ? "yes" : "no",
          src.path("load").path("records").asLong(0), pairs(src.path("offsets")), problem.isEmpty() ? "-" : problem));
    }
    sb.append(new Result(List.of("source", "state", "caught up", "records read", "offsets", "error"), rows, "").render()
        .replaceAll("\\(\\d+ rows?\\)\n$", ""));
    rows = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = s.path("dataflows").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode d = e.getValue();
      String error = d.path("error").isNull() ? "" : d.path("error").asText("");
      rows.add(List.of(e.getKey(), d.path("kind").asText(), d.path("state").asText(), error.isEmpty() ? "-" : error));
    }
    sb.append('\n').append(new Result(List.of("dataflow", "kind", "state", "error"), rows, "").render()
        .replaceAll("\\(\\d+ rows?\\)\n$", ""));
    if (s.path("sinks").size() > 0) {
      rows = new ArrayList<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = s.path("sinks").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode k = e.getValue();
        String error = k.path("error").isNull() ? "" : k.path("error").asText("");
        rows.add(List.of(e.getKey(), k.path("from").asText(), k.path("topic").asText(), k.path("state").asText(),
            k.path("emittedThrough").asLong(), k.path("lagTicks").asLong(), k.path("pendingRows").asLong(), k.path("transactions").asLong(),
            String.format(java.util.Locale.ROOT, "%.0f / %.0f", k.path("commitMillisP50").asDouble(), k.path("commitMillisP99").asDouble()),
            error.isEmpty() ? "-" : error));
      }
      sb.append('\n').append(new Result(List.of("sink", "from", "topic", "state", "emitted through", "lag (ticks)", "pending rows",
          "transactions", "commit ms p50 / p99", "error"), rows, "").render().replaceAll("\\(\\d+ rows?\\)\n$", ""));
    }
    JsonNode last = s.path("lastSnapshot");
    sb.append("\nlast snapshot: ");
    if (last.isMissingNode() || last.isNull() || last.size() == 0) {
      sb.append("none since this node started");
    } else {
      sb.append(String.format(java.util.Locale.ROOT, "tick %d, %,d rows in %d files (%d new, %d reused), %,d bytes uploaded in %d ms; %s",
          last.path("tick").asLong(), last.path("rows").asLong(), last.path("files").asLong(), last.path("filesNew").asLong(),
          last.path("filesReused").asLong(), last.path("bytesUploaded").asLong(), last.path("uploadMillis").asLong(),
          last.path("manifest").asText()));
    }
    sb.append('\n');
    JsonNode snaps = s.path("snapshots");
    if (!snaps.path("lastError").isMissingNode() && !snaps.path("lastError").isNull()) {
      sb.append("last snapshot error: ").append(snaps.path("lastError").asText()).append('\n');
    }
    if (snaps.path("failedViewsLeftOut").size() > 0) {
      sb.append("views left out of snapshots (FAILED): ").append(snaps.path("failedViewsLeftOut")).append('\n');
    }
    for (JsonNode w : s.path("retentionWarnings")) {
      sb.append("WARNING: ").append(w.asText()).append('\n');
    }
    return sb.toString().stripTrailing();
  }
}
