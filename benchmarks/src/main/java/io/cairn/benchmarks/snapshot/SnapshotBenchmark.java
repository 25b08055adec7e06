package io.cairn.benchmarks.snapshot;

import io.cairn.benchmarks.S3Bench;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.RecoveryChoice;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import io.cairn.testkit.s3.S3ProxyServer;
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
 *
 * <p>Heap (issue 14, "peak heap added by a snapshot ≤ 64 MiB above the state"): before snapshot
 * 1 the heap used after a full collection is taken as the state; during it every collection's
 * heap-after figure is recorded ({@link HeapWatch}); their maximum minus the state is an upper
 * bound of what the snapshot held at that moment. System properties:
 *
 * <ul>
 *   <li>{@code -Dcairn.bench.headroom-mib=64}: after snapshot 1, a second full snapshot (fresh
 *       snapshotter and prefix, so every file is encoded and uploaded) runs with the rest of the
 *       heap taken by ballast, so that only that many MiB are free above the live state;
 *       completing proves its live memory fits (use {@code -XX:G1HeapRegionSize=1m} to keep
 *       G1's region rounding near 1 MiB). The same check as running with {@code -Xmx} = state +
 *       64 MiB, without the ingestion (whose spine merges need more) having to fit too.
 *   <li>{@code -Dcairn.bench.store=s3}: the store is S3 on s3proxy in a child JVM (see {@link
 *       S3ProxyServer}), default part size and multipart parallelism.
 *   <li>{@code -Dcairn.bench.snapshot-only=true}: stop after the snapshots (no raw copy, load or
 *       incremental step).
 *   <li>{@code -Dcairn.bench.tick-records=N}: ticks of N records instead of records/16 (a node's
 *       default is 100,000, {@code engine.tick.max-records}); use it with {@code snapshot-only}, as
 *       the incremental step expects its change in one tick.
 *   <li>{@code -Dcairn.bench.gc-every-ms=N}: also force a full collection every N ms during
 *       snapshot 1 (exact live samples; slows the snapshot).
 * </ul>
 *
 * <pre>
 * java -Xmx10g -XX:G1HeapRegionSize=1m -Dcairn.bench.snapshot-only=true -Dcairn.bench.headroom-mib=64 [-Dcairn.bench.store=s3] \
 *     -cp "benchmarks/target/classes:benchmarks/target/lib/*" io.cairn.benchmarks.snapshot.SnapshotBenchmark 20000000 16000000 2 4
 * </pre>
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
    boolean s3 = "s3".equals(System.getProperty("cairn.bench.store", "local"));
    ObjectStore store = s3
        ? S3Bench.newStore(S3ProxyServer.shared(), "bench-store")
        : LocalObjectStore.createDirectories(dir.resolve("store"));
    System.out.println("store: " + (s3 ? "S3 (s3proxy " + S3ProxyServer.VERSION + " in a child JVM on 127.0.0.1)" : "local directory"));
    Map<String, String> opts = Map.of("keys", Long.toString(keys), "limit", Long.toString(records + changed), "seed", "11",
        "delete-percent", "0");
    // ticks of records/16 records: ingestion stops exactly at `records`; the change fits in one tick
    int perTick = Integer.getInteger("cairn.bench.tick-records", (int) Math.max(1, records / 16));
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
      long firstPause = pauses[0];
      Arrays.sort(pauses);
      System.out.printf(Locale.ROOT, "capture pause over %d captures: median %.3f ms, max %.3f ms (the first %.3f ms)%n",
          pauses.length, pauses[pauses.length / 2] / 1e6, pauses[pauses.length - 1] / 1e6, firstPause / 1e6);

      // 2. snapshot write throughput, engine ticking meanwhile (the source held to a trickle)
      e.setReadRateLimit("gen", 1e-6);
      long state = HeapWatch.baseline();
      HeapWatch watch = HeapWatch.start();
      System.out.println("snapshot 1: starts"); // a mark to split a safepoint log by phase (the baseline's full GC is before it)
      long cpu0 = cpuNanos();
      CompletableFuture<SnapshotResult> f = snapshotter.snapshotAsync(e, () -> 1);
      int ticksDuring = 0;
      long gcEvery = Long.getLong("cairn.bench.gc-every-ms", 0);
      long nextGc = System.nanoTime() + gcEvery * 1_000_000;
      while (!f.isDone()) {
        e.tick();
        ticksDuring++;
        Thread.sleep(5);
        if (gcEvery > 0 && System.nanoTime() >= nextGc) {
          System.gc();
          nextGc = System.nanoTime() + gcEvery * 1_000_000;
        }
      }
      SnapshotResult first = f.join();
      double snapCpu = (cpuNanos() - cpu0) / 1e9;
      watch.close();
      printHeap("snapshot 1", state, watch);
      printPartBuffers(store);
      double snapSecs = first.uploadDuration().toNanos() / 1e9;
      double snapMBs = first.bytesUploaded() / 1e6 / snapSecs;
      System.out.printf(Locale.ROOT,
          "snapshot 1: %d rows, %d files, %d bytes in %.2f s = %.1f MB/s (%.0f rows/s; process CPU %.2f s); capture pause %.3f ms; %d ticks ran during the upload%n",
          first.rows(), first.files(), first.bytesUploaded(), snapSecs, snapMBs, first.rows() / snapSecs, snapCpu,
          first.capturePause().toNanos() / 1e6, ticksDuring);

      long headroom = Long.getLong("cairn.bench.headroom-mib", 0) << 20;
      if (headroom > 0) {
        squeezed(e, store, parallelism, headroom);
      }
      if (Boolean.getBoolean("cairn.bench.snapshot-only")) {
        return;
      }

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
      store.close();
      if (args.length <= 4) {
        deleteTree(dir);
      }
    }
  }

  private static void printPartBuffers(ObjectStore store) {
    if (store instanceof S3ObjectStore s3) {
      System.out.printf(Locale.ROOT, "S3 part buffers: peak %.1f MiB since the store opened%n", s3.streamingBufferPeakBytes() / 1048576.0);
    }
  }

  private static void printHeap(String what, long state, HeapWatch w) {
    System.out.printf(Locale.ROOT,
        "%s heap: state (used after full GC before) %.1f MiB; %d GCs during it (%d full): max used after a GC %.1f MiB = state + %.1f MiB"
            + "; max after a full GC %s%n",
        what, state / 1048576.0, w.collections(), w.fullCollections(), w.maxAfterGc() / 1048576.0,
        (w.maxAfterGc() - state) / 1048576.0,
        w.maxAfterFullGc() < 0 ? "-" : String.format(Locale.ROOT, "%.1f MiB = state + %.1f MiB", w.maxAfterFullGc() / 1048576.0,
            (w.maxAfterFullGc() - state) / 1048576.0));
  }

  /**
   * A snapshot of the whole state (a fresh snapshotter and prefix, so every file is encoded and
   * uploaded) with only {@code headroom} bytes of heap free above the live state: the rest of the
   * maximum heap is taken by ballast (arrays of one G1 region each) after a full collection. It
   * completing without OutOfMemoryError proves the snapshot's live memory fits the headroom; the
   * ballast is dropped afterwards.
   */
  private static void squeezed(Engine e, ObjectStore store, int parallelism, long headroom) {
    long region = g1RegionBytes();
    long state = HeapWatch.baseline();
    long max = Runtime.getRuntime().maxMemory();
    long ballastBytes = max - state - headroom;
    // round the state up to whole regions (G1 allocates the ballast in free regions only)
    long regionsFree = (max - roundUp(state, region) - headroom) / region;
    List<long[]> ballast = new ArrayList<>();
    int len = (int) ((region - 16) / 8); // exactly one region each (16-byte array header)
    for (long r = 0; r < regionsFree; r++) {
      ballast.add(new long[len]);
    }
    long held = HeapWatch.baseline();
    System.out.printf(Locale.ROOT,
        "squeezed snapshot: max heap %.1f MiB, state %.1f MiB, ballast %d regions of %d MiB; used after full GC %.1f MiB, free %.1f MiB%n",
        max / 1048576.0, state / 1048576.0, ballast.size(), region >> 20, held / 1048576.0, (max - held) / 1048576.0);
    HeapWatch watch = HeapWatch.start();
    long t0 = System.nanoTime();
    try (Snapshotter s = Snapshotter.builder(store).prefix("squeezed").parallelism(parallelism).build()) {
      SnapshotResult r = s.snapshotAsync(e, () -> 1).join();
      System.out.printf(Locale.ROOT, "squeezed snapshot: completed, %d rows, %d files, %d bytes in %.2f s%n", r.rows(), r.files(),
          r.bytesUploaded(), (System.nanoTime() - t0) / 1e9);
    } catch (OutOfMemoryError | java.util.concurrent.CompletionException oom) {
      ballast.clear();
      System.out.printf(Locale.ROOT, "squeezed snapshot: FAILED after %.2f s: %s%n", (System.nanoTime() - t0) / 1e9, oom);
    } finally {
      watch.close();
    }
    printHeap("squeezed snapshot", held, watch);
    printPartBuffers(store);
    if (ballastBytes < 0) {
      System.out.println("squeezed snapshot: (the heap was already fuller than the headroom asked)");
    }
    ballast.clear();
    store.delete(store.list("squeezed/").stream().map(ObjectInfo::key).toList());
  }

  private static long roundUp(long v, long unit) {
    return (v + unit - 1) / unit * unit;
  }

  private static long g1RegionBytes() {
    var hs = java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class);
    return Long.parseLong(hs.getVMOption("G1HeapRegionSize").getValue());
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
