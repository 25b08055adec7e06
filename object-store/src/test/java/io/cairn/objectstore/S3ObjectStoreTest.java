package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.s3.S3ProxyServer;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The contract against s3proxy 4.1.0 over the real S3 protocol; each test in a fresh prefix. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 4 s
class S3ObjectStoreTest extends AbstractObjectStoreContractTest {
  private static S3ProxyServer server;
  private static String bucket;

  @BeforeAll
  static void startServer() {
    server = S3ProxyServer.shared();
    bucket = server.createBucket();
  }

  @Override
  protected ObjectStore newStore() {
    return S3ProxyStores.newStore(server, bucket, "t-" + UUID.randomUUID());
  }

  @Test
  void largeObjectsGoInParallelParts() {
    S3ObjectStore s3 = (S3ObjectStore) store;
    long before = s3.requestAttempts();
    store.put("parts.bin", TestData.stream(9, 20L << 20), 20L << 20);
    // 20 MiB >= 16 MiB threshold: create + 3 parts of 8 MiB + complete
    assertThat(s3.requestAttempts() - before).isEqualTo(5);
    assertThat(store.head("parts.bin")).get().extracting(ObjectInfo::size).isEqualTo(20L << 20);
  }

  @Test
  void storesWithDifferentPrefixesDoNotSeeEachOther() {
    try (ObjectStore other = S3ProxyStores.newStore(server, bucket, "other-" + UUID.randomUUID())) {
      store.put("k", new byte[] {1});
      other.put("k", new byte[] {2});
      assertThat(store.readAllBytes("k")).containsExactly(1);
      assertThat(other.readAllBytes("k")).containsExactly(2);
      assertThat(store.list("")).extracting(ObjectInfo::key).containsExactly("k");
    }
  }
}
