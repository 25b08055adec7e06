package io.cairn.benchmarks.engine;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Spine;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Memory of a compacted arrangement of {@code rows} (BIGINT key, BIGINT value) rows: built tick
 * by tick ({@value #TICK} rows per sealed tick, as the engine does), then logically and
 * physically compacted into one batch. Reports, per row, the retained heap measured with the
 * JVM's heap usage after full GCs ({@code heapBytesPerRow}) and the spine's own estimate
 * ({@code spineBytesPerRow}); the time is the build time. Target: ≤ 24 bytes per (BIGINT, BIGINT)
 * row. {@code shape=text-mix} reports a realistic mix with TEXT columns beside it.
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar ArrangementMemoryBenchmark -f 1 -wi 1 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+UseG1GC"})
public class ArrangementMemoryBenchmark {
  static final int TICK = 100_000;
  static final Schema KEY = Schema.of(Column.of("k", Type.BIGINT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT));
  /** The realistic mix: an order's customer, the customer's name (one per 100,000 customers) and a free-text note. */
  static final Schema TEXT_VAL = Schema.of(Column.of("customer", Type.BIGINT), Column.of("name", Type.TEXT), Column.of("note", Type.TEXT));
  static final String[] WORDS = {"deliver", "before", "noon", "ring", "twice", "fragile", "gift", "wrap", "leave", "at", "door",
      "call", "on", "arrival", "express", "back", "entrance", "invoice", "attached", "thanks"};

  @Param({"1000000", "4000000"})
  int rows;

  /** {@code long-long}: (BIGINT key, BIGINT value); {@code text-mix}: BIGINT key, (BIGINT, TEXT ~14 B, TEXT ~30 B) value. */
  @Param({"long-long", "text-mix"})
  String shape;

  /** Per-row figures reported next to the time. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Footprint {
    public double heapBytesPerRow;
    public double spineBytesPerRow;
    public double batches;
  }

  static long usedAfterGc(MemoryMXBean mx) {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      used = Math.min(used, mx.getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  @Benchmark
  public Arrangement build(Footprint f) {
    MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
    long before = usedAfterGc(mx);
    boolean text = shape.equals("text-mix");
    Arrangement a = new Arrangement("mem", KEY, text ? TEXT_VAL : VAL, 1);
    long tick = 1;
    StringBuilder note = new StringBuilder();
    for (long i = 0; i < rows; i++) {
      long k = Math.floorMod(i * 2654435761L, (long) rows);
      if (text) {
        long customer = k % 100_000;
        note.setLength(0);
        for (int w = 0; w < 5; w++) { // five words of twenty, as a note typed at checkout: ~30 bytes
          note.append(w == 0 ? "" : " ").append(WORDS[(int) ((k >>> (4 * w)) % WORDS.length)]);
        }
        a.stage(0, Row.of(k), Row.of(customer, "customer " + customer, note.toString()), tick, 1);
      } else {
        a.stage(0, Row.of(k), Row.of(i), tick, 1);
      }
      if ((i + 1) % TICK == 0) {
        a.seal(0, tick++, 4096);
      }
    }
    a.seal(0, tick, 4096);
    Spine spine = a.spine(0);
    spine.advanceSince(spine.upper() - 1);
    spine.compact();
    long after = usedAfterGc(mx);
    f.heapBytesPerRow = (double) (after - before) / rows;
    f.spineBytesPerRow = (double) spine.heapBytes() / rows;
    f.batches = spine.batchCount();
    if (spine.updateCount() != rows) {
      throw new IllegalStateException("Cannot trust the run: the spine holds " + spine.updateCount() + " updates, expected " + rows);
    }
    return a;
  }
}
