package io.cairn.benchmarks;

import io.cairn.objectstore.S3ObjectStore;
import io.cairn.objectstore.S3ObjectStoreConfig;
import io.cairn.testkit.s3.S3ProxyServer;

/** The S3 store the benchmarks measure: an {@link S3ObjectStore} on a fresh bucket of a test S3 server. */
public final class S3Bench {
  private S3Bench() {}

  /** The configuration of a store on {@code bucket} of {@code server} (add a prefix, then build). */
  public static S3ObjectStoreConfig.Builder configFor(S3ProxyServer server, String bucket) {
    return S3ObjectStoreConfig.builder(bucket)
        .endpoint(server.endpoint())
        .pathStyleAccess(true)
        .region(server.region())
        .credentials(server.accessKeyId(), server.secretAccessKey());
  }

  /** A store under {@code prefix} in a new bucket on {@code server}; the caller closes it. */
  public static S3ObjectStore newStore(S3ProxyServer server, String prefix) {
    return new S3ObjectStore(configFor(server, server.createBucket()).prefix(prefix).build());
  }
}
