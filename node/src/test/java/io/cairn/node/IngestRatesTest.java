package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.node.advise.Advisor;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Live ingest rates from published load meters, on a fake clock. */
class IngestRatesTest {
  private final AtomicLong now = new AtomicLong();
  private final IngestRates rates = new IngestRates(now::get, Duration.ofSeconds(60));

  private static Map<String, SourceStatus> status(long records, long bytes) {
    Map<String, SourceStatus> m = new LinkedHashMap<>();
    m.put("orders", new SourceStatus("orders", SourceStatus.State.RUNNING, true, SourceOffsets.EMPTY,
        Map.of("records", records, "bytes", bytes), null, 0, null));
    return m;
  }

  private void at(long seconds) {
    now.set(Duration.ofSeconds(seconds).toNanos());
  }

  @Test
  void aRateIsTheGrowthOverTheWindowAndForgetsWhatIsOlder() {
    at(0);
    assertThat(rates.rates(status(0, 0)).get("orders").window()).as("no sample yet").isZero();
    rates.sample(status(1000, 10_000));
    at(10);
    Advisor.Ingest r = rates.rates(status(2000, 30_000)).get("orders");
    assertThat(r.recordsPerSecond()).isEqualTo(100.0);
    assertThat(r.bytesPerSecond()).isEqualTo(2000.0);
    assertThat(r.window()).isEqualTo(Duration.ofSeconds(10));
    // a burst long ago leaves the window: samples every 5 s, 200/s for a minute after it
    long records = 2000;
    for (int t = 10; t <= 200; t += 5) {
      at(t);
      records += t <= 100 ? 5000 : 1000;
      rates.sample(status(records, records * 10));
    }
    Advisor.Ingest later = rates.rates(status(records, records * 10)).get("orders");
    assertThat(later.window()).isEqualTo(Duration.ofSeconds(60));
    assertThat(later.recordsPerSecond()).isEqualTo(200.0);
  }

  @Test
  void aMeterThatStartsAgainStartsTheWindowAgain() {
    at(0);
    rates.sample(status(50_000, 0));
    at(5);
    rates.sample(status(100, 0)); // the source restarted with a fresh meter
    at(10);
    Advisor.Ingest r = rates.rates(status(600, 0)).get("orders");
    assertThat(r.window()).isEqualTo(Duration.ofSeconds(5));
    assertThat(r.recordsPerSecond()).isEqualTo(100.0);
    assertThat(rates.rates(Map.of())).isEmpty();
  }
}
