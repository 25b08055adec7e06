package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.trace.Batch;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Encode speed of one file on one thread, the bulk page encoder against parquet-java's per-value
 * column writers, interleaved round by round, on {@link ColumnBatchWriterTest#random} rows (BIGINT +
 * TEXT key, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, NULL values, NULLs in every column). Off by default:
 * {@code mvn -pl snapshotter -am verify -Dtest=EncodeSpeedBench -Dsurefire.failIfNoSpecifiedTests=false -Dcairn.bench.encode=true}.
 *
 * <p>Asserts, per page format, what benchmarks/RESULTS.md ("Encode alone, one thread", "about 3×
 * less CPU") measured for the bulk encoder: the per-value writers' median thread CPU over the warm
 * rounds (all but the first) is at least the lowest ratio of that table's ranges times the bulk
 * encoder's ({@link #leastBulkAdvantage}). Off by default: about 20 s on two busy cores.
 */
@EnabledIfSystemProperty(named = "cairn.bench.encode", matches = "true")
@Timeout(value = 5, unit = TimeUnit.MINUTES) // measured 18 s
class EncodeSpeedBench {
  /**
   * The bulk encoder's least CPU advantage over the per-value writers in RESULTS.md's table, rows/s
   * by CPU: default format 3.07M (bulk, slowest) ÷ 1.53M (per-value, fastest) = 2.0; {@code V1}
   * 3.28M ÷ 1.85M = 1.77, rounded down to 1.75.
   */
  static double leastBulkAdvantage(PageFormat f) {
    return f == PageFormat.V1 ? 1.75 : 2.0;
  }

  @Test
  void bulkVersusPerValue() throws Exception {
    int rows = Integer.getInteger("cairn.bench.rows", 500_000);
    int rounds = Integer.getInteger("cairn.bench.rounds", 8);
    Batch b = ColumnBatchWriterTest.random(100, rows);
    for (PageFormat f : new PageFormat[] {PageFormat.V1_PAGES_V2_ENCODINGS, PageFormat.V1}) {
      BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(f);
      List<Long> bulkCpu = new ArrayList<>();
      List<Long> perValueCpu = new ArrayList<>();
      for (int round = 0; round < rounds; round++) {
        for (boolean perValue : Boolean.getBoolean("cairn.bench.bulk-only") ? new boolean[] {false} : new boolean[] {true, false}) {
          ByteArrayOutputStream out = new ByteArrayOutputStream(16 << 20);
          java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
          long c0 = mx.getCurrentThreadCpuTime();
          long t0 = System.nanoTime();
          ColumnBatchWriter.write("a", 0, b, out, o, 0, perValue);
          long ns = System.nanoTime() - t0;
          long cpu = mx.getCurrentThreadCpuTime() - c0;
          if (round > 0) { // the first round warms the JIT
            (perValue ? perValueCpu : bulkCpu).add(cpu);
          }
          System.out.printf(Locale.ROOT, "encode %s %s round %d: %d rows in %.0f ms = %.2fM rows/s (CPU %.0f ms = %.2fM rows/s), %d bytes (%.2f B/row)%n", f,
              perValue ? "per-value" : "bulk", round, b.size(), ns / 1e6, b.size() / (ns / 1e9) / 1e6, cpu / 1e6, b.size() / (cpu / 1e9) / 1e6, out.size(),
              out.size() / (double) b.size());
        }
      }
      if (!perValueCpu.isEmpty() && !bulkCpu.isEmpty()) {
        double perValueMs = median(perValueCpu) / 1e6;
        double bulkMs = median(bulkCpu) / 1e6;
        assertThat(perValueMs / bulkMs)
            .as(String.format(Locale.ROOT, "%s: per-value CPU %.0f ms ÷ bulk CPU %.0f ms (medians of %d warm rounds)", f, perValueMs, bulkMs,
                bulkCpu.size()))
            .isGreaterThanOrEqualTo(leastBulkAdvantage(f));
      }
    }
  }

  private static double median(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2.0;
  }
}
