package io.cairn.snapshotter.catalog;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.catalog.InMemoryCatalogLog;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

class InMemoryCatalogLogTest extends CatalogLogContract {
  @Override
  List<CatalogLog> logs(int n) {
    return Collections.nCopies(n, new InMemoryCatalogLog());
  }

  @Test
  @Disabled("covered for the in-memory log by the engine's CatalogReplayTest; here only for the object-store backends")
  @Override
  void sessionsOnTheSameCatalogAgreeAndReplay() {}
}
