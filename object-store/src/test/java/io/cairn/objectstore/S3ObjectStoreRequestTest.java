package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.testkit.s3.S3ProxyServer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/** What the S3 store puts on the wire: Content-MD5 the server checks, encryption headers. */
class S3ObjectStoreRequestTest {
  private static S3ProxyServer server;
  private static String bucket;

  @BeforeAll
  static void startServer() {
    server = S3ProxyServer.shared();
    bucket = server.createBucket();
  }

  @Test
  void aBodyCorruptedInTransitIsRejectedByTheServerAndNotStored() {
    ExecutionInterceptor corrupt = new ExecutionInterceptor() {
      @Override
      public Optional<RequestBody> modifyHttpContent(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        if (context.request() instanceof PutObjectRequest r && r.key().endsWith("corrupted")) {
          byte[] flipped = TestData.bytes(21, 4096);
          flipped[100] ^= 1;
          return Optional.of(RequestBody.fromBytes(flipped));
        }
        return context.requestBody();
      }
    };
    S3ObjectStoreConfig config = S3ProxyStores.configFor(server, bucket).prefix("md5")
        .checksumMode(S3ObjectStoreConfig.ChecksumMode.WHEN_REQUIRED).build();
    try (S3ObjectStore store = new S3ObjectStore(config, List.of(corrupt))) {
      assertThatThrownBy(() -> store.put("corrupted", TestData.bytes(21, 4096)))
          .isInstanceOf(ObjectStoreException.class).hasMessageContaining("corrupted").hasMessageContaining("400");
      assertThat(store.head("corrupted")).isEmpty();
      store.put("intact", TestData.bytes(21, 4096));
      assertThat(store.readAllBytes("intact")).isEqualTo(TestData.bytes(21, 4096));
    }
  }

  @Test
  void serverSideEncryptionHeadersAreSentOnSingleAndMultipartUploads() {
    Map<String, Map<String, List<String>>> seen = new ConcurrentHashMap<>();
    ExecutionInterceptor capture = new ExecutionInterceptor() {
      @Override
      public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        if (context.request() instanceof PutObjectRequest || context.request() instanceof CreateMultipartUploadRequest) {
          seen.put(context.request().getClass().getSimpleName(), context.httpRequest().headers());
          throw new IllegalStateException("captured, not sent");
        }
      }
    };
    S3ObjectStoreConfig config = S3ProxyStores.configFor(server, bucket).prefix("sse")
        .serverSideEncryption(S3ObjectStoreConfig.ServerSideEncryption.KMS).kmsKeyId("alias/cairn").build();
    try (S3ObjectStore store = new S3ObjectStore(config, List.of(capture))) {
      assertThatThrownBy(() -> store.put("small", new byte[10])).isInstanceOf(ObjectStoreException.class);
      assertThatThrownBy(() -> store.put("large", TestData.stream(1, 17L << 20), 17L << 20))
          .isInstanceOf(ObjectStoreException.class);
    }
    assertThat(seen).hasSize(2);
    seen.values().forEach(headers -> {
      assertThat(headers.get("x-amz-server-side-encryption")).containsExactly("aws:kms");
      assertThat(headers.get("x-amz-server-side-encryption-aws-kms-key-id")).containsExactly("alias/cairn");
    });
  }
}
