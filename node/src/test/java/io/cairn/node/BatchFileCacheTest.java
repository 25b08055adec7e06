package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.objectstore.InMemoryObjectStore;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

  @Test
  void closeDeletesTheCachesDirectory(@TempDir Path parent) throws Exception {
    InMemoryObjectStore store = new InMemoryObjectStore();
    store.put("batches/a/1.parquet", bytes("0123456789"));
    try (BatchFileCache cache = new BatchFileCache(store, parent)) {
      cache.readAllBytes("batches/a/1.parquet");
      assertThat(cacheDirs(parent)).hasSize(1);
    }
    assertThat(cacheDirs(parent)).isEmpty();
  }

  /**
   * A standby killed with SIGKILL never closes its cache: the next cache made under the same
   * parent deletes the directory it left, and never a directory a live process (another JVM, or
   * this one) still holds, nor one younger than a minute.
   */
  @Test
  void aNewCacheDeletesTheDirectoriesOfKilledStandbysOnly(@TempDir Path parent) throws Exception {
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Holder.class.getName(), parent.toString())
        .redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null && !line.equals("ready")) {
        // the child's log lines, if any
      }
      assertThat(line).as("the child made its cache").isEqualTo("ready");
      Path childDir = cacheDirs(parent).get(0);
      assertThat(childDir.resolve("copies/batches/a/1.parquet")).exists();

      // a directory never locked (its maker died before the lock), and one never locked but young
      Path unlocked = Files.createDirectory(parent.resolve(BatchFileCache.PREFIX + "unlocked"));
      Path young = Files.createDirectory(parent.resolve(BatchFileCache.PREFIX + "young"));
      ageOf(unlocked);
      ageOf(childDir);

      try (BatchFileCache live = new BatchFileCache(new InMemoryObjectStore(), parent)) {
        assertThat(cacheDirs(parent)).as("the live child's directory stays; the unlocked old one goes")
            .contains(childDir, young).doesNotContain(unlocked).hasSize(3);
        Path liveDir = cacheDirs(parent).stream().filter(d -> !d.equals(childDir) && !d.equals(young)).findFirst()
            .orElseThrow();
        ageOf(liveDir);

        child.destroyForcibly(); // SIGKILL: the child's cache is never closed
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(childDir).exists();
        ageOf(childDir);

        try (BatchFileCache next = new BatchFileCache(new InMemoryObjectStore(), parent)) {
          assertThat(cacheDirs(parent)).as("the killed child's directory is gone; this JVM's live cache stays")
              .doesNotContain(childDir).contains(liveDir, young).hasSize(3);
        }
      }
    } finally {
      child.destroyForcibly();
    }
  }

  private static void ageOf(Path dir) throws Exception {
    Files.setLastModifiedTime(dir, FileTime.from(Instant.now().minusSeconds(600)));
  }

  private static List<Path> cacheDirs(Path parent) throws Exception {
    try (Stream<Path> s = Files.list(parent)) {
      return s.filter(p -> p.getFileName().toString().startsWith(BatchFileCache.PREFIX)).sorted().toList();
    }
  }

  /** A child JVM's standby cache, holding one copied file until it is killed. */
  public static final class Holder {
    public static void main(String[] args) throws Exception {
      InMemoryObjectStore store = new InMemoryObjectStore();
      store.put("batches/a/1.parquet", bytes("0123456789"));
      BatchFileCache cache = new BatchFileCache(store, Path.of(args[0]));
      cache.readAllBytes("batches/a/1.parquet");
      System.out.println("ready");
      System.out.flush();
      Thread.sleep(Long.MAX_VALUE);
    }
  }
}
