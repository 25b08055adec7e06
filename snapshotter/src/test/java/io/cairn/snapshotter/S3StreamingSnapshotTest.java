package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.objectstore.S3ProxyStores;
import io.cairn.testkit.s3.S3ProxyServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A snapshot to s3proxy whose largest batch file is several S3 parts: it is streamed into a
 * multipart upload as it is encoded, and loads back through ranged reads equal to what was written.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // measured 4.2 s
class S3StreamingSnapshotTest {

  @Test
  void aMultiPartBatchFileStreamsToS3AndLoadsBackThroughRanges() {
    S3ProxyServer server = S3ProxyServer.shared();
    String bucket = server.createBucket();
    long part = 5L << 20;
    Batch big = RangedReadTest.random(21, 400_000);
    Batch small = RangedReadTest.random(22, 300);
    EngineState state = new EngineState(8, 2, Map.of(), List.of(
        new ArrangementState("a", 0, RangedReadTest.KEY, RangedReadTest.VAL, List.of(big), 9),
        new ArrangementState("a", 1, RangedReadTest.KEY, RangedReadTest.VAL, List.of(small), 9)));
    try (S3ObjectStore s3 = new S3ObjectStore(S3ProxyStores.configFor(server, bucket).prefix("snap")
            .multipartThresholdBytes(part).partSizeBytes(part).multipartParallelism(2).build());
        Snapshotter s = Snapshotter.builder(s3).rowGroupRows(50_000).encodeThreads(2).build();
        SnapshotReader reader = new SnapshotReader(s3, "", Runnable::run, 1, 1L << 20)) {
      long before = s3.requestAttempts();
      SnapshotResult r = s.snapshot(state, 1);
      long requests = s3.requestAttempts() - before;
      Manifest m = reader.read(reader.list().get(0));
      Manifest.BatchFile bigFile = m.files().stream().filter(f -> f.id().equals(big.id())).findFirst().orElseThrow();
      assertThat(bigFile.bytes()).as("the big file spans several parts").isGreaterThan(part);
      long parts = (bigFile.bytes() + part - 1) / part;
      // the big file: create + parts + complete; the small one: a PUT; the manifest and its lookups: a few more
      assertThat(requests).isGreaterThanOrEqualTo(parts + 3).isLessThan(parts + 12);
      assertThat(server.client().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();
      assertThat(r.rows()).isEqualTo(big.size() + small.size());
      // memory per upload: part buffers of the 2 files being written + 2 parts in flight, at most
      long bound = (2 + 2) * part;
      assertThat(s3.streamingBufferPeakBytes()).as("peak bytes in part buffers").isPositive().isLessThanOrEqualTo(bound);
      assertThat(s3.streamingBufferedBytes()).as("buffers released after the commit").isZero();

      RecoveryChoice c = reader.loadLatest();
      assertThat(c.rejected()).isEmpty();
      Fixtures.assertSameState(c.state().orElseThrow(), state);
      assertThat(reader.verify(m, SnapshotReader.Verification.FULL)).isEmpty();
    }
  }
}
