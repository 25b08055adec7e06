package io.cairn.node;

import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectWrite;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
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
 *       the same download), into a private directory, then served from there — also its ranges.
 *   <li>{@link #retainOnly} after each load deletes the copies the loaded snapshot did not read, so
 *       the directory holds about one snapshot's files; {@link #close} deletes the directory.
 *   <li>Writes pass through to the store untouched (a standby writes nothing; after a takeover the
 *       owner's writes do not need the cache).
 * </ul>
 */
final class BatchFileCache implements ObjectStore {
  private final ObjectStore store;
  private final Path dir;
  private final ConcurrentHashMap<String, Path> files = new ConcurrentHashMap<>();
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
  }

  static boolean isBatch(String key) {
    return key.startsWith("batches/") || key.contains("/batches/");
  }

  Counts counts() {
    return new Counts(downloadedFiles.get(), downloadedBytes.get(), reusedFiles.get());
  }

  /** The local copy of batch file {@code key}, downloading it if this is its first read. */
  private Path copy(String key) {
    read.add(key);
    boolean[] fresh = {false};
    Path p = files.computeIfAbsent(key, k -> {
      fresh[0] = true;
      Path tmp = dir.resolve("f" + files.size() + "-" + Long.toHexString(System.nanoTime()) + ".tmp");
      try (InputStream in = store.get(k)) {
        long n = Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        downloadedBytes.addAndGet(n);
        downloadedFiles.incrementAndGet();
        Path done = dir.resolve(tmp.getFileName().toString().replace(".tmp", ".parquet"));
        Files.move(tmp, done, StandardCopyOption.ATOMIC_MOVE);
        return done;
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot copy " + k + " from " + store.describe() + ": " + e.getMessage(), e);
      }
    });
    if (!fresh[0]) {
      reusedFiles.incrementAndGet();
    }
    return p;
  }

  /** Deletes the copies not read since the last call (the snapshot just loaded did not need them). */
  void retainOnly() {
    for (String key : List.copyOf(files.keySet())) {
      if (!read.contains(key)) {
        Path p = files.remove(key);
        if (p != null) {
          try {
            Files.deleteIfExists(p);
          } catch (IOException e) {
            // a leftover file in a temporary directory: deleted at close
          }
        }
      }
    }
    read.clear();
  }

  @Override
  public InputStream get(String key) {
    if (!isBatch(key)) {
      return store.get(key);
    }
    try {
      return Files.newInputStream(copy(key));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    if (!isBatch(key)) {
      return store.getRange(key, offset, length);
    }
    try {
      FileChannel ch = FileChannel.open(copy(key), StandardOpenOption.READ);
      ch.position(offset);
      return new java.io.FilterInputStream(Channels.newInputStream(ch)) {
        private long left = length;

        @Override
        public int read() throws IOException {
          if (left <= 0) {
            return -1;
          }
          int b = super.read();
          if (b >= 0) {
            left--;
          }
          return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
          if (left <= 0) {
            return -1;
          }
          int n = super.read(b, off, (int) Math.min(len, left));
          if (n > 0) {
            left -= n;
          }
          return n;
        }
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public byte[] readAllBytes(String key) {
    if (!isBatch(key)) {
      return store.readAllBytes(key);
    }
    try {
      return Files.readAllBytes(copy(key));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    return store.head(key);
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    return store.list(prefix);
  }

  @Override
  public void put(String key, byte[] bytes) {
    store.put(key, bytes);
  }

  @Override
  public void put(String key, InputStream in, long length) {
    store.put(key, in, length);
  }

  @Override
  public void put(String key, Path file) {
    store.put(key, file);
  }

  @Override
  public boolean supportsStreamingWrites() {
    return store.supportsStreamingWrites();
  }

  @Override
  public ObjectWrite openWrite(String key) {
    return store.openWrite(key);
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    store.putIfAbsent(key, bytes);
  }

  @Override
  public void delete(Collection<String> keys) {
    store.delete(keys);
  }

  @Override
  public String describe() {
    return store.describe();
  }

  @Override
  public void close() {
    try (var s = Files.walk(dir)) {
      s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind
    }
    store.close();
  }
}
