package io.cairn.node;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.SourceStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The node's Prometheus gauges ({@code GET /metrics}). Every gauge reads a published value (the
 * engine's metrics, a source's {@link SourceStatus}, the last report and {@link SnapshotOutcome}): a
 * scrape never touches a source's client or waits for the engine lock ({@link Engine#metrics()}
 * answers with the figures of the last closed tick while a tick runs).
 */
final class NodeMetrics {
  private NodeMetrics() {}

  static void register(MeterRegistry registry, Engine engine, Supplier<RecoveryReport> report,
      Supplier<Optional<SnapshotOutcome>> lastSnapshot) {
    Gauge.builder("cairn_ticks", engine, e -> e.metrics().ticks()).register(registry);
    Gauge.builder("cairn_last_closed_tick", engine, e -> e.metrics().lastClosedTick()).register(registry);
    Gauge.builder("cairn_records_ingested", engine, e -> e.metrics().recordsIngested()).register(registry);
    Gauge.builder("cairn_records_read_ahead", engine, e -> e.metrics().recordsReadAhead()).register(registry);
    Gauge.builder("cairn_updates_exchanged", engine, e -> e.metrics().updatesExchanged()).register(registry);
    Gauge.builder("cairn_exchanges_skipped", engine, e -> e.metrics().exchangesSkipped()).register(registry);
    Gauge.builder("cairn_tick_seconds", engine, e -> e.metrics().lastTickNanos() / 1e9).register(registry);
    // counters: Prometheus shows them as cairn_tick_reading_seconds_total and cairn_tick_computing_seconds_total
    FunctionCounter.builder("cairn_tick_reading_seconds", engine, e -> e.metrics().readingNanos() / 1e9)
        .description("time ticks spent reading their sources (polls: fetch waits and decoding)").register(registry);
    FunctionCounter.builder("cairn_tick_computing_seconds", engine, e -> e.metrics().computingNanos() / 1e9)
        .description("time ticks spent after reading until they closed (dataflows and seal)").register(registry);
    Gauge.builder("cairn_arrangement_bytes", engine, e -> e.metrics().arrangementBytes()).register(registry);
    Gauge.builder("cairn_operator_bytes", engine, e -> e.metrics().operatorBytes())
        .description("heap operators hold beside the arrangements (top-k heads), an estimate").register(registry);
    Gauge.builder("cairn_subscriptions", engine, e -> e.subscribers()).description("SUBSCRIBE readers now").register(registry);
    Gauge.builder("cairn_recovery_seconds", report, r -> r.get().totalMillis() / 1000.0).register(registry);
    Gauge.builder("cairn_recovery_rows_loaded", report, r -> r.get().rowsLoaded()).register(registry);
    Gauge.builder("cairn_snapshot_rows", lastSnapshot, l -> l.get().map(o -> (double) o.rows()).orElse(0.0)).register(registry);
    Gauge.builder("cairn_snapshot_bytes_uploaded", lastSnapshot, l -> l.get().map(o -> (double) o.bytesUploaded()).orElse(0.0)).register(registry);
    Gauge.builder("cairn_snapshot_tick", lastSnapshot, l -> l.get().map(o -> (double) o.tick()).orElse(0.0)).register(registry);
    for (String s : engine.sourceNames()) {
      Gauge.builder("cairn_source_records", engine, e -> e.sourceStatus(s).map(st -> (double) st.load().getOrDefault("records", 0L)).orElse(0.0))
          .tag("source", s)
          .register(registry);
      Gauge.builder("cairn_source_caught_up", engine, e -> e.sourceStatus(s).map(st -> st.caughtUp() ? 1.0 : 0.0).orElse(0.0))
          .tag("source", s)
          .register(registry);
      Gauge.builder("cairn_source_restart_attempts", engine, e -> e.sourceStatus(s).map(st -> (double) st.attempts()).orElse(0.0))
          .tag("source", s)
          .register(registry);
      Gauge.builder("cairn_source_running", engine,
              e -> e.sourceStatus(s).map(st -> st.state() == SourceStatus.State.RUNNING ? 1.0 : 0.0).orElse(0.0))
          .tag("source", s)
          .register(registry);
    }
  }
}
