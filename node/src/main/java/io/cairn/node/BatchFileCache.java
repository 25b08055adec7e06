package io.cairn.node;

import io.cairn.objectstore.ForwardingObjectStore;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *   <li>A standby killed without closing (kill -9, a crash) cannot delete its directory, so the
 *       directory holds a {@code lock} file that its cache keeps locked (an OS file lock, which the
 *       kernel releases when the process dies, whatever the pid namespace). A new cache first
 *       deletes every sibling {@code cairn-standby-batches-*} directory whose lock it can take:
 *       its owner is gone. A directory is considered only once it is a minute old, so that one
 *       created an instant before its lock was taken is never mistaken for a dead one.
 *   <li>Writes pass through to the store untouched (a standby writes nothing; after a takeover the
 *       owner's writes do not need the cache).
 * </ul>
 */
final class BatchFileCache extends ForwardingObjectStore {
  private final ObjectStore store;
  static final String PREFIX = "cairn-standby-batches-";
  private static final Duration YOUNG = Duration.ofMinutes(1);
  private static final Logger LOG = LoggerFactory.getLogger(BatchFileCache.class);

  private final Path dir;
  private final FileChannel lockChannel;
  private final LocalObjectStore copies;
  /** Keys copied so far (the value is unused: computeIfAbsent makes concurrent readers wait for one download). */
  private final ConcurrentHashMap<String, Boolean> copied = new ConcurrentHashMap<>();
  private final Set<String> read = ConcurrentHashMap.newKeySet();
  private final AtomicLong downloadedFiles = new AtomicLong();
  private final AtomicLong downloadedBytes = new AtomicLong();
  private final AtomicLong reusedFiles = new AtomicLong();

  /** What the cache saved: files and bytes downloaded, files served from a copy (since it was made). */
  record Counts(long downloadedFiles, long downloadedBytes, long reusedFiles) {}

  /** A cache in the JVM's temporary directory ({@code java.io.tmpdir}). */
  BatchFileCache(ObjectStore store) {
    this(store, Path.of(System.getProperty("java.io.tmpdir")));
  }

  /** A cache in a new directory under {@code parent}, after sweeping the directories dead standbys left there. */
  BatchFileCache(ObjectStore store, Path parent) {
    this.store = store;
    int swept = sweep(parent);
    if (swept > 0) {
      LOG.info("Deleted {} batch-file directories left in {} by standbys that had stopped without closing", swept, parent);
    }
    try {
      this.dir = Files.createTempDirectory(parent, PREFIX);
      this.lockChannel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      lockChannel.lock();
      this.copies = new LocalObjectStore(Files.createDirectory(dir.resolve("copies")));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot make a directory for the standby's batch files under " + parent + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * Deletes the {@code cairn-standby-batches-*} directories under {@code parent} that no live
   * cache holds (their lock can be taken) and that are at least a minute old; returns how many.
   * A directory it cannot judge (unreadable, held, young) is left alone.
   */
  static int sweep(Path parent) {
    int deleted = 0;
    try (DirectoryStream<Path> dirs = Files.newDirectoryStream(parent, PREFIX + "*")) {
      for (Path d : dirs) {
        if (isAbandoned(d)) {
          deleteTree(d);
          deleted++;
        }
      }
    } catch (IOException | UncheckedIOException e) {
      LOG.warn("Could not look for batch-file directories left by stopped standbys in {}: {}", parent, e.getMessage());
    }
    return deleted;
  }

  private static boolean isAbandoned(Path d) {
    try {
      if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)
          || Files.getLastModifiedTime(d).toInstant().isAfter(Instant.now().minus(YOUNG))) {
        return false;
      }
      Path lock = d.resolve("lock");
      if (!Files.exists(lock)) {
        return true; // older than a minute and never locked: its maker died before taking the lock
      }
      try (FileChannel ch = FileChannel.open(lock, StandardOpenOption.WRITE)) {
        FileLock held = ch.tryLock();
        if (held == null) {
          return false; // a live process holds it
        }
        held.release();
        return true;
      } catch (OverlappingFileLockException e) {
        return false; // a cache in this JVM holds it
      }
    } catch (IOException e) {
      return false;
    }
  }

  private static void deleteTree(Path root) {
    try (var s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // whatever could not be deleted stays for a later sweep
    }
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
    deleteTree(dir);
    try {
      lockChannel.close(); // after the delete: a sweep never sees this directory unlocked
    } catch (IOException e) {
      // the lock goes with the process anyway
    }
    store.close();
  }
}
