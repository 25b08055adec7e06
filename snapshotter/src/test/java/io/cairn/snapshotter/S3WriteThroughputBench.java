package io.cairn.snapshotter;

import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.objectstore.testing.S3ProxyServer;
import java.io.ByteArrayInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Issue 14's figure "snapshot write throughput to S3 (s3proxy) ÷ a plain multipart PUT of the same
 * bytes with the same client". Off by default; run with
 * {@code mvn -pl snapshotter -am verify -Dtest=S3WriteThroughputBench -Dsurefire.failIfNoSpecifiedTests=false -Dcairn.bench.s3=true}.
 * Prints one line per run.
 */
@EnabledIfSystemProperty(named = "cairn.bench.s3", matches = "true")
class S3WriteThroughputBench {

  @Test
  void snapshotWriteVersusPlainMultipartPut() {
    S3ProxyServer server = S3ProxyServer.shared();
    String bucket = server.createBucket();
    int files = Integer.getInteger("cairn.bench.files", 4);
    int rows = Integer.getInteger("cairn.bench.rows", 1_000_000);
    List<ArrangementState> arrangements = new ArrayList<>();
    for (int i = 0; i < files; i++) {
      Batch b = RangedReadTest.random(100 + i, rows);
      arrangements.add(new ArrangementState("a", i, RangedReadTest.KEY, RangedReadTest.VAL, List.of(b), 9));
    }
    EngineState state = new EngineState(8, files, Map.of(), arrangements);
    for (int run = 0; run < Integer.getInteger("cairn.bench.runs", 4); run++) {
      try (S3ObjectStore s3 = new S3ObjectStore(server.configFor(bucket).prefix("bench-" + run).build());
          Snapshotter s = Snapshotter.builder(s3).build();
          SnapshotReader reader = new SnapshotReader(s3, "", 1)) {
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long c0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        SnapshotResult r = s.snapshot(state, 1);
        long snapNs = System.nanoTime() - t0;
        long snapCpu = os.getProcessCpuTime() - c0;
        Manifest m = reader.read(reader.list().get(0));
        List<byte[]> contents = new ArrayList<>();
        long bytes = 0;
        for (Manifest.BatchFile f : m.files()) {
          byte[] c = s3.readAllBytes(f.path());
          contents.add(c);
          bytes += c.length;
        }
        // the same bytes, the same client: one put(InputStream) per file, in parallel as the snapshotter does
        long c1 = os.getProcessCpuTime();
        long t1 = System.nanoTime();
        contents.parallelStream().forEach(c -> s3.put("plain/" + System.identityHashCode(c), new ByteArrayInputStream(c), c.length));
        long putNs = System.nanoTime() - t1;
        long putCpu = os.getProcessCpuTime() - c1;
        double snapMBs = bytes / 1e6 / (snapNs / 1e9);
        double putMBs = bytes / 1e6 / (putNs / 1e9);
        System.out.printf(Locale.ROOT, "run %d: %d files, %d rows, %d bytes; snapshot %.0f ms (%.1f MB/s), plain multipart PUT %.0f ms "
            + "(%.1f MB/s); ratio %.2f; this JVM's CPU: snapshot %.0f ms, PUT %.0f ms%n", run, files, r.rows(), bytes, snapNs / 1e6, snapMBs,
            putNs / 1e6, putMBs, snapMBs / putMBs, snapCpu / 1e6, putCpu / 1e6);
      }
    }
  }
}
