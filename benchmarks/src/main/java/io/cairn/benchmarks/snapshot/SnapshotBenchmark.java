package io.cairn.benchmarks.snapshot;

import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.RecoveryChoice;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The snapshot figures of benchmarks/RESULTS.md ("## Snapshots"): capture pause with ~10M rows of
 * state, snapshot write throughput against a raw copy of equal bytes to the same store in the same
 * run, load throughput into spines, and the bytes a second snapshot uploads after 1% of the keys
 * changed.
 *
 * <p>Run (from the repository root):
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx10g -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.snapshot.SnapshotBenchmark [keys] [records] [workers] [parallelism] [dir]
 * </pre>
 *
 * Defaults: 20M keys, 16M upserts (≈ 11M distinct keys = rows of state), 2 workers, 4 parallel
 * uploads, a local-directory store under the system temporary directory (deleted at the end).
 */
public final class SnapshotBenchmark {
  private SnapshotBenchmark() {}

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  public static void main(String[] args) throws Exception {
    long keys = args.length > 0 ? Long.parseLong(args[0]) : 20_000_000L;
    long records = args.length > 1 ? Long.parseLong(args[1]) : 16_000_000L;
    int workers = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    int parallelism = args.length > 3 ? Integer.parseInt(args[3]) : 4;
    Path dir = args.length > 4 ? Path.of(args[4]) : Files.createTempDirectory("cairn-snapshot-bench");
    long changed = records / 100 + records / 1000; // ≈ 1% of the keys present
    System.out.printf(Locale.ROOT, "machine: %d processors, load average %.1f at start%n", Runtime.getRuntime().availableProcessors(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    System.out.printf(Locale.ROOT, "keys %d, records %d (+%d for the 1%% change), workers %d, upload parallelism %d, store %s%n",
        keys, records, changed, workers, parallelism, dir);
    ObjectStore store = LocalObjectStore.createDirectories(dir.resolve("store"));
    Map<String, String> opts = Map.of("keys", Long.toString(keys), "limit", Long.toString(records + changed), "seed", "11",
        "delete-percent", "0");
    // ticks of records/16 records: ingestion stops exactly at `records`; the change fits in one tick
    int perTick = (int) Math.max(1, records / 16);
    try (Engine e = Engine.builder().workers(workers).tickPolicy(new TickPolicy(perTick, Duration.ofSeconds(60))).build();
        Snapshotter snapshotter = Snapshotter.builder(store).prefix("bench").parallelism(parallelism).build();
        SnapshotReader reader = new SnapshotReader(store, "bench", parallelism)) {
      e.createSource(1, new SourceDefinition("gen", "load-generator", opts, null, null, Envelope.UPSERT));
      warmUp();
      long t0 = System.nanoTime();
      while (e.offsets().getOrDefault("gen", io.cairn.engine.source.SourceOffsets.EMPTY).getLong("offset", 0) < records) {
        e.tick();
      }
      EngineState s0 = e.capture();
      System.out.printf(Locale.ROOT, "ingested %d records in %.1f s: %d rows of state in %d batches%n", records,
          (System.nanoTime() - t0) / 1e9, s0.rows(), s0.arrangements().stream().mapToInt(a -> a.batches().size()).sum());

      // 1. capture pause
      long[] pauses = new long[31];
      for (int i = 0; i < pauses.length; i++) {
        long c0 = System.nanoTime();
        e.betweenTicks(e::capture);
        pauses[i] = System.nanoTime() - c0;
      }
      Arrays.sort(pauses);
      System.out.printf(Locale.ROOT, "capture pause over %d captures: median %.3f ms, max %.3f ms%n", pauses.length,
          pauses[pauses.length / 2] / 1e6, pauses[pauses.length - 1] / 1e6);

      // 2. snapshot write throughput, engine ticking meanwhile (the source held to a trickle)
      e.setReadRateLimit("gen", 1e-6);
      long cpu0 = cpuNanos();
      CompletableFuture<SnapshotResult> f = snapshotter.snapshotAsync(e, () -> 1);
      int ticksDuring = 0;
      while (!f.isDone()) {
        e.tick();
        ticksDuring++;
        Thread.sleep(5);
      }
      SnapshotResult first = f.join();
      double snapCpu = (cpuNanos() - cpu0) / 1e9;
      double snapSecs = first.uploadDuration().toNanos() / 1e9;
      double snapMBs = first.bytesUploaded() / 1e6 / snapSecs;
      System.out.printf(Locale.ROOT,
          "snapshot 1: %d rows, %d files, %d bytes in %.2f s = %.1f MB/s (%.0f rows/s; process CPU %.2f s); capture pause %.3f ms; %d ticks ran during the upload%n",
          first.rows(), first.files(), first.bytesUploaded(), snapSecs, snapMBs, first.rows() / snapSecs, snapCpu,
          first.capturePause().toNanos() / 1e6, ticksDuring);

      // raw copy of equal bytes to the same store, same parallelism
      List<byte[]> blobs = new ArrayList<>();
      for (ObjectInfo o : store.list("bench/batches/")) {
        blobs.add(store.readAllBytes(o.key()));
      }
      long rawBytes = blobs.stream().mapToLong(b -> b.length).sum();
      ExecutorService pool = Executors.newFixedThreadPool(parallelism);
      long r0 = System.nanoTime();
      long rcpu0 = cpuNanos();
      List<CompletableFuture<Void>> puts = new ArrayList<>();
      for (int i = 0; i < blobs.size(); i++) {
        byte[] b = blobs.get(i);
        String key = "raw/" + i;
        puts.add(CompletableFuture.runAsync(() -> store.put(key, b), pool));
      }
      CompletableFuture.allOf(puts.toArray(new CompletableFuture[0])).join();
      double rawSecs = (System.nanoTime() - r0) / 1e9;
      double rawCpu = (cpuNanos() - rcpu0) / 1e9;
      pool.shutdown();
      double rawMBs = rawBytes / 1e6 / rawSecs;
      System.out.printf(Locale.ROOT, "raw copy: %d bytes in %d objects in %.2f s = %.1f MB/s (process CPU %.2f s); snapshot/raw = %.2f%n", rawBytes, blobs.size(),
          rawSecs, rawMBs, rawCpu, snapMBs / rawMBs);
      blobs.clear();
      store.delete(store.list("raw/").stream().map(ObjectInfo::key).toList());

      // 3. load throughput
      RecoveryChoice choice = reader.latestValid(SnapshotReader.Verification.PRESENCE);
      Manifest m = choice.manifest().orElseThrow();
      long l0 = System.nanoTime();
      long lcpu0 = cpuNanos();
      EngineState loaded = reader.load(m);
      double loadSecs = (System.nanoTime() - l0) / 1e9;
      double loadCpu = (cpuNanos() - lcpu0) / 1e9;
      long rs0 = System.nanoTime();
      try (Engine fresh = Engine.builder().workers(workers).build()) {
        fresh.createSource(1, new SourceDefinition("gen", "load-generator", opts, null, null, Envelope.UPSERT));
        fresh.restore(loaded);
      }
      double restoreSecs = (System.nanoTime() - rs0) / 1e9;
      System.out.printf(Locale.ROOT, "load: %d rows, %d bytes in %.2f s = %.0f rows/s (%.1f MB/s, %d parallel downloads; process CPU %.2f s); restore into spines %.3f s%n",
          loaded.rows(), m.bytes(), loadSecs, loaded.rows() / loadSecs, m.bytes() / 1e6 / loadSecs, parallelism, loadCpu, restoreSecs);
      loaded = null;

      // 4. incremental: 1% of keys change
      EngineState s1 = e.capture();
      e.setReadRateLimit("gen", 0);
      e.tick();
      EngineState s2 = e.capture();
      long deltaRows = 0;
      long deltaBytes = 0;
      for (var a : s2.arrangements()) {
        for (Batch b : a.batches()) {
          if (!b.isEmpty() && b.description().lower() > first.tick()) {
            deltaRows += b.size();
            deltaBytes += ParquetBatchFiles.toBytes(a.arrangement(), a.shard(), b).length;
          }
        }
      }
      SnapshotResult second = snapshotter.snapshot(s2, 1);
      System.out.printf(Locale.ROOT,
          "snapshot 2 after %d changed records (%.2f%% of %d rows): %d new files, %d reused, %d bytes uploaded (snapshot total %d bytes);"
              + " the changed batches alone encode to %d bytes (%d updates): ratio %.2f; %.2f%% of a full upload%n",
          changed, 100.0 * changed / s1.rows(), s1.rows(), second.filesNew(), second.filesReused(), second.bytesUploaded(),
          second.bytesTotal(), deltaBytes, deltaRows, (double) second.bytesUploaded() / deltaBytes,
          100.0 * second.bytesUploaded() / second.bytesTotal());
    } finally {
      if (args.length <= 4) {
        deleteTree(dir);
      }
    }
  }

  /** Loads and JIT-compiles the Parquet and codec paths once, on a small batch. */
  private static void warmUp() {
    io.cairn.engine.row.Schema k = io.cairn.engine.row.Schema.parse("id BIGINT");
    List<io.cairn.engine.trace.Update> u = new ArrayList<>();
    for (long i = 0; i < 50_000; i++) {
      u.add(new io.cairn.engine.trace.Update(io.cairn.engine.row.Row.of(i), io.cairn.engine.row.Row.of(i * 7), 1, 1));
    }
    Batch b = Batch.fromUpdates(k, io.cairn.engine.row.Schema.parse("v BIGINT"), u, new io.cairn.engine.trace.Description(0, 2, 0));
    for (int r = 0; r < 5; r++) {
      byte[] bytes = ParquetBatchFiles.toBytes("warm-up", 0, b);
      ParquetBatchFiles.read("warm-up", bytes, b.id(), b.keySchema(), b.valSchema(), b.description(), b.size());
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var walk = Files.walk(dir)) {
      walk.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort
        }
      });
    }
  }
}
