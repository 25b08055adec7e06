package io.cairn.snapshotter.catalog;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.LocalObjectStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The object-store catalog on a local directory; each handle has its own store instance. */
class LocalCatalogLogTest extends CatalogLogContract {
  @TempDir Path dir;
  final List<LocalObjectStore> stores = new ArrayList<>();

  @Override
  List<CatalogLog> logs(int n) {
    List<CatalogLog> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      LocalObjectStore s = new LocalObjectStore(dir);
      stores.add(s);
      out.add(new ObjectStoreCatalogLog(s));
    }
    return out;
  }

  @AfterEach
  void close() {
    stores.forEach(LocalObjectStore::close);
  }
}
