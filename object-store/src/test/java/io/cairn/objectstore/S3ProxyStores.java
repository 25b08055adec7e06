package io.cairn.objectstore;

import io.cairn.testkit.s3.S3ProxyServer;

/**
 * {@link S3ObjectStore}s on a test {@link S3ProxyServer}: the bridge between the testkit's server
 * (which knows nothing of cairn) and this module's store. Shipped in object-store's test-jar for
 * other modules' tests.
 */
public final class S3ProxyStores {
  private S3ProxyStores() {}

  /** A config builder for {@code bucket} on {@code server}: endpoint, path-style, region and credentials set. */
  public static S3ObjectStoreConfig.Builder configFor(S3ProxyServer server, String bucket) {
    return S3ObjectStoreConfig.builder(bucket)
        .endpoint(server.endpoint())
        .pathStyleAccess(true)
        .region(server.region())
        .credentials(server.accessKeyId(), server.secretAccessKey());
  }

  /** A store on {@code bucket} under {@code prefix}; the caller closes it. */
  public static S3ObjectStore newStore(S3ProxyServer server, String bucket, String prefix) {
    return new S3ObjectStore(configFor(server, bucket).prefix(prefix).build());
  }
}
