package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.objectstore.InMemoryObjectStore;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** A standby downloads a batch file once, serves it and its ranges from its copy, and keeps only what the last load read. */
class BatchFileCacheTest {
  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aBatchFileIsDownloadedOnceAndEvictedWhenTheNextLoadDoesNotReadIt() throws Exception {
    InMemoryObjectStore store = new InMemoryObjectStore();
    store.put("batches/a/1.parquet", bytes("0123456789"));
    store.put("batches/a/2.parquet", bytes("abcdefghij"));
    store.put("snapshots/m.manifest.json", bytes("{}"));
    try (BatchFileCache cache = new BatchFileCache(store)) {
      // first load: reads both files (one whole, one by ranges) and the manifest
      assertThat(cache.readAllBytes("batches/a/1.parquet")).isEqualTo(bytes("0123456789"));
      try (InputStream in = cache.getRange("batches/a/2.parquet", 2, 3)) {
        assertThat(in.readAllBytes()).isEqualTo(bytes("cde"));
      }
      try (InputStream in = cache.getRange("batches/a/2.parquet", 8, 5)) {
        assertThat(in.readAllBytes()).isEqualTo(bytes("ij"));
      }
      cache.readAllBytes("snapshots/m.manifest.json");
      assertThat(cache.counts()).isEqualTo(new BatchFileCache.Counts(2, 20, 1));
      cache.retainOnly();

      // second load: reads file 1 again (no download) and a new file 3; file 2 is not read
      store.put("batches/a/3.parquet", bytes("xyz"));
      store.delete("batches/a/1.parquet"); // a copy is served even once the store's object is gone
      assertThat(cache.readAllBytes("batches/a/1.parquet")).isEqualTo(bytes("0123456789"));
      assertThat(cache.readAllBytes("batches/a/3.parquet")).isEqualTo(bytes("xyz"));
      assertThat(cache.counts()).isEqualTo(new BatchFileCache.Counts(3, 23, 2));
      cache.retainOnly();

      // file 2 was evicted: reading it downloads it again
      cache.readAllBytes("batches/a/2.parquet");
      assertThat(cache.counts().downloadedFiles()).isEqualTo(4);
    }
  }

  @Test
  void keysThatAreNotBatchFilesAreAlwaysReadFromTheStore() {
    InMemoryObjectStore store = new InMemoryObjectStore();
    store.put("catalog/00000000000000000001.json", bytes("one"));
    try (BatchFileCache cache = new BatchFileCache(store)) {
      assertThat(cache.readAllBytes("catalog/00000000000000000001.json")).isEqualTo(bytes("one"));
      store.put("catalog/00000000000000000001.json", bytes("two"));
      assertThat(cache.readAllBytes("catalog/00000000000000000001.json")).isEqualTo(bytes("two"));
      assertThat(cache.counts().downloadedFiles()).isZero();
    }
  }
}
