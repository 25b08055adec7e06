package io.cairn.benchmarks.snapshot;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.objectstore.S3ObjectStoreConfig;
import io.cairn.benchmarks.S3Bench;
import io.cairn.snapshotter.Manifest;
import io.cairn.snapshotter.SnapshotReader;
import io.cairn.snapshotter.SnapshotResult;
import io.cairn.snapshotter.Snapshotter;
import io.cairn.testkit.s3.S3ProxyServer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Issue 14's figure "snapshot write throughput to S3 (s3proxy) ÷ a plain multipart PUT of the same
 * bytes with the same client" (target ≥ 0.8; benchmarks/RESULTS.md measured 0.13-0.24 warm, target
 * missed: bounded by encode speed, see there). Prints one {@code run} line per run and one {@code
 * cpu} line with the CPU each side took: this JVM's, s3proxy's (the child JVM) and the whole
 * machine's (from {@code /proc/stat}, so other processes count too), which tells whether a side was
 * bound by the machine's cores.
 *
 * <p>Run (from the repository root):
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx3g -Dcairn.bench.rows=500000 -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.snapshot.S3WriteThroughputBenchmark
 * </pre>
 *
 * Options: {@code -Dcairn.bench.files} (batch files, 4), {@code -Dcairn.bench.rows} (rows per file,
 * 1,000,000), {@code -Dcairn.bench.runs} (4). The rows are seeded random updates (BIGINT + TEXT
 * key, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP, NULL values; NULLs in every column, retractions,
 * repeated keys), the shape of the snapshotter's {@code RangedReadTest}.
 *
 * <p>The plain side is {@code put(key, InputStream, length)} of each file, as many at once as the
 * common pool runs: files below {@code s3.multipart.threshold-bytes} (16 MiB by default) go in one
 * PUT each. With {@code -Dcairn.bench.multipart=true} the same bytes are also put through a store
 * whose threshold is one part ({@code s3.multipart.part-size-bytes}), so every file above a part
 * is a multipart upload, and a {@code multipart} line compares the snapshot with that.
 * {@code -Dcairn.bench.variants=default,rg131072,part16} measures several snapshotter/store settings
 * alternately in the same JVM (see {@link #measure}).
 */
public final class S3WriteThroughputBenchmark {
  static final Schema KEY = Schema.of(Column.of("id", Type.BIGINT), Column.of("name", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("price", Type.DOUBLE), Column.of("ok", Type.BOOLEAN),
      Column.of("at", Type.TIMESTAMP), Column.of("nothing", Type.NULL));
  static final Description DESC = new Description(3, 9, 3);

  private S3WriteThroughputBenchmark() {}

  public static void main(String[] args) {
    int files = Integer.getInteger("cairn.bench.files", 4);
    int rows = Integer.getInteger("cairn.bench.rows", 1_000_000);
    boolean multipart = Boolean.getBoolean("cairn.bench.multipart");
    List<ArrangementState> arrangements = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      Batch b = random(100 + i, rows);
      arrangements.add(new ArrangementState("a", i, KEY, VAL, List.of(b), 9));
    }
    EngineState state = new EngineState(8, files, Map.of(), arrangements);
    List<String> variants = List.of(System.getProperty("cairn.bench.variants", "default").split(","));
    try (S3ProxyServer server = S3ProxyServer.start()) {
      String bucket = server.createBucket();
      for (int run = 0; run < Integer.getInteger("cairn.bench.runs", 4); run++) {
        for (int v = 0; v < variants.size(); v++) {
          // rotated each run, so that no variant always follows another
          measure(server, bucket, state, files, run, variants.get((v + run) % variants.size()), multipart);
        }
      }
    }
  }

  /** {@code n} seeded random updates: NULLs in every column, retractions, repeated keys. */
  static Batch random(long seed, int n) {
    Random r = new Random(seed);
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Long id = r.nextInt(20) == 0 ? null : (long) r.nextInt(Math.max(1, n / 3));
      String name = r.nextInt(20) == 0 ? null : r.nextInt(4) == 0 ? "" : "n" + r.nextInt(50);
      Long v = r.nextInt(20) == 0 ? null : r.nextLong();
      Double price = r.nextInt(20) == 0 ? null : r.nextGaussian() * 100;
      Boolean ok = r.nextInt(20) == 0 ? null : r.nextBoolean();
      Long at = r.nextInt(20) == 0 ? null : 1_700_000_000_000_000L + r.nextInt(1_000_000);
      long diff = r.nextBoolean() ? 1 : -(1 + r.nextInt(3));
      u.add(new Update(Row.of(id, name), Row.of(v, price, ok, at, null), 3 + r.nextInt(6), diff));
    }
    return Batch.fromUpdates(KEY, VAL, u, DESC);
  }

  /**
   * One snapshot with the options of {@code variant} ("default", or settings joined by '+':
   * {@code rgN} rows per row group, {@code partN} part size in MiB, {@code thrN} multipart
   * threshold in MiB), then the plain PUT of its files.
   */
  private static void measure(S3ProxyServer server, String bucket, EngineState state, int files, int run, String variant, boolean multipart) {
    S3ObjectStoreConfig.Builder cb = S3Bench.configFor(server, bucket).prefix("bench-" + run + "-" + variant);
    int rowGroupRows = 0;
    for (String o : variant.split("\\+")) {
      if (o.startsWith("rg")) {
        rowGroupRows = Integer.parseInt(o.substring(2));
      } else if (o.startsWith("part")) {
        cb.partSizeBytes(Long.parseLong(o.substring(4)) << 20);
      } else if (o.startsWith("thr")) {
        cb.multipartThresholdBytes(Long.parseLong(o.substring(3)) << 20);
      } else if (!o.equals("default")) {
        throw new IllegalArgumentException("Cannot run variant " + variant + ": unknown setting " + o);
      }
    }
    S3ObjectStoreConfig config = cb.build();
    try (S3ObjectStore s3 = new S3ObjectStore(config);
        S3ObjectStore s3parts = new S3ObjectStore(
            S3Bench.configFor(server, bucket).prefix("bench-" + run + "-" + variant)
                .partSizeBytes(config.partSizeBytes()).multipartThresholdBytes(config.partSizeBytes()).build())) {
      Snapshotter.Builder sb = Snapshotter.builder(s3);
      if (rowGroupRows > 0) {
        sb.rowGroupRows(rowGroupRows);
      }
      try (Snapshotter s = sb.build();
          SnapshotReader reader = new SnapshotReader(s3, "", 1)) {
        Cpu c0 = Cpu.now();
        SnapshotResult r = s.snapshot(state, 1);
        Cpu snap = Cpu.now().minus(c0);
        Manifest m = reader.read(reader.list().get(0));
        List<byte[]> contents = new ArrayList<>();
        long bytes = 0;
        for (Manifest.BatchFile f : m.files()) {
          byte[] c = s3.readAllBytes(f.path());
          contents.add(c);
          bytes += c.length;
        }
        // the same bytes, the same client: one put(InputStream) per file, in parallel
        Cpu c1 = Cpu.now();
        contents.parallelStream().forEach(c -> s3.put("plain/" + System.identityHashCode(c), new ByteArrayInputStream(c), c.length));
        Cpu put = Cpu.now().minus(c1);
        double snapMBs = bytes / 1e6 / (snap.wallNs / 1e9);
        double putMBs = bytes / 1e6 / (put.wallNs / 1e9);
        String tag = variant.equals("default") ? "" : " [" + variant + "]";
        System.out.printf(Locale.ROOT, "run %d%s: %d files, %d rows, %d bytes; snapshot %.0f ms (%.1f MB/s), plain multipart PUT %.0f ms "
            + "(%.1f MB/s); ratio %.2f; this JVM's CPU: snapshot %.0f ms, PUT %.0f ms%n", run, tag, files, r.rows(), bytes, snap.wallNs / 1e6,
            snapMBs, put.wallNs / 1e6, putMBs, snapMBs / putMBs, snap.jvmNs / 1e6, put.jvmNs / 1e6);
        System.out.printf(Locale.ROOT, "cpu %d%s: snapshot %s; PUT %s%n", run, tag, snap, put);
        if (multipart) {
          Cpu c2 = Cpu.now();
          contents.parallelStream().forEach(c -> s3parts.put("parts/" + System.identityHashCode(c), new ByteArrayInputStream(c), c.length));
          Cpu parts = Cpu.now().minus(c2);
          System.out.printf(Locale.ROOT, "multipart %d%s: PUT in %d-byte parts %s; ratio %.2f%n", run, tag, config.partSizeBytes(), parts,
              (double) parts.wallNs / snap.wallNs);
        }
      }
    }
  }

  /** Wall time and CPU time of this JVM, of its child processes (s3proxy), and of the whole machine (busy of total, all cores). */
  private record Cpu(long wallNs, long jvmNs, long serverNs, long machineBusyMs, long machineTotalMs) {
    static Cpu now() {
      var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      long server = ProcessHandle.current().children()
          .mapToLong(p -> p.info().totalCpuDuration().map(Duration::toNanos).orElse(0L)).sum();
      long busy = 0;
      long total = 0;
      try {
        // cpu user nice system idle iowait irq softirq steal ...: in clock ticks (1/100 s)
        String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
        for (int i = 1; i < f.length; i++) {
          total += Long.parseLong(f[i]);
        }
        busy = total - Long.parseLong(f[4]) - Long.parseLong(f[5]);
      } catch (IOException | RuntimeException e) {
        // not Linux: no machine figure
      }
      return new Cpu(System.nanoTime(), os.getProcessCpuTime(), server, busy * 10, total * 10);
    }

    Cpu minus(Cpu o) {
      return new Cpu(wallNs - o.wallNs, jvmNs - o.jvmNs, serverNs - o.serverNs, machineBusyMs - o.machineBusyMs,
          machineTotalMs - o.machineTotalMs);
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT, "%.0f ms wall, CPU %.0f ms here + %.0f ms s3proxy, machine busy %d of %d ms", wallNs / 1e6,
          jvmNs / 1e6, serverNs / 1e6, machineBusyMs, machineTotalMs);
    }
  }
}
