package io.cairn.snapshotter;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectWrite;
import io.cairn.snapshotter.Manifest.ArrangementEntry;
import io.cairn.snapshotter.Manifest.BatchFile;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.exceptions.SnapshotFailedException;
import io.cairn.snapshotter.exceptions.SnapshotInProgressException;
import io.cairn.snapshotter.format.BatchFileOptions;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.zip.CRC32C;
import java.util.zip.CheckedOutputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes snapshots: the batch files of an {@link EngineState} that no earlier snapshot uploaded,
 * then the manifest, create-if-absent — the commit point.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Capture is the caller's ({@link Engine#capture()}, O(number of batches), between two
 *       ticks); batches are immutable, so the upload reads them while the engine keeps running.
 *   <li>No two snapshots at once: a second request while one runs throws {@link
 *       SnapshotInProgressException}.
 *   <li>Bounded parallelism and memory: at most {@code parallelism} batch files are being encoded
 *       and uploaded at a time. Each file is encoded column by column in row groups of at most
 *       {@code rowGroupRows} rows; the row groups of a file are encoded in parallel on a pool of
 *       {@code encodeThreads} (separate from the upload workers, which only wait on it), with at most
 *       {@code encodeThreads + 1} encoded row groups held at once across all the files of the
 *       snapshot (a {@link io.cairn.snapshotter.format.RowGroupBudget} shared by them). A store that {@link
 *       ObjectStore#supportsStreamingWrites} (S3, a local directory) receives the encoded bytes as they are
 *       produced: on S3 a file within {@code s3.multipart.threshold-bytes} rounded up to whole
 *       parts ({@code s3.multipart.part-size-bytes}; 16 MiB = 2 × 8 MiB by default) goes in one
 *       PUT (its full parts held back until the end, counted as parts in flight), a larger one in
 *       a multipart upload whose parts leave while later row groups encode, with at most {@code
 *       s3.multipart.parallelism} parts in flight or held store-wide; so upload buffers hold at
 *       most {@code (parallelism +
 *       s3.multipart.parallelism) * part size} (64 MiB with the defaults), whatever the file
 *       sizes. Locally the bytes go to a temporary file of the store, renamed at commit. Any
 *       other store gets a file encoded into memory until it reaches the spill threshold, then
 *       into a temporary file, uploaded when complete.
 *   <li>Heap a snapshot adds above the state (the capture shares the engine's immutable batches;
 *       it copies none): (1) the encoder's, at most {@code encodeThreads + 1} row groups held at
 *       once, each its compressed pages (about {@code rowGroupRows} × the compressed bytes of a
 *       row: ≈ 2.5 MB for 1Mi rows of two BIGINT columns), and for the {@code encodeThreads}
 *       being encoded parquet-java's column buffers (per column an open page of at most 1 MiB, a
 *       dictionary of at most 1 MiB with its hash table, the page's statistics); (2) the
 *       upload's: on S3 the part buffers above, at most {@code (parallelism +
 *       s3.multipart.parallelism) * part size} (64 MiB with the defaults; a file under one part
 *       holds only its own bytes), on a local directory a 64 KiB stream buffer each, on other
 *       stores up to the spill threshold per file. Measured with the defaults and 2 encode
 *       threads on 13.9M rows of (BIGINT, BIGINT) in 4 files of ≈ 8.4 MB ({@code
 *       SnapshotBenchmark} with {@code -Dcairn.bench.headroom-mib=64}): the snapshot completes
 *       with only ≈ 65.5 MiB of heap free above the state (64 MiB and G1's region rounding),
 *       on a local directory and on S3, where the part buffers peaked at 31–33 MiB; likewise
 *       on S3 for 16.7M rows in 4 files of ≈ 10 MB (multipart; part buffers peaked at 39 MiB,
 *       full collections during it found at most 40 MiB live above the state). With more
 *       files larger than one part, the part buffers alone can reach their 64 MiB bound, so
 *       the 64 MiB figure holds for these states, not for every state.
 *       (3) A group of small batches is merged when its file is encoded, on an upload worker:
 *       at most {@code parallelism} merged groups of at most {@code groupRows} rows exist at once
 *       (4 × 65,536 rows of two BIGINT columns with their time and diff: 8 MiB with the defaults).
 *   <li>One row count: a snapshot's rows are the updates stored in the batch files its manifest
 *       references ({@link Manifest#rows()}), which is what loading it yields. Every log line,
 *       {@link SnapshotResult#rows()} and the manifest use it. It can exceed the captured state's
 *       in-memory count ({@code EngineState.rows()}) when a merged batch is stored as the
 *       already-uploaded files of its inputs (their union holds the updates the merge
 *       consolidated), so that count is not reported.
 *   <li>Incremental: a batch whose id is in the last committed manifest (this process's, or the
 *       newest readable one found in the store at the first snapshot, or one given to {@link
 *       #seed}) is referenced, not uploaded again. Batch ids are unique, so a file's key never
 *       names different contents. So are consecutive batches whose updates that manifest's files
 *       hold exactly, cut differently ({@link #sameUpdates}: a merge of batches it stored, or
 *       batches it stored as one group).
 *   <li>Small files grouped: consecutive new batches of an arrangement shard of at most {@code
 *       groupRows / 2} rows each, each starting after every time of the ones before it, are merged ({@link
 *       Batch#mergeAll}: times kept, so no update is consolidated away and the row count is the
 *       members' sum) into one file of at most {@code groupRows} rows, so that the many
 *       small batches at the young end of every spine cost one request per arrangement shard to
 *       write and to load, not one each. A group is uploaded again only when its batches change
 *       (a merge in the engine, a new tick's batch): at most {@code groupRows} rows per
 *       arrangement shard and snapshot.
 *   <li>Atomicity: no manifest, no snapshot. If a batch upload fails, the files this attempt
 *       uploaded are deleted (the failure is known) and no manifest is written. If the manifest
 *       write fails, the manifest is looked up; if it is not there the snapshot failed, and its
 *       files are left for garbage collection (the outcome of the write may be unknown).
 *   <li>Pins: while a snapshot runs, the keys of every file it uploads or references are in
 *       {@link #pinnedKeys()}, until after the manifest committed; an in-process {@link
 *       GarbageCollector} never deletes a pinned key.
 * </ul>
 */
public final class Snapshotter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Snapshotter.class);

  /** The default of {@link Builder#groupRows}. */
  public static final int DEFAULT_GROUP_ROWS = 65_536;

  /** Progress of the running snapshot. */
  public record Progress(String snapshotId, long tick, int filesToUpload, int filesUploaded, long bytesUploaded, Instant started) {}

  private final ObjectStore store;
  private final SnapshotPaths paths;
  private final int parallelism;
  private final Executor executor;
  private final ExecutorService ownedExecutor;
  private final ExecutorService coordinator;
  private final Clock clock;
  private final long spillThreshold;
  private final Path tempDir;
  private final BatchFileOptions fileOptions;
  private final ExecutorService ownedEncoder;
  private final AtomicBoolean running = new AtomicBoolean();
  private final Set<String> pinned = ConcurrentHashMap.newKeySet();
  private final List<Consumer<SnapshotResult>> listeners = new CopyOnWriteArrayList<>();
  private final AtomicReference<Progress> progress = new AtomicReference<>();
  private volatile Map<String, BatchFile> committed; // batch id -> file, of the last committed manifest
  private volatile Manifest committedManifest; // the last committed manifest (for merge covers)
  private volatile SnapshotResult last;
  private final int groupRows;

  private Snapshotter(Builder b) {
    this.store = b.store;
    this.paths = new SnapshotPaths(b.prefix);
    this.parallelism = b.parallelism;
    this.clock = b.clock;
    this.spillThreshold = b.spillThreshold;
    this.tempDir = b.tempDir;
    this.groupRows = b.groupRows;
    Executor encoder = b.encodeExecutor;
    if (encoder == null) {
      AtomicInteger n = new AtomicInteger();
      this.ownedEncoder = Executors.newFixedThreadPool(b.encodeThreads, r -> {
        Thread t = new Thread(r, "snapshot-encode-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      encoder = ownedEncoder;
    } else {
      this.ownedEncoder = null;
    }
    this.fileOptions = BatchFileOptions.defaults()
        .withRowGroupRows(b.rowGroupRows)
        .withZstdLevel(b.zstdLevel)
        .withPageFormat(b.pageFormat)
        .withExecutor(encoder, b.encodeThreads + 1);
    if (b.executor != null) {
      this.executor = b.executor;
      this.ownedExecutor = null;
    } else {
      AtomicInteger n = new AtomicInteger();
      this.ownedExecutor = Executors.newFixedThreadPool(parallelism, r -> {
        Thread t = new Thread(r, "snapshot-upload-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
      this.executor = ownedExecutor;
    }
    this.coordinator = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "snapshot-coordinator");
      t.setDaemon(true);
      return t;
    });
  }

  public static Builder builder(ObjectStore store) {
    return new Builder(store);
  }

  /** Builds a {@link Snapshotter}. */
  public static final class Builder {
    private final ObjectStore store;
    private String prefix = "";
    private int parallelism = 4;
    private Executor executor;
    private Clock clock = Clock.systemUTC();
    private long spillThreshold = 64L << 20;
    private Path tempDir;
    private int rowGroupRows = BatchFileOptions.DEFAULT_ROW_GROUP_ROWS;
    private int zstdLevel = BatchFileOptions.DEFAULT_ZSTD_LEVEL;
    private BatchFileOptions.PageFormat pageFormat = BatchFileOptions.DEFAULT_PAGE_FORMAT;
    private int encodeThreads = Math.max(1, Runtime.getRuntime().availableProcessors());
    private Executor encodeExecutor;
    private int groupRows = DEFAULT_GROUP_ROWS;

    private Builder(ObjectStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    public Builder prefix(String p) {
      this.prefix = Objects.requireNonNull(p, "prefix");
      return this;
    }

    public Builder parallelism(int n) {
      if (n < 1 || n > 256) {
        throw new IllegalArgumentException("Cannot build snapshotter: parallelism must be in [1, 256], got " + n);
      }
      this.parallelism = n;
      return this;
    }

    /** The executor running uploads (default: an owned pool of {@code parallelism} daemon threads). */
    public Builder executor(Executor e) {
      this.executor = Objects.requireNonNull(e, "executor");
      return this;
    }

    public Builder clock(Clock c) {
      this.clock = Objects.requireNonNull(c, "clock");
      return this;
    }

    /** Bytes of an encoded batch file held in memory; beyond them it continues into a temporary file (default 64 MiB). */
    public Builder spillThresholdBytes(long n) {
      if (n < 0) {
        throw new IllegalArgumentException("Cannot build snapshotter: spill threshold must be >= 0, got " + n);
      }
      this.spillThreshold = n;
      return this;
    }

    /** Where large batches are encoded before upload (default: the JVM's temporary directory). */
    public Builder tempDirectory(Path dir) {
      this.tempDir = Objects.requireNonNull(dir, "dir");
      return this;
    }

    /** The most rows in one row group of a batch file (default {@value BatchFileOptions#DEFAULT_ROW_GROUP_ROWS}). */
    public Builder rowGroupRows(int rows) {
      if (rows < 1) {
        throw new IllegalArgumentException("Cannot build snapshotter: rows per row group must be >= 1, got " + rows);
      }
      this.rowGroupRows = rows;
      return this;
    }

    /** The ZSTD level of batch file pages, in [1, 19] (default {@value BatchFileOptions#DEFAULT_ZSTD_LEVEL}). */
    public Builder zstdLevel(int level) {
      if (level < 1 || level > 19) {
        throw new IllegalArgumentException("Cannot build snapshotter: the ZSTD level must be in [1, 19], got " + level);
      }
      this.zstdLevel = level;
      return this;
    }

    /** The data page format and value encodings of batch files (default {@link BatchFileOptions#DEFAULT_PAGE_FORMAT}). */
    public Builder pageFormat(BatchFileOptions.PageFormat format) {
      this.pageFormat = Objects.requireNonNull(format, "format");
      return this;
    }

    /** Threads encoding row groups (default: the available processors); also bounds row groups encoded ahead. */
    public Builder encodeThreads(int n) {
      if (n < 1 || n > 256) {
        throw new IllegalArgumentException("Cannot build snapshotter: encode threads must be in [1, 256], got " + n);
      }
      this.encodeThreads = n;
      return this;
    }

    /**
     * The executor encoding row groups (default: an owned pool of {@code encodeThreads} daemon
     * threads). Upload workers wait on it: it must not be the upload executor if that is bounded.
     */
    public Builder encodeExecutor(Executor e) {
      this.encodeExecutor = Objects.requireNonNull(e, "executor");
      return this;
    }

    /**
     * New batches of at most half this many rows, consecutive in an arrangement shard, are stored
     * together as one file of at most this many rows (default {@value #DEFAULT_GROUP_ROWS}); 0
     * stores every batch as a file of its own.
     */
    public Builder groupRows(int rows) {
      if (rows < 0) {
        throw new IllegalArgumentException("Cannot build snapshotter: group rows must be >= 0, got " + rows);
      }
      this.groupRows = rows;
      return this;
    }

    public Snapshotter build() {
      return new Snapshotter(this);
    }
  }

  // ---------------------------------------------------------------- API

  /**
   * Runs the batch-file encoder over three synthetic batches of {@code rows} rows, {@code rounds}
   * times, into a discarded output; returns the milliseconds it took.
   *
   * <p>A node's first snapshot after a start — and a daily one always is — otherwise runs the
   * encoder in code the JIT has not compiled yet: measured on a freshly started node, 3.2M rows
   * took 0.9–1.0 s against DuckDB's 0.18 s, where a warm encoder is several times faster
   * (benchmarks/RESULTS.md, issue 34). The batches cover the column shapes the encoder has
   * separate code for: all-BIGINT columns (the long-column path), TEXT, DOUBLE, BOOLEAN and
   * TIMESTAMP columns with NULLs, and BIGINT columns whose values take every branch of the
   * integer encoders ({@link #widthsBatch}). It also encodes and decodes a manifest of every
   * member type once: the first use of the manifest's JSON codec builds its serializers by
   * reflection, which took 40 ms of a fresh node's first snapshot of 3.19M rows (JFR, issue 34).
   * Nothing is written to the store.
   */
  public long warmUp(int rows, int rounds) {
    long t0 = System.nanoTime();
    Batch longs = warmUpBatch(rows, false);
    Batch mixed = warmUpBatch(rows, true);
    Batch widths = widthsBatch(rows);
    for (int r = 0; r < rounds; r++) {
      for (Batch b : List.of(longs, mixed, widths)) {
        ParquetBatchFiles.write("warm-up", 0, b, new CheckedOutputStream(OutputStream.nullOutputStream(), new CRC32C()),
            fileOptions);
      }
    }
    Manifest sample = new Manifest(Manifest.FORMAT_VERSION, "warm-up", 1, Instant.EPOCH.toString(), 1, 1,
        Map.of("source", Map.of("offset", "1")),
        List.of(new ArrangementEntry("arrangement", 0, 2, "id BIGINT", "v BIGINT", "fingerprint",
            List.of(new BatchFile("batch", "batches/x.parquet", 1, 1, "crc32c:00000000", 0, 2, 1)))),
        "", 1, List.of(new Manifest.ViewEntry("view", 1, "arrangement", "id BIGINT, v BIGINT")),
        List.of(new Manifest.SinkEntry("sink", 2, 1, Map.of("0", "1"), "id BIGINT", List.of(List.<Object>of("x")))));
    if (!ManifestCodec.decode("warm-up", ManifestCodec.encode(sample)).equals(sample)) {
      throw new IllegalStateException("The manifest codec did not read back the warm-up's manifest");
    }
    return (System.nanoTime() - t0) / 1_000_000;
  }

  /**
   * BIGINT columns that take every branch of the encoder's integer paths, so that the code the
   * warm-up compiles is not thrown away at the first real snapshot (seen with {@code
   * -XX:+PrintCompilation}: the compiled delta encoder and bit packer were made not entrant
   * within a millisecond of the first snapshot's start, and it ran in the first tier). Per run of
   * 32 values the deltas take another bit width, 0 to 64 ({@code wide}; {@code id}'s keep the key
   * ascending); {@code grows} pays for a dictionary on the first page and overflows it later;
   * {@code sparse} is NULL in some pages only, never in others.
   */
  private static Batch widthsBatch(int rows) {
    Schema key = Schema.of(Column.of("id", Type.BIGINT));
    Schema val = Schema.of(Column.of("wide", Type.BIGINT), Column.of("grows", Type.BIGINT), Column.of("sparse", Type.BIGINT));
    Batch.SortedBuilder b = new Batch.SortedBuilder(key, val, rows);
    int pageRows = 5 * 4096; // the encoder's rows per page (format.BulkPageEncoder.PAGE_ROWS)
    Random r = new Random(rows + 1L);
    long id = Long.MIN_VALUE / 2;
    for (int i = 0; i < rows; i++) {
      int run = i >>> 5;
      int idWidth = run % 41; // 2^40 per step at most: the key stays below Long.MAX_VALUE over any warm-up
      id += 1 + (idWidth == 0 ? 0 : r.nextLong() >>> (64 - idWidth));
      int w = run % 65;
      long wide = w == 0 ? 7 : w == 64 ? r.nextLong() : r.nextLong() >> (64 - w);
      long grows = i < pageRows ? i % 100 : i;
      int page = i / pageRows;
      Long sparse = page % 3 == 1 && i % 5 == 0 ? null : page % 3 == 2 ? null : (Long) (long) r.nextInt(1_000);
      b.add(Row.of(id), Row.of(wide, grows, sparse), r.nextInt(4), i % 9 == 0 ? -1 : 1);
    }
    return b.build(new Description(0, 4, 0));
  }

  private static Batch warmUpBatch(int rows, boolean mixed) {
    Schema key = Schema.of(Column.of("id", Type.BIGINT));
    Schema val = mixed
        ? Schema.of(Column.of("name", Type.TEXT),
            Column.of("price", Type.DOUBLE), Column.of("ok", Type.BOOLEAN),
            Column.of("at", Type.TIMESTAMP))
        : Schema.of(Column.of("category", Type.BIGINT),
            Column.of("amount", Type.BIGINT));
    Batch.SortedBuilder b = new Batch.SortedBuilder(key, val, rows);
    Random r = new Random(rows);
    long id = 0;
    for (int i = 0; i < rows; i++) {
      id += 1 + r.nextInt(8);
      Row v = mixed
          ? Row.of(i % 17 == 0 ? null : "customer " + r.nextInt(5_000), i % 13 == 0 ? null : r.nextInt(100_000) / 100.0,
              i % 11 == 0 ? null : r.nextBoolean(), 1_700_000_000_000_000L + r.nextInt(1_000_000))
          : Row.of((long) r.nextInt(100), (long) r.nextInt(1_000));
      b.add(Row.of(id), v, r.nextInt(4), 1);
    }
    return b.build(new Description(0, 4, 0));
  }

  /** Captures {@code engine} between two ticks, then uploads in the background. */
  public CompletableFuture<SnapshotResult> snapshotAsync(Engine engine, LongSupplier catalogPosition) {
    begin();
    try {
      record Cut(EngineState state, long position, long pauseNanos) {}
      Cut cut = engine.betweenTicks(() -> {
        long t0 = System.nanoTime(); // the pause: how long the engine is held, not how long a tick kept this thread waiting
        EngineState state = engine.capture();
        long position = catalogPosition.getAsLong();
        return new Cut(state, position, System.nanoTime() - t0);
      });
      return startAsync(cut.state(), cut.position(), Duration.ofNanos(cut.pauseNanos()));
    } catch (RuntimeException e) {
      running.set(false);
      throw e;
    }
  }

  /** Uploads a captured state in the background; the future fails with a {@link SnapshotFailedException}. */
  public CompletableFuture<SnapshotResult> snapshotAsync(EngineState state, long catalogPosition, Duration capturePause) {
    begin();
    return startAsync(state, catalogPosition, capturePause);
  }

  /** Uploads and commits a captured state; returns when the manifest committed. */
  public SnapshotResult snapshot(EngineState state, long catalogPosition) {
    return snapshot(state, catalogPosition, Duration.ZERO);
  }

  /** Uploads and commits a captured state whose capture took {@code capturePause}. */
  public SnapshotResult snapshot(EngineState state, long catalogPosition, Duration capturePause) {
    return snapshot(state, catalogPosition, null, 0, capturePause);
  }

  /**
   * Uploads and commits a captured state, recording the hash of the last catalog entry it
   * includes ({@code catalogHash}) and the writer's {@code epoch}.
   */
  public SnapshotResult snapshot(EngineState state, long catalogPosition, String catalogHash, long epoch, Duration capturePause) {
    begin();
    try {
      return run(state, catalogPosition, catalogHash, epoch, capturePause);
    } finally {
      running.set(false);
    }
  }

  /** Whether a snapshot is running. */
  public boolean isRunning() {
    return running.get();
  }

  /** Progress of the running snapshot, if any. */
  public Optional<Progress> progress() {
    return Optional.ofNullable(progress.get());
  }

  /** The last snapshot this instance committed. */
  public Optional<SnapshotResult> lastResult() {
    return Optional.ofNullable(last);
  }

  /** Keys (full) that a running snapshot uploads or references: garbage collection must keep them. */
  public Set<String> pinnedKeys() {
    return Set.copyOf(pinned);
  }

  /** Called with every committed snapshot's figures (on the snapshotting thread). */
  public void addListener(Consumer<SnapshotResult> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Makes the files of {@code m} (e.g. the snapshot just recovered from) reusable by the next snapshot. */
  public void seed(Manifest m) {
    committedManifest = m;
    committed = index(m);
  }

  public String prefix() {
    return paths.prefix();
  }

  // ---------------------------------------------------------------- mechanism

  private void begin() {
    if (!running.compareAndSet(false, true)) {
      Progress p = progress.get();
      throw new SnapshotInProgressException(
          "Cannot start a snapshot: snapshot " + (p == null ? "?" : p.snapshotId() + " of tick " + p.tick()) + " is still running");
    }
  }

  private CompletableFuture<SnapshotResult> startAsync(EngineState state, long position, Duration pause) {
    try {
      return CompletableFuture.supplyAsync(() -> {
        try {
          return run(state, position, null, 0, pause);
        } finally {
          running.set(false);
        }
      }, coordinator);
    } catch (RejectedExecutionException e) {
      running.set(false);
      throw new SnapshotFailedException("Cannot start a snapshot: the snapshotter is closed", e, false);
    }
  }

  /**
   * One file to upload: a batch, or a group of consecutive small batches merged when the file is
   * encoded (on an upload worker, so at most {@code parallelism} groups are held merged at once).
   */
  private static final class Upload {
    final String arrangement;
    final int shard;
    final List<Batch> members;
    final String id;
    final long rows;
    final String path;
    volatile BatchFile file;

    Upload(String arrangement, int shard, List<Batch> members) {
      this.arrangement = arrangement;
      this.shard = shard;
      this.members = List.copyOf(members);
      this.id = members.size() == 1 ? members.get(0).id() : Batch.newId();
      long n = 0;
      for (Batch b : members) {
        n += b.size();
      }
      this.rows = n;
      this.path = SnapshotPaths.batchPath(arrangement, id);
    }

    /** The batch to encode: the only member, or the members merged under this upload's id. */
    Batch batch() {
      if (members.size() == 1) {
        return members.get(0);
      }
      Batch merged = Batch.mergeAll(members).withId(id);
      if (merged.size() != rows) { // members are grouped only when none can consolidate with another
        throw new IllegalStateException("Cannot group batches " + members + ": merged they hold " + merged.size() + " updates, not " + rows);
      }
      return merged;
    }
  }

  private SnapshotResult run(EngineState state, long catalogPosition, String catalogHash, long epoch, Duration capturePause) {
    Objects.requireNonNull(state, "state");
    Instant createdAt = clock.instant();
    long t0 = System.nanoTime();
    String id = UUID.randomUUID().toString();
    Map<String, BatchFile> known = knownFiles();
    Manifest previous = committedManifest;
    Map<String, List<BatchFile>> previousShards = new HashMap<>();
    if (previous != null && previous.shards() == state.shards()) {
      for (ArrangementEntry a : previous.arrangements()) {
        previousShards.put(a.name() + "#" + a.shard(), a.batches());
      }
    }
    List<Upload> uploads = new ArrayList<>();
    List<List<Object>> slots = new ArrayList<>(); // per arrangement state: BatchFile or Upload
    int reused = 0;
    for (ArrangementState a : state.arrangements()) {
      List<Object> s = new ArrayList<>();
      List<Batch> bs = a.batches();
      List<BatchFile> before = previousShards.get(a.arrangement() + "#" + a.shard());
      Group group = new Group(a, s, uploads);
      for (int i = 0; i < bs.size(); ) {
        Batch b = bs.get(i);
        BatchFile k = known.get(b.id());
        Segment seg;
        if (b.isEmpty()) {
          group.flush();
          s.add(new BatchFile(b.id(), null, 0, 0, null, b.description().lower(), b.description().upper(), b.description().since()));
          i++;
        } else if (k != null && k.rows() == b.size() && k.path().equals(SnapshotPaths.batchPath(a.arrangement(), b.id()))) {
          group.flush();
          s.add(k);
          reused++;
          pinned.add(paths.key(k.path()));
          i++;
        } else if ((seg = sameUpdates(before, bs, i)) != null) {
          // the last snapshot's files hold exactly these batches' updates (a merge of its batches,
          // or batches it stored as one group): reference them (same collection as of T)
          group.flush();
          for (BatchFile f : seg.files()) {
            s.add(f);
            if (f.path() != null) {
              reused++;
              pinned.add(paths.key(f.path()));
            }
          }
          i += seg.batches();
        } else if (b.size() <= groupRows / 2) {
          group.add(b);
          i++;
        } else {
          group.flush();
          group.upload(List.of(b));
          i++;
        }
      }
      group.flush();
      slots.add(s);
    }
    Set<String> myPins = Set.copyOf(pinned);
    progress.set(new Progress(id, state.tick(), uploads.size(), 0, 0, createdAt));
    long rows = 0; // the manifest's count (see the class comment): rows of the files it will reference
    for (List<Object> s : slots) {
      for (Object o : s) {
        rows += o instanceof Upload u ? u.rows : ((BatchFile) o).rows();
      }
    }
    LOG.info("Snapshot {} of tick {}: {} rows, {} batch files to upload, {} reused", id, state.tick(), rows, uploads.size(), reused);
    try {
      try {
        uploadAll(uploads);
      } catch (RuntimeException | Error e) {
        List<String> written = new ArrayList<>();
        for (Upload u : uploads) {
          if (u.file != null) {
            written.add(paths.key(u.path));
          }
        }
        deleteQuietly(written);
        LOG.warn("Snapshot {} of tick {} failed while uploading batch files: {}", id, state.tick(), e.getMessage());
        throw new SnapshotFailedException(
            "Cannot snapshot tick " + state.tick() + ": uploading batch files failed: " + e.getMessage(), e, false);
      }
      List<ArrangementEntry> entries = new ArrayList<>();
      long bytesNew = 0;
      int files = 0;
      long bytesTotal = 0;
      for (int i = 0; i < slots.size(); i++) {
        ArrangementState a = state.arrangements().get(i);
        List<BatchFile> bf = new ArrayList<>();
        for (Object o : slots.get(i)) {
          BatchFile f = o instanceof Upload u ? u.file : (BatchFile) o;
          if (o instanceof Upload) {
            bytesNew += f.bytes();
          }
          if (f.path() != null) {
            files++;
            bytesTotal += f.bytes();
          }
          bf.add(f);
        }
        entries.add(new ArrangementEntry(a.arrangement(), a.shard(), a.upper(), a.keySchema().toString(), a.valSchema().toString(),
            ParquetBatchFiles.fingerprint(a.keySchema(), a.valSchema()), bf));
      }
      Map<String, Map<String, String>> offsets = new HashMap<>();
      state.offsets().forEach((k, v) -> offsets.put(k, v.values()));
      List<Manifest.ViewEntry> views = new ArrayList<>();
      state.views().forEach(v -> views.add(new Manifest.ViewEntry(v.name(), v.id(), v.arrangement(), v.schema().toString())));
      Manifest m = new Manifest(Manifest.FORMAT_VERSION, id, state.tick(), createdAt.toString(), catalogPosition, state.shards(), offsets,
          entries, catalogHash, epoch, views, SinkEntries.of(state.sinks()));
      byte[] bytes = ManifestCodec.encode(m);
      String key = paths.manifestKey(state.tick(), id);
      if (m.rows() != rows) {
        throw new IllegalStateException("Cannot commit snapshot " + id + ": its manifest holds " + m.rows() + " rows, " + rows + " were planned");
      }
      commit(key, bytes, state.tick());
      committed = index(m);
      Duration upload = Duration.ofNanos(System.nanoTime() - t0);
      committedManifest = m;
      SnapshotResult r = new SnapshotResult(id, key, state.tick(), createdAt, catalogPosition, m.rows(), files, uploads.size(),
          reused, bytesNew + bytes.length, bytesTotal, capturePause, upload, state.offsets());
      last = r;
      LOG.info("Committed snapshot {} of tick {}: {} rows, {} files ({} new, {} reused), {} bytes uploaded, capture pause {} ms, upload {} ms",
          id, r.tick(), r.rows(), r.files(), r.filesNew(), r.filesReused(), r.bytesUploaded(),
          String.format(Locale.ROOT, "%.3f", capturePause.toNanos() / 1e6), upload.toMillis());
      for (Consumer<SnapshotResult> l : listeners) {
        try {
          l.accept(r);
        } catch (RuntimeException e) {
          LOG.warn("Snapshot listener failed: {}", e.getMessage());
        }
      }
      return r;
    } finally {
      pinned.removeAll(myPins);
      progress.set(null);
    }
  }

  private void commit(String key, byte[] bytes, long tick) {
    try {
      store.putIfAbsent(key, bytes);
      return;
    } catch (RuntimeException e) {
      Boolean there = null;
      try {
        Optional<ObjectInfo> info = store.head(key);
        there = info.isPresent() && info.get().size() == bytes.length && Arrays.equals(store.readAllBytes(key), bytes);
      } catch (RuntimeException lookup) {
        e.addSuppressed(lookup);
      }
      if (Boolean.TRUE.equals(there)) {
        LOG.info("Manifest {} is in place although its write reported {}", key, e.getMessage());
        return;
      }
      boolean unknown = there == null;
      if (unknown) {
        LOG.error("Snapshot of tick {}: the outcome of writing manifest {} is unknown: {}", tick, key, e.getMessage());
      } else {
        LOG.warn("Snapshot of tick {} failed: writing manifest {} failed: {}", tick, key, e.getMessage());
      }
      throw new SnapshotFailedException("Cannot commit snapshot of tick " + tick + ": writing manifest " + key + " failed: " + e.getMessage(), e, unknown);
    }
  }

  private void uploadAll(List<Upload> uploads) {
    if (uploads.isEmpty()) {
      return;
    }
    ConcurrentLinkedQueue<Upload> queue = new ConcurrentLinkedQueue<>(uploads);
    int workers = Math.min(parallelism, uploads.size());
    CountDownLatch done = new CountDownLatch(workers);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong bytes = new AtomicLong();
    AtomicInteger count = new AtomicInteger();
    for (int w = 0; w < workers; w++) {
      Runnable worker = () -> {
        try {
          Upload u;
          while (failure.get() == null && (u = queue.poll()) != null) {
            u.file = uploadOne(u);
            long b = bytes.addAndGet(u.file.bytes());
            int c = count.incrementAndGet();
            progress.updateAndGet(p -> p == null ? null : new Progress(p.snapshotId(), p.tick(), p.filesToUpload(), c, b, p.started()));
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        } finally {
          done.countDown();
        }
      };
      try {
        executor.execute(worker);
      } catch (RejectedExecutionException e) {
        failure.compareAndSet(null, e);
        done.countDown();
      }
    }
    try {
      done.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure.compareAndSet(null, e);
      queue.clear();
    }
    Throwable t = failure.get();
    if (t instanceof RuntimeException re) {
      throw re;
    }
    if (t instanceof Error err) {
      throw err;
    }
    if (t != null) {
      throw new SnapshotFailedException("Cannot upload batch files: " + t, t, false);
    }
  }

  private BatchFile uploadOne(Upload u) {
    Batch b = u.batch();
    String key = paths.key(u.path);
    CRC32C crc = new CRC32C();
    long size;
    if (store.supportsStreamingWrites()) {
      // encoded straight into the upload: S3 parts leave while later row groups encode
      try (ObjectWrite w = store.openWrite(key)) {
        CheckedOutputStream os = new CheckedOutputStream(w, crc);
        ParquetBatchFiles.write(u.arrangement, u.shard, b, os, fileOptions);
        os.flush();
        w.commit();
        size = w.size();
      } catch (IOException e) {
        throw new UncheckedIOException("Cannot upload batch " + b.id() + " to " + key + ": " + e.getMessage(), e);
      }
      return new BatchFile(b.id(), u.path, b.size(), size, checksum(crc), b.description().lower(), b.description().upper(),
          b.description().since());
    }
    SpillingOutputStream spill = new SpillingOutputStream(spillThreshold, tempDir);
    try {
      try (OutputStream os = new CheckedOutputStream(spill, crc)) {
        ParquetBatchFiles.write(u.arrangement, u.shard, b, os, fileOptions);
      }
      size = spill.size();
      if (spill.file() == null) {
        store.put(key, spill.bytes());
      } else {
        store.put(key, spill.file());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot encode batch " + b.id() + " to a temporary file: " + e.getMessage(), e);
    } finally {
      try {
        spill.discard();
      } catch (IOException e) {
        LOG.warn("Cannot delete temporary file {}: {}", spill.file(), e.getMessage());
      }
    }
    return new BatchFile(b.id(), u.path, b.size(), size, checksum(crc), b.description().lower(), b.description().upper(),
        b.description().since());
  }

  /**
   * A bound on the times of {@code b}'s updates: they were sealed before its upper, and a merge's
   * logical compaction may have advanced them to its since. A batch joins a group only if it
   * starts after the group's bound, so no update of it can consolidate with one of an earlier
   * member (times equal) and the group's file holds exactly the members' updates.
   */
  private static long maxTime(Batch b) {
    return Math.max(b.description().upper() - 1, b.description().since());
  }

  /** The last snapshot's files holding exactly the updates of {@code batches} engine batches. */
  record Segment(List<BatchFile> files, int batches) {}

  /**
   * The consecutive new small batches of one arrangement shard waiting to be stored as one file,
   * and where the shard's entries go. Every other entry of the shard (an empty batch, a reused
   * file, a batch uploaded alone) flushes the group first, so the entries stay in the spine's
   * order. A batch joins while the file stays within {@code groupRows} rows and the batch starts
   * after every time of the members ({@link #maxTime}); otherwise the group is flushed and the
   * batch starts the next one.
   */
  private final class Group {
    private final ArrangementState arrangement;
    private final List<Object> entries;
    private final List<Upload> uploads;
    private final List<Batch> members = new ArrayList<>();
    private long rows;
    private long maxTime = Long.MIN_VALUE;

    Group(ArrangementState arrangement, List<Object> entries, List<Upload> uploads) {
      this.arrangement = arrangement;
      this.entries = entries;
      this.uploads = uploads;
    }

    void add(Batch b) {
      if (rows + b.size() > groupRows || b.description().lower() <= maxTime) {
        flush();
      }
      members.add(b);
      rows += b.size();
      maxTime = Math.max(maxTime, Snapshotter.maxTime(b));
    }

    void flush() {
      if (!members.isEmpty()) {
        upload(members);
        members.clear();
        rows = 0;
        maxTime = Long.MIN_VALUE;
      }
    }

    /** Adds an upload of {@code batches} (one file) as the shard's next entry. */
    void upload(List<Batch> batches) {
      Upload u = new Upload(arrangement.arrangement(), arrangement.shard(), batches);
      uploads.add(u);
      entries.add(u);
      pinned.add(paths.key(u.path));
    }
  }

  /**
   * The files of the last snapshot that together hold exactly the updates of the engine batches
   * {@code bs[i..i+n)} for some n, if there are such files: a run of that snapshot's files of the
   * same arrangement shard whose first starts at {@code bs[i]}'s lower and whose last ends where
   * {@code bs[i+n-1]} ends. Batches partition an arrangement shard's updates by the time they were
   * sealed at, a merge only joins neighbours (consolidating, advancing times to its since), and a
   * grouped file joins neighbours too; so two runs with the same outer bounds hold the same
   * collection as of any time {@code >=} their sinces, however they are cut inside. This covers
   * a batch that is a merge of files the last snapshot holds (one batch, several files) and
   * batches the last snapshot stored as one group (several batches, one file). Used only while the
   * files are not much larger than the batches (merges that cancel many updates are uploaded, so
   * storage shrinks).
   */
  static Segment sameUpdates(List<BatchFile> previous, List<Batch> bs, int i) {
    if (previous == null || previous.isEmpty()) {
      return null;
    }
    long lower = bs.get(i).description().lower();
    int j = 0;
    while (j < previous.size() && (previous.get(j).lower() != lower || previous.get(j).path() == null)) {
      j++;
    }
    if (j == previous.size()) {
      return null;
    }
    int e = i;
    int p = j;
    long eUpper = bs.get(e).description().upper();
    long pUpper = previous.get(p).upper();
    long eRows = bs.get(e).size();
    long pRows = previous.get(p).rows();
    while (eUpper != pUpper) {
      if (eUpper < pUpper) {
        if (++e == bs.size()) {
          return null;
        }
        eUpper = bs.get(e).description().upper();
        eRows += bs.get(e).size();
      } else {
        if (++p == previous.size()) {
          return null;
        }
        pUpper = previous.get(p).upper();
        pRows += previous.get(p).rows();
      }
    }
    if (pRows > 2L * eRows + 1024) {
      return null;
    }
    return new Segment(List.copyOf(previous.subList(j, p + 1)), e - i + 1);
  }

  static String checksum(CRC32C crc) {
    return String.format(Locale.ROOT, "crc32c:%08x", crc.getValue());
  }

  private void deleteQuietly(List<String> keys) {
    if (keys.isEmpty()) {
      return;
    }
    try {
      store.delete(keys);
    } catch (RuntimeException e) {
      LOG.warn("Cannot delete {} batch files of a failed snapshot (garbage collection will): {}", keys.size(), e.getMessage());
    }
  }

  private static Map<String, BatchFile> index(Manifest m) {
    Map<String, BatchFile> out = new HashMap<>();
    for (BatchFile f : m.files()) {
      out.put(f.id(), f);
    }
    return Map.copyOf(out);
  }

  /** The reusable files: the last committed manifest's, seeded from the store on first use. */
  private Map<String, BatchFile> knownFiles() {
    Map<String, BatchFile> k = committed;
    if (k != null) {
      return k;
    }
    SnapshotReader reader = new SnapshotReader(store, paths.prefix(), Runnable::run, 1);
    Map<String, BatchFile> seeded = Map.of();
    try {
      for (ManifestInfo info : reader.list()) {
        try {
          Manifest m = reader.read(info);
          List<String> problems = reader.verify(m, SnapshotReader.Verification.PRESENCE);
          if (problems.isEmpty()) {
            seeded = index(m);
            committedManifest = m;
            LOG.info("Incremental snapshots start from manifest {} ({} files)", info.key(), seeded.size());
            break;
          }
        } catch (CorruptSnapshotException e) {
          LOG.warn("Not reusing files of {}: {}", info.key(), e.getMessage());
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("Cannot list earlier snapshots, uploading every batch: {}", e.getMessage());
      return Map.of();
    }
    committed = seeded;
    return seeded;
  }

  /** Stops the background threads (a running upload is interrupted). */
  @Override
  public void close() {
    coordinator.shutdownNow();
    if (ownedExecutor != null) {
      ownedExecutor.shutdownNow();
    }
    if (ownedEncoder != null) {
      ownedEncoder.shutdownNow();
    }
  }
}
