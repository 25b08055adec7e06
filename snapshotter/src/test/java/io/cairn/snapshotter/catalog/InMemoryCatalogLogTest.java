package io.cairn.snapshotter.catalog;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.catalog.InMemoryCatalogLog;
import java.util.Collections;
import java.util.List;

class InMemoryCatalogLogTest extends CatalogLogContract {
  @Override
  List<CatalogLog> logs(int n) {
    return Collections.nCopies(n, new InMemoryCatalogLog());
  }
}
