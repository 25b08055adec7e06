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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

/** Failures in the middle of a multipart upload leave no visible object and no parts behind. */
class S3MultipartFaultTest {
  private static final long SIZE = (22L << 20) + 99; // 5 parts of 5 MiB
  private S3ProxyServer server;
  private String bucket;

  @BeforeEach
  void setUp() {
    server = S3ProxyServer.shared();
    bucket = server.createBucket();
  }

  private S3ObjectStoreConfig config() {
    return S3ProxyStores.configFor(server, bucket).prefix("faults")
        .multipartThresholdBytes(5L << 20).partSizeBytes(5L << 20).multipartParallelism(3).build();
  }

  private void assertNothingLeft(ObjectStore store, String key) throws IOException {
    assertThat(store.head(key)).isEmpty();
    assertThat(server.client().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();
    // and on disk: nothing but what the test itself put
    try (Stream<Path> files = Files.walk(server.dataDir().resolve(bucket))) {
      assertThat(files.filter(Files::isRegularFile).map(p -> server.dataDir().resolve(bucket).relativize(p).toString()))
          .allSatisfy(p -> assertThat(p).startsWith("faults/keep"));
    }
  }

  @Test
  void truncatedSourceMidUploadAbortsTheUpload() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(config())) {
      s3.put("keep", new byte[] {7});
      FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(s3)
          .truncateWrites(c -> c.key().equals("big"), 12L << 20);
      assertThatThrownBy(() -> store.put("big", TestData.stream(3, SIZE), SIZE))
          .isInstanceOf(ObjectStoreException.class).hasMessageContaining("big")
          .hasMessageContaining("ended after");
      assertNothingLeft(s3, "big");
      assertThat(s3.readAllBytes("keep")).containsExactly(7);
    }
  }

  @Test
  void sourceThatThrowsMidUploadAbortsTheUpload() throws IOException {
    try (S3ObjectStore s3 = new S3ObjectStore(config())) {
      InputStream failing = new InputStream() {
        private final InputStream data = TestData.stream(4, SIZE);
        private long read;

        @Override
        public int read() throws IOException {
          throw new UnsupportedOperationException();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          if (read > (11L << 20)) {
            throw new IOException("producer died");
          }
          int n = data.read(b, off, len);
          read += Math.max(n, 0);
          return n;
        }
      };
      assertThatThrownBy(() -> s3.put("big", failing, SIZE))
          .isInstanceOf(ObjectStoreException.class).hasMessageContaining("producer died");
      assertNothingLeft(s3, "big");
    }
  }

  @Test
  void failingPartUploadAbortsTheUploadAndKeepsThePreviousVersion() throws IOException {
    AtomicInteger partAttempts = new AtomicInteger();
    ExecutionInterceptor failThirdPart = new ExecutionInterceptor() {
      @Override
      public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (context.request() instanceof UploadPartRequest r && r.partNumber() == 3) {
          partAttempts.incrementAndGet();
          throw new IllegalStateException("injected: part 3 lost");
        }
      }
    };
    try (S3ObjectStore s3 = new S3ObjectStore(config(), List.of(failThirdPart))) {
      s3.put("keep-big", new byte[] {1, 2, 3});
      assertThatThrownBy(() -> s3.put("keep-big", TestData.stream(5, SIZE), SIZE))
          .isInstanceOf(ObjectStoreException.class).hasMessageContaining("keep-big")
          .hasMessageContaining("part 3 lost");
      assertThat(partAttempts.get()).isBetween(1, config().maxAttempts());
      assertThat(s3.readAllBytes("keep-big")).containsExactly(1, 2, 3);
      assertThat(server.client().listMultipartUploads(b -> b.bucket(bucket)).uploads()).isEmpty();
      try (Stream<Path> files = Files.walk(server.dataDir().resolve(bucket))) {
        assertThat(files.filter(Files::isRegularFile).map(p -> server.dataDir().resolve(bucket).relativize(p).toString()))
            .containsExactly("faults/keep-big");
      }
    }
  }
}
