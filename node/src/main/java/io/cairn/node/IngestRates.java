package io.cairn.node;

import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.source.LoadMeter;
import io.cairn.node.advise.Advisor;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Each source's live ingest rate over a recent window, from the {@code records} and {@code bytes}
 * counters of the load meters the engine publishes after each tick ({@link SourceStatus#load()}):
 * the node samples them every few seconds while it serves (never during a catch-up, whose rate is
 * the replay's, not the sources'), and a rate is the growth from the oldest sample still in the
 * window to the counters now. Reads only published values, so it never touches a source's
 * client. A counter that goes down (the source restarted with a fresh meter) starts that source's
 * window again. Thread-safe: the background thread samples, HTTP threads read.
 */
final class IngestRates {
  /** How often the node samples while it serves. */
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(5);
  /** How far back a rate looks. */
  static final Duration WINDOW = Duration.ofMinutes(5);

  private record Sample(long nanos, long records, long bytes) {}

  private final LongSupplier nanoTime;
  private final Duration window;
  private final Map<String, ArrayDeque<Sample>> samples = new HashMap<>();

  IngestRates(LongSupplier nanoTime, Duration window) {
    this.nanoTime = nanoTime;
    this.window = window;
  }

  IngestRates() {
    this(System::nanoTime, WINDOW);
  }

  /** Records the counters now; drops samples older than the window (keeping one at its start). */
  synchronized void sample(Map<String, SourceStatus> statuses) {
    long now = nanoTime.getAsLong();
    samples.keySet().retainAll(statuses.keySet());
    for (SourceStatus st : statuses.values()) {
      ArrayDeque<Sample> q = samples.computeIfAbsent(st.name(), k -> new ArrayDeque<>());
      Sample s = new Sample(now, st.load().getOrDefault(LoadMeter.RECORDS, 0L), st.load().getOrDefault(LoadMeter.BYTES, 0L));
      Sample last = q.peekLast();
      if (last != null && (s.records() < last.records() || s.bytes() < last.bytes())) {
        q.clear(); // a fresh meter after a restart
      }
      q.addLast(s);
      while (q.size() > 1) {
        Sample second = q.stream().skip(1).findFirst().orElseThrow();
        if (now - second.nanos() < window.toNanos()) {
          break;
        }
        q.removeFirst();
      }
    }
  }

  /** Each source's rate from its oldest sample (a zero window: not measured yet) to {@code statuses} (the counters now), in their order. */
  synchronized Map<String, Advisor.Ingest> rates(Map<String, SourceStatus> statuses) {
    long now = nanoTime.getAsLong();
    Map<String, Advisor.Ingest> out = new LinkedHashMap<>();
    for (SourceStatus st : statuses.values()) {
      ArrayDeque<Sample> q = samples.get(st.name());
      Sample first = q == null ? null : q.peekFirst();
      long records = st.load().getOrDefault(LoadMeter.RECORDS, 0L);
      long bytes = st.load().getOrDefault(LoadMeter.BYTES, 0L);
      if (first == null || now <= first.nanos() || records < first.records() || bytes < first.bytes()) {
        out.put(st.name(), new Advisor.Ingest(0, 0, Duration.ZERO));
        continue;
      }
      double secs = (now - first.nanos()) / 1e9;
      out.put(st.name(), new Advisor.Ingest((records - first.records()) / secs, (bytes - first.bytes()) / secs,
          Duration.ofNanos(now - first.nanos())));
    }
    return out;
  }
}
