package io.cairn.node;

import io.cairn.objectstore.ForwardingObjectStore;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A standby's copy of the batch files it has loaded, so that loading the owner's next snapshot
 * downloads only the files it does not have yet.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Batch files are write-once under names no other file takes ({@code batches/…}): a copy
 *       never goes stale. Every other key (manifests, catalog, epochs) is read from the store.
 *   <li>A batch file is downloaded whole, once (one GET; concurrent readers of one file wait for
 *       the same download), into a {@link LocalObjectStore} over a private temporary directory,
 *       which then serves it and its ranges.
 *   <li>{@link #retainOnly} after each load deletes the copies the loaded snapshot did not read, so
 *       the directory holds about one snapshot's files; {@link #close} deletes the directory.
 *   <li>Writes pass through to the store untouched (a standby writes nothing; after a takeover the
 *       owner's writes do not need the cache).
 * </ul>
 */
final class BatchFileCache extends ForwardingObjectStore {
  private final ObjectStore store;
  private final Path dir;
  private final LocalObjectStore copies;
  /** Keys copied so far (the value is unused: computeIfAbsent makes concurrent readers wait for one download). */
  private final ConcurrentHashMap<String, Boolean> copied = new ConcurrentHashMap<>();
  private final Set<String> read = ConcurrentHashMap.newKeySet();
  private final AtomicLong downloadedFiles = new AtomicLong();
  private final AtomicLong downloadedBytes = new AtomicLong();
  private final AtomicLong reusedFiles = new AtomicLong();

  /** What the cache saved: files and bytes downloaded, files served from a copy (since it was made). */
  record Counts(long downloadedFiles, long downloadedBytes, long reusedFiles) {}

  BatchFileCache(ObjectStore store) {
    this.store = store;
    try {
      this.dir = Files.createTempDirectory("cairn-standby-batches-");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot make a directory for the standby's batch files: " + e.getMessage(), e);
    }
    this.copies = new LocalObjectStore(dir);
  }

  @Override
  protected ObjectStore delegate() {
    return store;
  }

  static boolean isBatch(String key) {
    return key.startsWith("batches/") || key.contains("/batches/");
  }

  Counts counts() {
    return new Counts(downloadedFiles.get(), downloadedBytes.get(), reusedFiles.get());
  }

  /** Makes sure batch file {@code key} has a local copy, downloading it if this is its first read. */
  private void copy(String key) {
    read.add(key);
    boolean[] fresh = {false};
    copied.computeIfAbsent(key, k -> {
      fresh[0] = true;
      long size = store.head(k).map(ObjectInfo::size)
          .orElseThrow(() -> new io.cairn.objectstore.exceptions.ObjectNotFoundException(k + " in " + store.describe()));
      try (InputStream in = store.get(k)) {
        copies.put(k, in, size);
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot copy " + k + " from " + store.describe() + ": " + e.getMessage(), e);
      }
      downloadedBytes.addAndGet(size);
      downloadedFiles.incrementAndGet();
      return Boolean.TRUE;
    });
    if (!fresh[0]) {
      reusedFiles.incrementAndGet();
    }
  }

  /** Deletes the copies not read since the last call (the snapshot just loaded did not need them). */
  void retainOnly() {
    List<String> stale = copied.keySet().stream().filter(k -> !read.contains(k)).toList();
    if (!stale.isEmpty()) {
      copies.delete(stale);
      stale.forEach(copied::remove);
    }
    read.clear();
  }

  @Override
  public InputStream get(String key) {
    if (!isBatch(key)) {
      return store.get(key);
    }
    copy(key);
    return copies.get(key);
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    if (!isBatch(key)) {
      return store.getRange(key, offset, length);
    }
    copy(key);
    return copies.getRange(key, offset, length);
  }

  @Override
  public byte[] readAllBytes(String key) {
    if (!isBatch(key)) {
      return store.readAllBytes(key);
    }
    copy(key);
    return copies.readAllBytes(key);
  }

  @Override
  public void close() {
    copies.close();
    try (var s = Files.walk(dir)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind
    }
    store.close();
  }
}
