package io.cairn.snapshotter.catalog;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.objectstore.S3ProxyStores;
import io.cairn.testkit.s3.S3ProxyServer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;

/**
 * The object-store catalog on a real S3 server (s3proxy 4.1.0, whose {@code If-None-Match: *}
 * writes are atomic); each handle is its own S3 client on a fresh bucket shared by the handles.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 8 s
class S3CatalogLogTest extends CatalogLogContract {
  final List<S3ObjectStore> stores = new ArrayList<>();

  @Override
  List<CatalogLog> logs(int n) {
    S3ProxyServer s3 = S3ProxyServer.shared();
    String bucket = s3.createBucket();
    List<CatalogLog> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      S3ObjectStore s = S3ProxyStores.newStore(s3, bucket, "node");
      stores.add(s);
      out.add(new ObjectStoreCatalogLog(s));
    }
    return out;
  }

  @Override
  int racingAppends() {
    return 20; // s3proxy answers in ~50-100 ms per request on the 2-core CI machine
  }

  @Override
  int sessionViews() {
    return 4;
  }

  @AfterEach
  void close() {
    stores.forEach(S3ObjectStore::close);
  }
}
