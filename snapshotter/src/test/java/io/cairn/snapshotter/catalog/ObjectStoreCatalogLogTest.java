package io.cairn.snapshotter.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.objectstore.InMemoryObjectStore;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Layout and format of catalog objects, and what a damaged or too-new entry gives. */
class ObjectStoreCatalogLogTest {
  final InMemoryObjectStore store = new InMemoryObjectStore();
  final ObjectStoreCatalogLog log = new ObjectStoreCatalogLog(store);

  @Test
  void entryNIsAJsonObjectWithTwentyDigitName() {
    log.append(CatalogEntry.of(0, "CREATE SOURCE g FROM LOAD GENERATOR", Instant.parse("2026-12-01T00:00:00Z")));
    log.append(CatalogEntry.of(1, "CREATE SOURCE k FROM KAFKA (password = SECRET 'PW')", Instant.parse("2026-12-01T00:00:01Z")));
    assertThat(store.list("")).extracting(o -> o.key())
        .containsExactly("catalog/00000000000000000000.json", "catalog/00000000000000000001.json");
    assertThat(ObjectStoreCatalogLog.key(7)).isEqualTo("catalog/00000000000000000007.json");
    String json = new String(store.readAllBytes("catalog/00000000000000000001.json"), StandardCharsets.UTF_8);
    assertThat(json).contains("\"schemaVersion\" : 2", "\"position\" : 1", "\"wallClock\" : \"2026-12-01T00:00:01Z\"",
        "\"sql\" : \"CREATE SOURCE k FROM KAFKA (password = SECRET 'PW')\"");
  }

  @Test
  void newerSchemaVersionIsRefusedByName() {
    store.put(ObjectStoreCatalogLog.key(0),
        "{\"schemaVersion\":9,\"position\":0,\"wallClock\":\"2026-12-01T00:00:00Z\",\"sql\":\"X\"}".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> log.read(0)).hasMessageContaining("catalog/00000000000000000000.json")
        .hasMessageContaining("schema version 9 is newer than this build's 2");
  }

  @Test
  void damagedEntryIsReportedWithItsKey() {
    store.put(ObjectStoreCatalogLog.key(0), "{not json".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> log.read(0)).hasMessageStartingWith("Cannot read catalog entry catalog/00000000000000000000.json")
        .hasMessageContaining("not JSON");
    store.put(ObjectStoreCatalogLog.key(0),
        "{\"schemaVersion\":1,\"position\":5,\"wallClock\":\"2026-12-01T00:00:00Z\",\"sql\":\"X\"}".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> log.read(0)).hasMessageContaining("it says position 5");
  }
}
