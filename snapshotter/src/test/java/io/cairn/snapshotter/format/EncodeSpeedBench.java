package io.cairn.snapshotter.format;

import io.cairn.engine.trace.Batch;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import java.io.ByteArrayOutputStream;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Encode speed of one file on one thread, the bulk page encoder against parquet-java's per-value
 * column writers, interleaved round by round, on {@link ColumnBatchWriterTest#random} rows (BIGINT +
 * TEXT key, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, NULL values, NULLs in every column). Off by default:
 * {@code mvn -pl snapshotter -am verify -Dtest=EncodeSpeedBench -Dsurefire.failIfNoSpecifiedTests=false -Dcairn.bench.encode=true}.
 */
@EnabledIfSystemProperty(named = "cairn.bench.encode", matches = "true")
class EncodeSpeedBench {
  @Test
  void bulkVersusPerValue() throws Exception {
    int rows = Integer.getInteger("cairn.bench.rows", 500_000);
    int rounds = Integer.getInteger("cairn.bench.rounds", 8);
    Batch b = ColumnBatchWriterTest.random(100, rows);
    for (PageFormat f : new PageFormat[] {PageFormat.V1_PAGES_V2_ENCODINGS, PageFormat.V1}) {
      BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(f);
      for (int round = 0; round < rounds; round++) {
        for (boolean perValue : Boolean.getBoolean("cairn.bench.bulk-only") ? new boolean[] {false} : new boolean[] {true, false}) {
          ByteArrayOutputStream out = new ByteArrayOutputStream(16 << 20);
          java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
          long c0 = mx.getCurrentThreadCpuTime();
          long t0 = System.nanoTime();
          ColumnBatchWriter.write("a", 0, b, out, o, 0, perValue);
          long ns = System.nanoTime() - t0;
          long cpu = mx.getCurrentThreadCpuTime() - c0;
          System.out.printf(Locale.ROOT, "encode %s %s round %d: %d rows in %.0f ms = %.2fM rows/s (CPU %.0f ms = %.2fM rows/s), %d bytes (%.2f B/row)%n", f,
              perValue ? "per-value" : "bulk", round, b.size(), ns / 1e6, b.size() / (ns / 1e9) / 1e6, cpu / 1e6, b.size() / (cpu / 1e9) / 1e6, out.size(),
              out.size() / (double) b.size());
        }
      }
    }
  }
}
