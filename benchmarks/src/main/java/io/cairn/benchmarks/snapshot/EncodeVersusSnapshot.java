package io.cairn.benchmarks.snapshot;

import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.snapshotter.format.BatchFileOptions;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Where a snapshot's time goes beyond encoding (benchmarks/RESULTS.md, "The snapshot encoder …"):
 * the state a node holds after reading a load generator's upsert source ({@code id, category,
 * amount}, 2 workers: the shape of {@code ColdSnapshotBenchmark}'s node) is, round after round in one
 * process, (1) encoded into discarded output as the snapshotter would (a file per batch, 4 at once,
 * row groups on 2 encoding threads), then (2) snapshotted whole by a fresh {@link Snapshotter} into a
 * new local store (every file new, fsynced, manifest and commit). Round 0 runs the snapshotter's
 * warm-up first, as a node does at start ({@code -Dcairn.bench.store=memory}: the snapshots go to an
 * in-memory store instead, no file system). The difference between (2) and (1) is what a snapshot adds
 * to encoding; round 0 against the later ones is what a cold JIT still costs.
 *
 * <pre>
 * java -XX:+UseShenandoahGC -cp "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *     io.cairn.benchmarks.snapshot.EncodeVersusSnapshot [records=4000000] [rounds=8]
 * </pre>
 *
 * (Shenandoah as {@code bin/cairn} runs a node: with the JVM's default G1 the snapshots' allocation
 * costs them 40–70 ms more here.)
 */
public final class EncodeVersusSnapshot {
  private EncodeVersusSnapshot() {}

  public static void main(String[] args) throws Exception {
    long records = args.length > 0 ? Long.parseLong(args[0]) : 4_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 8;
    boolean inMemory = "memory".equals(System.getProperty("cairn.bench.store", "local"));
    Path dir = Files.createTempDirectory("cairn-encode-vs-snapshot-");
    Map<String, String> opts = Map.of("keys", Long.toString(records), "limit", Long.toString(records), "seed", "42",
        "delete-percent", "0", "categories", "100");
    try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(100_000, Duration.ofMillis(20))).build()) {
      e.createSource(1, new SourceDefinition("gen", "load-generator", opts, null, null, Envelope.UPSERT));
      while (e.offsets().getOrDefault("gen", SourceOffsets.EMPTY).getLong("offset", 0) < records) {
        e.tick();
      }
      for (int i = 0; i < 200; i++) { // idle ticks: the spines finish their merges, as on a node that served a while
        e.tick();
      }
      EngineState state = e.capture();
      List<Batch> batches = new ArrayList<>();
      for (ArrangementState a : state.arrangements()) {
        batches.addAll(a.batches());
      }
      long rows = batches.stream().mapToLong(Batch::size).sum();
      System.out.printf(Locale.ROOT, "%d records: %d rows in %d batches %s%n", records, rows, batches.size(),
          batches.stream().map(Batch::size).toList());
      ExecutorService encoders = Executors.newFixedThreadPool(2);
      ExecutorService files = Executors.newFixedThreadPool(4);
      BatchFileOptions options = BatchFileOptions.defaults().withExecutor(encoders, 3);
      double[] encodeMs = new double[rounds];
      double[] snapshotMs = new double[rounds];
      try {
        for (int r = 0; r < rounds; r++) {
          ObjectStore store = inMemory ? new InMemoryObjectStore() : LocalObjectStore.createDirectories(dir.resolve("store-" + r));
          try (Snapshotter snapshotter = Snapshotter.builder(store).build()) {
            if (r == 0) {
              System.out.println("warm-up: " + snapshotter.warmUp(200_000, 4) + " ms");
            }
            long t0 = System.nanoTime();
            SnapshotResult result = snapshotter.snapshot(state, 1);
            snapshotMs[r] = (System.nanoTime() - t0) / 1e6;
            if (result.rows() != rows) {
              throw new IllegalStateException("The snapshot holds " + result.rows() + " rows, the state " + rows);
            }
          }
          long t1 = System.nanoTime();
          List<Future<?>> writes = new ArrayList<>();
          for (Batch b : batches) {
            writes.add(files.submit(() -> ParquetBatchFiles.write("a", 0, b, OutputStream.nullOutputStream(), options)));
          }
          for (Future<?> w : writes) {
            w.get();
          }
          encodeMs[r] = (System.nanoTime() - t1) / 1e6;
          System.out.printf(Locale.ROOT, "round %d: snapshot %.1f ms (%.1fM rows/s), encode only %.1f ms (%.1fM rows/s)%n", r,
              snapshotMs[r], rows / snapshotMs[r] / 1e3, encodeMs[r], rows / encodeMs[r] / 1e3);
        }
      } finally {
        encoders.shutdown();
        files.shutdown();
      }
      if (rounds > 2) {
        double[] s = Arrays.copyOfRange(snapshotMs, 1, rounds);
        double[] c = Arrays.copyOfRange(encodeMs, 1, rounds);
        Arrays.sort(s);
        Arrays.sort(c);
        System.out.printf(Locale.ROOT, "rounds 1..%d, medians: snapshot %.1f ms, encode only %.1f ms; round 0 (first after warm-up): snapshot %.1f ms%n",
            rounds - 1, s[s.length / 2], c[c.length / 2], snapshotMs[0]);
      }
    }
  }
}
