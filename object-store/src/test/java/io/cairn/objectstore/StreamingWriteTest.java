package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.testkit.s3.S3ProxyServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/**
 * {@link ObjectStore#openWrite}: objects of unknown length written as produced, through s3proxy
 * (one PUT within the multipart threshold rounded up to whole parts, else a multipart upload fed
 * part by part) and a local directory; an abort or a failed part leaves nothing behind.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 2 s
class StreamingWriteTest {
  private static final long PART = 5L << 20; // S3's minimum part size
  private S3ProxyServer server;
  private String bucket;
  @TempDir Path dir;

  @BeforeEach
  void setUp() {
    server = S3ProxyServer.shared();
    bucket = server.createBucket();
  }

  private S3ObjectStoreConfig config() {
    return S3ProxyStores.configFor(server, bucket).prefix("stream")
        .multipartThresholdBytes(PART).partSizeBytes(PART).multipartParallelism(2).build();
  }

  /** Writes {@code length} seeded bytes in writes of random sizes (1 byte to 300 KiB). */
  /** Streams objects {@code prefix + i} of {@code sizes[i]} bytes (seed {@code seed + i}), all at once, each committed. */
  private static void writeAtOnce(ObjectStore store, String prefix, long seed, long... sizes) throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(sizes.length);
    try {
      List<java.util.concurrent.Future<?>> writes = new java.util.ArrayList<>();
      for (int i = 0; i < sizes.length; i++) {
        int n = i;
        writes.add(pool.submit(() -> {
          try (ObjectWrite w = store.openWrite(prefix + n)) {
            produce(w, seed + n, sizes[n]);
            w.commit();
          }
          return null;
        }));
      }
      for (var f : writes) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static void produce(ObjectWrite w, long seed, long length) throws IOException {
    Random r = new Random(seed);
    try (InputStream in = TestData.stream(seed, length)) {
      byte[] buf = new byte[300 << 10];
      while (true) {
        int n = in.read(buf, 0, 1 + r.nextInt(buf.length));
        if (n < 0) {
          return;
        }
        if (n == 1) {
          w.write(buf[0]);
        } else {
          w.write(buf, 0, n);
        }
      }
    }
  }

  private void assertNoUploadsLeft() {
    assertThat(server.client().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();
  }

  @Test
  void s3ObjectsUpToOnePartGoInOnePutLargerOnesInParts() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(config())) {
      long[] sizes = {0, 1, 70_000, PART, PART + 1, 4 * PART + 99};
      long[] requests = {1, 1, 1, 1, 4, 7}; // a PUT; or create + parts + complete
      for (int i = 0; i < sizes.length; i++) {
        String key = "obj-" + i;
        long before = s3.requestAttempts();
        try (ObjectWrite w = s3.openWrite(key)) {
          produce(w, i, sizes[i]);
          w.commit();
          assertThat(w.size()).isEqualTo(sizes[i]);
        }
        assertThat(s3.requestAttempts() - before).as("requests for %d bytes", sizes[i]).isEqualTo(requests[i]);
        assertThat(s3.head(key)).get().extracting(ObjectInfo::size).isEqualTo(sizes[i]);
        try (InputStream in = s3.get(key)) {
          assertThat(TestData.sha256(in)).as("content of %d bytes", sizes[i]).isEqualTo(TestData.sha256(i, sizes[i]));
        }
      }
      assertNoUploadsLeft();
    }
  }

  /**
   * Memory per upload: a write holds the part it fills plus, store-wide, at most {@code
   * multipartParallelism} parts in flight, however large the object: 2 writes of 8 parts each, at
   * once, never hold more than (2 + 2) parts.
   */
  @Test
  void s3StreamingWritesHoldAtMostOnePartEachPlusThePartsInFlight() throws Exception {
    try (S3ObjectStore s3 = new S3ObjectStore(config())) {
      long size = 8 * PART + 12_345;
      writeAtOnce(s3, "big-", 100, size, size);
      long bound = (2 + 2) * PART;
      assertThat(s3.streamingBufferPeakBytes()).as("peak bytes held in part buffers").isPositive().isLessThanOrEqualTo(bound);
      assertThat(2 * size).as("what holding the objects whole would take").isGreaterThan(3 * bound);
      assertThat(s3.streamingBufferedBytes()).as("buffers released after the commits").isZero();
      for (int i = 0; i < 2; i++) {
        assertThat(s3.head("big-" + i)).get().extracting(ObjectInfo::size).isEqualTo(size);
      }
      assertNoUploadsLeft();
    }
  }

  /** Streams {@code sizes[i]} bytes to {@code s3} and checks the requests it took, the size and the content. */
  private void assertStreams(S3ObjectStore s3, long[] sizes, long[] requests) throws IOException {
    for (int i = 0; i < sizes.length; i++) {
      String key = "t-" + i;
      long before = s3.requestAttempts();
      try (ObjectWrite w = s3.openWrite(key)) {
        produce(w, 40 + i, sizes[i]);
        w.commit();
      }
      assertThat(s3.requestAttempts() - before).as("requests for %d bytes", sizes[i]).isEqualTo(requests[i]);
      assertThat(s3.head(key)).get().extracting(ObjectInfo::size).isEqualTo(sizes[i]);
      try (InputStream in = s3.get(key)) {
        assertThat(TestData.sha256(in)).as("content of %d bytes", sizes[i]).isEqualTo(TestData.sha256(40 + i, sizes[i]));
      }
      assertThat(s3.streamingBufferedBytes()).as("buffers released after %d bytes", sizes[i]).isZero();
    }
    assertNoUploadsLeft();
  }

  /**
   * With a multipart threshold above the part size, full parts are held back while the object may
   * still go in one PUT, as {@code put(key, InputStream, length)} sends one below the threshold; past
   * the threshold rounded up to whole parts, the held parts open the multipart upload in order.
   */
  @Test
  void s3ObjectsWithinTheThresholdGoInOnePutEvenAboveOnePart() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(S3ProxyStores.configFor(server, bucket).prefix("thr")
        .multipartThresholdBytes(2 * PART).partSizeBytes(PART).multipartParallelism(2).build())) {
      assertStreams(s3, new long[] {PART, PART + 1, 2 * PART, 2 * PART + 1, 3 * PART + 7}, new long[] {1, 1, 1, 5, 6});
    }
    // 2.5 parts of threshold: up to 3 parts in one PUT, 2 of them held (parallelism 3 lets 2 be held)
    try (S3ObjectStore s3 = new S3ObjectStore(S3ProxyStores.configFor(server, bucket).prefix("thr3")
        .multipartThresholdBytes(5 * PART / 2).partSizeBytes(PART).multipartParallelism(3).build())) {
      assertStreams(s3, new long[] {2 * PART + 1, 3 * PART, 3 * PART + 1}, new long[] {1, 1, 6});
    }
  }

  /**
   * Held parts never take the last permit of {@code multipartParallelism}: with one, nothing is
   * held and an object above one part is a multipart upload whatever the threshold.
   */
  @Test
  void s3HoldsNoPartBackWhenThatWouldTakeTheLastPermit() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(S3ProxyStores.configFor(server, bucket).prefix("one")
        .multipartThresholdBytes(4 * PART).partSizeBytes(PART).multipartParallelism(1).build())) {
      assertStreams(s3, new long[] {PART, PART + 1, 2 * PART + 5}, new long[] {1, 4, 5});
    }
  }

  /**
   * Memory with parts held back: 4 writes at once, 3 of them within the threshold of 2 parts and one
   * of 6 parts, hold at most (4 writes + parallelism 2) parts, and every object arrives whole.
   */
  @Test
  void s3HeldPartsStayWithinTheBoundOfOnePartPerWritePlusThePartsInFlight() throws Exception {
    try (S3ObjectStore s3 = new S3ObjectStore(S3ProxyStores.configFor(server, bucket).prefix("held")
        .multipartThresholdBytes(2 * PART).partSizeBytes(PART).multipartParallelism(2).build())) {
      long[] sizes = {2 * PART - 3, 2 * PART - 2, PART + 77, 6 * PART + 5};
      writeAtOnce(s3, "held-", 200, sizes);
      assertThat(s3.streamingBufferPeakBytes()).as("peak bytes in part buffers").isPositive().isLessThanOrEqualTo((sizes.length + 2) * PART);
      assertThat(s3.streamingBufferedBytes()).as("buffers released after the commits").isZero();
      for (int i = 0; i < sizes.length; i++) {
        try (InputStream in = s3.get("held-" + i)) {
          assertThat(TestData.sha256(in)).as("content of object %d", i).isEqualTo(TestData.sha256(200 + i, sizes[i]));
        }
      }
      assertNoUploadsLeft();
      // a write closed with a part held back leaves nothing and releases its buffers
      try (ObjectWrite w = s3.openWrite("abandoned")) {
        produce(w, 9, PART + 10);
        assertThat(s3.streamingBufferedBytes()).as("a held part and the part filling").isGreaterThan(PART);
      }
      assertThat(s3.streamingBufferedBytes()).isZero();
      assertThat(s3.head("abandoned")).isEmpty();
      assertNoUploadsLeft();
    }
  }

  @Test
  void s3CloseWithoutCommitAbortsTheUpload() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(config())) {
      s3.put("keep", new byte[] {7});
      try (ObjectWrite w = s3.openWrite("keep")) {
        produce(w, 3, 3 * PART + 17); // two parts sent, the third filling
        assertThat(s3.readAllBytes("keep")).as("the old version until commit").containsExactly(7);
      }
      assertThat(s3.readAllBytes("keep")).containsExactly(7);
      assertNoUploadsLeft();
      try (ObjectWrite w = s3.openWrite("small")) {
        w.write(new byte[] {1, 2});
      }
      assertThat(s3.head("small")).isEmpty();
    }
  }

  @Test
  void s3FailingPartAbortsTheUploadAndKeepsThePreviousVersion() throws IOException {
    AtomicInteger partAttempts = new AtomicInteger();
    ExecutionInterceptor failSecondPart = new ExecutionInterceptor() {
      @Override
      public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (context.request() instanceof UploadPartRequest r && r.partNumber() == 2) {
          partAttempts.incrementAndGet();
          throw new IllegalStateException("injected: part 2 lost");
        }
      }
    };
    try (S3ObjectStore s3 = new S3ObjectStore(config(), List.of(failSecondPart))) {
      s3.put("keep-big", new byte[] {1, 2, 3});
      assertThatThrownBy(() -> {
        try (ObjectWrite w = s3.openWrite("keep-big")) {
          try {
            produce(w, 5, 4 * PART + 1);
          } catch (IOException e) {
            // a write may already see the failed part; the commit must not be reached then
            throw new ObjectStoreException(e.getMessage(), e);
          }
          w.commit();
        }
      }).isInstanceOf(ObjectStoreException.class).hasMessageContaining("keep-big").hasMessageContaining("part 2 lost");
      assertThat(partAttempts.get()).isPositive();
      assertThat(s3.readAllBytes("keep-big")).containsExactly(1, 2, 3);
      assertNoUploadsLeft();
      try (Stream<Path> files = Files.walk(server.dataDir().resolve(bucket))) {
        assertThat(files.filter(Files::isRegularFile).map(p -> server.dataDir().resolve(bucket).relativize(p).toString()))
            .containsExactly("stream/keep-big");
      }
    }
  }

  @Test
  void localWritesAppearAtCommitAndAbortLeavesNothing() throws IOException {
    LocalObjectStore local = LocalObjectStore.createDirectories(dir.resolve("store"));
    try (ObjectWrite w = local.openWrite("a/b")) {
      produce(w, 9, 1_000_003);
      assertThat(local.head("a/b")).isEmpty();
      w.commit();
    }
    try (InputStream in = local.get("a/b")) {
      assertThat(TestData.sha256(in)).isEqualTo(TestData.sha256(9, 1_000_003));
    }
    try (ObjectWrite w = local.openWrite("a/c")) {
      produce(w, 10, 70_000);
    }
    assertThat(local.list("")).extracting(ObjectInfo::key).containsExactly("a/b");
    try (Stream<Path> files = Files.walk(dir.resolve("store"))) {
      assertThat(files.filter(Files::isRegularFile).map(p -> dir.resolve("store").relativize(p).toString()))
          .containsExactly("a/b");
    }
  }
}
