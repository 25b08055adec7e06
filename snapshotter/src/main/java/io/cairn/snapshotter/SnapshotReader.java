package io.cairn.snapshotter;

import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.snapshotter.Manifest.ArrangementEntry;
import io.cairn.snapshotter.Manifest.BatchFile;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.exceptions.SnapshotException;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads snapshots: lists manifests, verifies them, picks the newest that verifies, and loads a
 * snapshot's batch files (in parallel, at most {@code parallelism} at a time) into an {@link
 * EngineState} for {@code Engine.restore}. Loaded batches keep the ids they were stored under.
 *
 * <p>Verification levels: {@link Verification#PRESENCE} checks the manifest's checksum and that
 * every file exists with the recorded size (one HEAD per file); {@link Verification#FULL} also
 * streams every file through its CRC32C (a 64 KiB buffer per file). {@link #loadLatest()} verifies
 * fully while loading (each file is read once) and falls back to the previous snapshot on any
 * problem.
 *
 * <p>Memory per load (one batch file; {@code parallelism} files load at once), besides the decoded
 * batch itself: a file of at most {@code wholeFileReadBytes} (default {@value
 * #DEFAULT_WHOLE_FILE_READ_BYTES} bytes) is read whole in one GET into an array, checked, then
 * decoded. A larger file is decoded through ranged reads ({@link RangedBatchFile}): its tail (64
 * KiB or the footer), then one row group's compressed column chunks at a time (parquet-java's
 * buffers, in pieces of at most 8 MiB), one decompressed page, and a 64 KiB buffer for bytes
 * only hashed. Its CRC32C is computed over the bytes in file order as they are read and checked
 * after decoding and before the batch is returned; a file that fails to decode and also fails the
 * checksum is reported as a checksum mismatch. So no file is ever held whole once it is larger
 * than {@code wholeFileReadBytes}, and files over 2 GiB load (up to 2^31 - 9 rows per batch).
 */
public final class SnapshotReader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SnapshotReader.class);

  /** How thoroughly to verify. */
  public enum Verification { PRESENCE, FULL }

  /** Batch files up to this size are read whole; larger ones through ranged reads, a row group at a time. */
  public static final long DEFAULT_WHOLE_FILE_READ_BYTES = 8L << 20;

  private final ObjectStore store;
  private final SnapshotPaths paths;
  private final Executor executor;
  private final ExecutorService owned;
  private final int parallelism;
  private final long wholeFileReadBytes;

  /** A reader with its own pool of {@code parallelism} daemon threads. */
  public SnapshotReader(ObjectStore store, String prefix, int parallelism) {
    this(store, prefix, pool(parallelism), parallelism, true, DEFAULT_WHOLE_FILE_READ_BYTES);
  }

  /** A reader running downloads on {@code executor}, at most {@code parallelism} at a time. */
  public SnapshotReader(ObjectStore store, String prefix, Executor executor, int parallelism) {
    this(store, prefix, executor, parallelism, false, DEFAULT_WHOLE_FILE_READ_BYTES);
  }

  /**
   * A reader running downloads on {@code executor}, at most {@code parallelism} at a time, that
   * reads batch files larger than {@code wholeFileReadBytes} through ranged reads, a row group at
   * a time, and smaller ones whole.
   */
  public SnapshotReader(ObjectStore store, String prefix, Executor executor, int parallelism, long wholeFileReadBytes) {
    this(store, prefix, executor, parallelism, false, wholeFileReadBytes);
  }

  private SnapshotReader(ObjectStore store, String prefix, Executor executor, int parallelism, boolean owns,
      long wholeFileReadBytes) {
    this.store = Objects.requireNonNull(store, "store");
    this.paths = new SnapshotPaths(prefix);
    this.executor = Objects.requireNonNull(executor, "executor");
    if (parallelism < 1) {
      throw new IllegalArgumentException("Cannot create snapshot reader: parallelism must be >= 1, got " + parallelism);
    }
    this.parallelism = parallelism;
    if (wholeFileReadBytes < 0 || wholeFileReadBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("Cannot create snapshot reader: whole-file read size must be in [0, 2^31 - 9], got "
          + wholeFileReadBytes);
    }
    this.wholeFileReadBytes = wholeFileReadBytes;
    this.owned = owns ? (ExecutorService) executor : null;
  }

  private static ExecutorService pool(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("Cannot create snapshot reader: parallelism must be >= 1, got " + n);
    }
    AtomicInteger i = new AtomicInteger();
    return Executors.newFixedThreadPool(n, r -> {
      Thread t = new Thread(r, "snapshot-load-" + i.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** Every manifest in the store, newest first (by tick). Keys that are not manifests are ignored. */
  public List<ManifestInfo> list() {
    List<ManifestInfo> out = new ArrayList<>();
    for (ObjectInfo o : store.list(paths.snapshotsPrefix())) {
      paths.parseManifestKey(o.key(), o.size(), o.lastModified()).ifPresent(out::add);
    }
    out.sort(ManifestInfo.NEWEST_FIRST);
    return out;
  }

  /**
   * Reads and checks one manifest (checksum, format, and that its name matches its tick and id).
   *
   * @throws CorruptSnapshotException naming the problem
   */
  public Manifest read(ManifestInfo info) {
    byte[] bytes;
    try {
      bytes = store.readAllBytes(info.key());
    } catch (ObjectNotFoundException e) {
      throw new CorruptSnapshotException("Cannot read manifest " + info.key() + ": it is gone", e);
    }
    Manifest m = ManifestCodec.decode(info.key(), bytes);
    if (m.tick() != info.tick() || !m.snapshotId().equalsIgnoreCase(info.snapshotId())) {
      throw new CorruptSnapshotException("Cannot read manifest " + info.key() + ": it holds tick " + m.tick() + " and id " + m.snapshotId()
          + ", not what its name says");
    }
    return m;
  }

  /** The problems of {@code m} at {@code level}; empty when it verifies. */
  public List<String> verify(Manifest m, Verification level) {
    List<BatchFile> files = m.files();
    List<String> problems = java.util.Collections.synchronizedList(new ArrayList<>());
    runAll(files, f -> {
      String key = paths.key(f.path());
      try {
        if (level == Verification.FULL) {
          verifyStreaming(key, f);
        } else {
          Optional<ObjectInfo> info = store.head(key);
          if (info.isEmpty()) {
            problems.add("batch file " + key + " is missing");
          } else if (info.get().size() != f.bytes()) {
            problems.add("batch file " + key + " has " + info.get().size() + " bytes, the manifest says " + f.bytes());
          }
        }
      } catch (CorruptSnapshotException e) {
        problems.add(e.getMessage());
      }
    });
    return List.copyOf(problems);
  }

  /** The newest snapshot whose manifest reads and that verifies at {@code level}; nothing is loaded. */
  public RecoveryChoice latestValid(Verification level) {
    List<RecoveryChoice.Rejected> rejected = new ArrayList<>();
    for (ManifestInfo info : list()) {
      try {
        Manifest m = read(info);
        List<String> problems = verify(m, level);
        if (problems.isEmpty()) {
          return new RecoveryChoice(Optional.of(info), Optional.of(m), Optional.empty(), rejected);
        }
        reject(rejected, info, String.join("; ", problems));
      } catch (CorruptSnapshotException e) {
        reject(rejected, info, e.getMessage());
      }
    }
    return new RecoveryChoice(Optional.empty(), Optional.empty(), Optional.empty(), rejected);
  }

  /**
   * Loads the newest snapshot that loads completely, verifying every file's size and checksum
   * while reading it; a snapshot that fails is rejected (with the reason) and the previous one
   * tried. Empty when no snapshot loads.
   */
  public RecoveryChoice loadLatest() {
    return loadLatest(m -> { });
  }

  /**
   * As {@link #loadLatest()}, telling {@code onFirstManifest} the first manifest that reads, before
   * its files load (at most once; not at all when no manifest reads). A caller can start work that
   * depends only on the manifest (replaying the catalog to its position) while the files load; the
   * snapshot finally chosen may still be an older one, when a file of this one fails to verify.
   */
  public RecoveryChoice loadLatest(java.util.function.Consumer<Manifest> onFirstManifest) {
    List<RecoveryChoice.Rejected> rejected = new ArrayList<>();
    boolean told = false;
    for (ManifestInfo info : list()) {
      try {
        Manifest m = read(info);
        if (!told) {
          told = true;
          onFirstManifest.accept(m);
        }
        EngineState s = load(m);
        return new RecoveryChoice(Optional.of(info), Optional.of(m), Optional.of(s), rejected);
      } catch (CorruptSnapshotException e) {
        reject(rejected, info, e.getMessage());
      }
    }
    return new RecoveryChoice(Optional.empty(), Optional.empty(), Optional.empty(), rejected);
  }

  private static void reject(List<RecoveryChoice.Rejected> rejected, ManifestInfo info, String reason) {
    LOG.warn("Rejected snapshot {} (tick {}): {}", info.key(), info.tick(), reason);
    rejected.add(new RecoveryChoice.Rejected(info, reason));
  }

  /**
   * Loads every batch of {@code m}, verifying sizes and checksums, into an {@link EngineState}.
   *
   * @throws CorruptSnapshotException if any file is missing, of the wrong size or checksum, or unreadable
   */
  public EngineState load(Manifest m) {
    long t0 = System.nanoTime();
    List<ArrangementEntry> entries = m.arrangements();
    Batch[][] loaded = new Batch[entries.size()][];
    record Job(int entry, int index, ArrangementEntry a, BatchFile f, Schema key, Schema val) {}
    List<Job> jobs = new ArrayList<>();
    for (int e = 0; e < entries.size(); e++) {
      ArrangementEntry a = entries.get(e);
      Schema key;
      Schema val;
      try {
        key = a.parsedKeySchema();
        val = a.parsedValSchema();
      } catch (IllegalArgumentException ex) {
        throw new CorruptSnapshotException("Cannot load snapshot " + m.snapshotId() + ": arrangement " + a.name() + " has a bad schema: " + ex.getMessage(), ex);
      }
      if (!ParquetBatchFiles.fingerprint(key, val).equals(a.schemaFingerprint())) {
        throw new CorruptSnapshotException("Cannot load snapshot " + m.snapshotId() + ": arrangement " + a.name() + " schema fingerprint mismatch");
      }
      long upper = Long.MIN_VALUE;
      for (BatchFile f : a.batches()) {
        // a spine's batches partition its times in order: files out of order or overlapping would
        // load into a spine whose merges and the next snapshot's reuse reason on wrong bounds
        if (f.lower() < upper || f.upper() < f.lower()) {
          throw new CorruptSnapshotException("Cannot load snapshot " + m.snapshotId() + ": arrangement " + a.name() + " shard "
              + a.shard() + " lists batch " + f.id() + " [" + f.lower() + ", " + f.upper() + ") after one ending at " + upper
              + ": its batches are not in time order");
        }
        upper = f.upper();
      }
      loaded[e] = new Batch[a.batches().size()];
      for (int i = 0; i < a.batches().size(); i++) {
        jobs.add(new Job(e, i, a, a.batches().get(i), key, val));
      }
    }
    runAll(jobs, j -> {
      BatchFile f = j.f();
      Batch b;
      if (f.path() == null) {
        b = Batch.empty(j.key(), j.val(), f.description()).withId(f.id());
      } else {
        String key = paths.key(f.path());
        if (f.bytes() <= wholeFileReadBytes) {
          byte[] bytes = fetch(key, f);
          b = ParquetBatchFiles.read(key, bytes, f.id(), j.key(), j.val(), f.description(), f.rows());
        } else {
          b = loadRanged(key, f, j.key(), j.val());
        }
      }
      loaded[j.entry()][j.index()] = b;
    });
    List<ArrangementState> states = new ArrayList<>();
    for (int e = 0; e < entries.size(); e++) {
      ArrangementEntry a = entries.get(e);
      states.add(new ArrangementState(a.name(), a.shard(), a.parsedKeySchema(), a.parsedValSchema(), List.of(loaded[e]), a.upper()));
    }
    EngineState s = new EngineState(m.tick(), m.shards(), m.sourceOffsets(), states, List.of(), SinkEntries.states(m.sinks()));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    LOG.info("Loaded snapshot {} of tick {}: {} rows from {} files ({} bytes) in {} ms", m.snapshotId(), m.tick(), s.rows(),
        m.files().size(), m.bytes(), ms);
    return s;
  }

  /**
   * Decodes a batch file through ranged reads, then checks its checksum (hashed as it was read)
   * before returning it. Store failures are rethrown as the store threw them.
   */
  private Batch loadRanged(String key, BatchFile f, Schema keySchema, Schema valSchema) {
    try {
      RangedBatchFile file = RangedBatchFile.open(store, key, f.bytes());
      Batch b;
      try {
        b = ParquetBatchFiles.read(key, file, f.id(), keySchema, valSchema, f.description(), f.rows());
      } catch (CorruptSnapshotException e) {
        // undecodable: a checksum mismatch, when there is one, says better what is wrong
        String sum;
        try {
          sum = file.checksum();
        } catch (RuntimeException again) {
          e.addSuppressed(again);
          throw e;
        }
        if (!sum.equals(f.checksum())) {
          CorruptSnapshotException mismatch = checksumMismatch(key, f, sum);
          mismatch.addSuppressed(e);
          throw mismatch;
        }
        throw e;
      }
      String sum = file.checksum();
      if (!sum.equals(f.checksum())) {
        throw checksumMismatch(key, f, sum);
      }
      LOG.debug("Loaded batch file {} ({} bytes) in {} ranged reads of at most {} bytes", key, f.bytes(), file.ranges(),
          file.largestRange());
      return b;
    } catch (RangedBatchFile.StoreFailure e) {
      throw e.storeException();
    }
  }

  private static CorruptSnapshotException checksumMismatch(String key, BatchFile f, String sum) {
    return new CorruptSnapshotException("Cannot load batch file " + key + ": checksum mismatch (manifest " + f.checksum()
        + ", file " + sum + ")");
  }

  /** Streams a file through its checksum, holding 64 KiB of it, and checks its size and checksum. */
  private void verifyStreaming(String key, BatchFile f) {
    CRC32C crc = new CRC32C();
    long size = 0;
    byte[] buf = new byte[64 << 10];
    try (InputStream in = store.get(key)) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        crc.update(buf, 0, n);
        size += n;
      }
    } catch (ObjectNotFoundException e) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it is missing", e);
    } catch (IOException e) {
      throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
    }
    if (size != f.bytes()) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it has " + size + " bytes, the manifest says " + f.bytes());
    }
    String sum = Snapshotter.checksum(crc);
    if (!sum.equals(f.checksum())) {
      throw checksumMismatch(key, f, sum);
    }
  }

  /** Downloads a small file whole and checks its size and checksum. */
  private byte[] fetch(String key, BatchFile f) {
    byte[] bytes;
    try (InputStream in = store.get(key)) {
      // at most one byte more than recorded: a longer file is refused without reading it all
      bytes = in.readNBytes((int) f.bytes() + 1);
    } catch (ObjectNotFoundException e) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it is missing", e);
    } catch (IOException e) {
      throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
    }
    if (bytes.length > f.bytes()) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it has more than " + f.bytes()
          + " bytes, the manifest says " + f.bytes());
    }
    if (bytes.length != f.bytes()) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it has " + bytes.length + " bytes, the manifest says " + f.bytes());
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    String sum = Snapshotter.checksum(crc);
    if (!sum.equals(f.checksum())) {
      throw checksumMismatch(key, f, sum);
    }
    return bytes;
  }

  /** Runs {@code work} for every item, at most {@code parallelism} at a time; rethrows the first failure. */
  private <T> void runAll(List<T> items, java.util.function.Consumer<T> work) {
    Semaphore permits = new Semaphore(parallelism);
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean failed = new java.util.concurrent.atomic.AtomicBoolean();
    try {
      for (T item : items) {
        if (failed.get()) {
          break;
        }
        permits.acquire();
        futures.add(CompletableFuture.runAsync(() -> {
          try {
            if (!failed.get()) {
              work.accept(item);
            }
          } catch (RuntimeException e) {
            failed.set(true);
            throw e;
          } finally {
            permits.release();
          }
        }, executor));
      }
      CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SnapshotException("Cannot read snapshot: interrupted", e);
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw e;
    }
  }

  @Override
  public void close() {
    if (owned != null) {
      owned.shutdownNow();
    }
  }
}
