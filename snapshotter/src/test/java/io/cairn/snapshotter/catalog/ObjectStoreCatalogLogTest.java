package io.cairn.snapshotter.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.MeteredObjectStore;
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

  private void appendMany(int n) {
    for (int i = 0; i < n; i++) {
      log.append(CatalogEntry.of(i, "CREATE VIEW v" + i + " AS SELECT 1", Instant.parse("2026-12-01T00:00:00Z").plusSeconds(i)));
    }
  }

  @Test
  void aLongCatalogIsFetchedInWindowsEachEntryOnceAndLaterReadsProbeOnlyItsEnd() {
    appendMany(50);
    MeteredObjectStore metered = new MeteredObjectStore(store);
    ObjectStoreCatalogLog reader = new ObjectStoreCatalogLog(metered);
    assertThat(reader.read(0)).hasSize(50).extracting(CatalogEntry::position).containsExactlyElementsOf(
        java.util.stream.LongStream.range(0, 50).boxed().toList());
    long first = metered.metrics().calls(MeteredObjectStore.Kind.GET);
    // windows 1, 2, 4, 8, 16, 16, 16: 63 GETs, the last 13 of positions that do not exist
    assertThat(first).isBetween(50L, 50L + ObjectStoreCatalogLog.READ_WINDOW);
    assertThat(reader.read(0)).hasSize(50);
    assertThat(reader.read(20)).hasSize(30).first().extracting(CatalogEntry::position).isEqualTo(20L);
    ObjectStoreCatalogLog shared = reader.on(metered);
    assertThat(shared.read(0)).hasSize(50);
    assertThat(metered.metrics().calls(MeteredObjectStore.Kind.GET) - first).as("one GET of position 50 per later read").isEqualTo(3);
    // an entry appended by another writer is seen by the next read
    log.append(CatalogEntry.of(50, "DROP VIEW v0", Instant.parse("2026-12-02T00:00:00Z")));
    assertThat(reader.read(0)).hasSize(51).last().extracting(CatalogEntry::sql).isEqualTo("DROP VIEW v0");
  }

  @Test
  void anEntryMissingInsideAReadWindowIsAGapNamingIt() {
    appendMany(20);
    store.delete(ObjectStoreCatalogLog.key(5));
    MeteredObjectStore metered = new MeteredObjectStore(store);
    assertThatThrownBy(() -> new ObjectStoreCatalogLog(metered).read(0))
        .isInstanceOf(io.cairn.engine.catalog.CatalogIntegrityException.class)
        .hasMessageContaining("Catalog entry 5 (catalog/00000000000000000005.json) is missing")
        .hasMessageContaining("later entries exist");
    // windows 1, 2, 4: positions 3..6 were fetched together, and entry 6 said 5 is a gap, not the end
    assertThat(metered.metrics().calls(MeteredObjectStore.Kind.LIST)).as("no listing needed").isZero();
    // the last entry missing is no gap: the catalog ends before it
    store.delete(ObjectStoreCatalogLog.key(19));
    store.put(ObjectStoreCatalogLog.key(5), encodedLike(5));
    assertThat(new ObjectStoreCatalogLog(store).read(0)).hasSize(19);
  }

  private byte[] encodedLike(int i) {
    return ObjectStoreCatalogLog.encode(CatalogEntry.of(i, "CREATE VIEW v" + i + " AS SELECT 1",
        Instant.parse("2026-12-01T00:00:00Z").plusSeconds(i)));
  }
}
