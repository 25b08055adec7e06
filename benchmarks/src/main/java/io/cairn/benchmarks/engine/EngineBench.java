package io.cairn.benchmarks.engine;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import java.time.Duration;

/** Shared set-up of the engine benchmarks. */
final class EngineBench {
  private EngineBench() {}

  /** An engine whose ticks close after exactly {@code tickRecords} records (the sources never run dry). */
  static Engine engine(int workers, int tickRecords) {
    return Engine.builder()
        .workers(workers)
        .tickPolicy(new TickPolicy(tickRecords, Duration.ofMinutes(1)))
        .connector(new KeyStreamConnector())
        .build();
  }

  /** Ticks until the engine has ingested at least {@code records} records. */
  static void ingest(Engine e, long records) {
    while (e.metrics().recordsIngested() < records) {
      e.tick();
    }
  }
}
