package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.format.BatchFileOptions;
import io.cairn.snapshotter.format.OffsetBatchFiles;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.zip.CRC32C;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.io.SeekableInputStream;
import org.junit.jupiter.api.Test;

/**
 * Loading batch files through ranged reads ({@link RangedBatchFile}): the rows read are the rows
 * written, no read asks for more than about one row group, the checksum is verified in every
 * order of reads, and positions past 2 GiB work.
 */
class RangedReadTest {
  static final Schema KEY = Schema.of(Column.of("id", Type.BIGINT), Column.of("name", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("price", Type.DOUBLE), Column.of("ok", Type.BOOLEAN),
      Column.of("at", Type.TIMESTAMP), Column.of("nothing", Type.NULL));
  static final Description DESC = new Description(3, 9, 3);

  /** {@code n} seeded random updates: NULLs in every column, retractions, repeated keys. */
  static Batch random(long seed, int n) {
    Random r = new Random(seed);
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Long id = r.nextInt(20) == 0 ? null : (long) r.nextInt(Math.max(1, n / 3));
      String name = r.nextInt(20) == 0 ? null : r.nextInt(4) == 0 ? "" : "n" + r.nextInt(50);
      Long v = r.nextInt(20) == 0 ? null : r.nextLong();
      Double price = r.nextInt(20) == 0 ? null : r.nextGaussian() * 100;
      Boolean ok = r.nextInt(20) == 0 ? null : r.nextBoolean();
      Long at = r.nextInt(20) == 0 ? null : 1_700_000_000_000_000L + r.nextInt(1_000_000);
      long diff = r.nextBoolean() ? 1 : -(1 + r.nextInt(3));
      u.add(new Update(Row.of(id, name), Row.of(v, price, ok, at, null), 3 + r.nextInt(6), diff));
    }
    return Batch.fromUpdates(KEY, VAL, u, DESC);
  }

  static List<Update> updates(Batch b) {
    List<Update> out = new ArrayList<>();
    for (int i = 0; i < b.size(); i++) {
      out.add(b.update(i));
    }
    return out;
  }

  static String crc(byte[] bytes) {
    CRC32C c = new CRC32C();
    c.update(bytes);
    return Snapshotter.checksum(c);
  }

  static long largestRowGroup(RangedBatchFile file) throws IOException {
    try (ParquetFileReader r = ParquetFileReader.open(file, ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      return r.getFooter().getBlocks().stream().mapToLong(BlockMetaData::getCompressedSize).max().orElse(0);
    }
  }

  @Test
  void seededBatchesReadThroughRangesEqualWhatWasWrittenAndTheChecksumIsTheFiles() throws IOException {
    for (long seed = 1; seed <= 25; seed++) {
      Random r = new Random(seed * 31);
      int n = seed == 1 ? 0 : r.nextInt(20_000);
      int rowGroupRows = 200 + r.nextInt(4_000);
      Batch b = random(seed, n);
      byte[] bytes = ParquetBatchFiles.toBytes("a", 0, b, BatchFileOptions.defaults().withRowGroupRows(rowGroupRows));
      RecordingStore store = new RecordingStore(new InMemoryObjectStore());
      store.put("f.parquet", bytes);
      try {
        RangedBatchFile file = RangedBatchFile.open(store, "f.parquet", bytes.length);
        Batch read = ParquetBatchFiles.read("f.parquet", file, b.id(), KEY, VAL, DESC, b.size());
        assertThat(file.checksum()).isEqualTo(crc(bytes));
        assertThat(read.id()).isEqualTo(b.id());
        assertThat(updates(read)).isEqualTo(updates(b));
        int groups = (b.size() + rowGroupRows - 1) / rowGroupRows;
        // the tail, then one read per row group (parquet-java asks a row group at once), then the page indexes
        assertThat(file.ranges()).isLessThanOrEqualTo(groups + 3L);
        long bound = Math.max(RangedBatchFile.TAIL_BYTES + 1L, largestRowGroup(RangedBatchFile.open(store, "f.parquet", bytes.length)) + 4);
        assertThat(store.largestRange("f.parquet")).isLessThanOrEqualTo(bound);
        assertThat(store.gets("f.parquet")).isZero();
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("seed " + seed + " (" + n + " rows, " + rowGroupRows + " rows a group, " + bytes.length
            + " bytes): " + e.getMessage(), e);
      }
    }
  }

  @Test
  void readsBehindTheHashedPrefixStillVerifyTheWholeFile() throws IOException {
    Batch b = random(7, 5_000);
    byte[] bytes = ParquetBatchFiles.toBytes("a", 0, b, BatchFileOptions.defaults().withRowGroupRows(500));
    ObjectStore store = new InMemoryObjectStore();
    store.put("f", bytes);
    RangedBatchFile file = RangedBatchFile.open(store, "f", bytes.length);
    SeekableInputStream in = file.newStream();
    byte[] part = new byte[1000];
    in.seek(bytes.length / 2);
    in.readFully(part);
    assertThat(part).isEqualTo(Arrays.copyOfRange(bytes, bytes.length / 2, bytes.length / 2 + 1000));
    in.seek(10);
    in.readFully(part);
    assertThat(part).isEqualTo(Arrays.copyOfRange(bytes, 10, 1010));
    assertThat(file.checksum()).isEqualTo(crc(bytes));

    // the same order of reads over a corrupted copy: the second pass finds the flipped byte
    byte[] bad = bytes.clone();
    bad[bytes.length / 4] ^= 0x10;
    store.put("g", bad);
    RangedBatchFile corrupt = RangedBatchFile.open(store, "g", bad.length);
    SeekableInputStream in2 = corrupt.newStream();
    in2.seek(bytes.length / 2);
    in2.readFully(part);
    in2.seek(10);
    in2.readFully(part);
    assertThat(corrupt.checksum()).isEqualTo(crc(bad)).isNotEqualTo(crc(bytes));
  }

  @Test
  void aFileOfADifferentSizeIsRefusedBeforeDecoding() {
    Batch b = random(3, 3_000);
    byte[] bytes = ParquetBatchFiles.toBytes("a", 0, b, BatchFileOptions.defaults().withRowGroupRows(300));
    ObjectStore store = new InMemoryObjectStore();
    store.put("short", Arrays.copyOf(bytes, bytes.length - 1));
    store.put("long", Arrays.copyOf(bytes, bytes.length + 1));
    assertThatThrownBy(() -> RangedBatchFile.open(store, "short", bytes.length))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("short").hasMessageContaining("has " + (bytes.length - 1) + " bytes");
    assertThatThrownBy(() -> RangedBatchFile.open(store, "long", bytes.length))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("more than " + bytes.length + " bytes");
    assertThatThrownBy(() -> RangedBatchFile.open(store, "gone", bytes.length))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("gone").hasMessageContaining("missing");
  }

  // ------------------------------------------------------------------ through SnapshotReader

  /** Two snapshots of small row groups in {@code store}; returns the states captured. */
  static EngineState[] twoSnapshots(ObjectStore store) {
    try (Engine e = Fixtures.engine(2, 3000, 1_000_000, 1500);
        Snapshotter s = Snapshotter.builder(store).rowGroupRows(256).build()) {
      for (int i = 0; i < 3; i++) {
        e.tick();
      }
      EngineState older = e.capture();
      s.snapshot(older, 2);
      e.tick();
      EngineState newer = e.capture();
      s.snapshot(newer, 2);
      return new EngineState[] {older, newer};
    }
  }

  @Test
  void filesAboveTheWholeReadSizeAreNeverReadWholeAndLoadTheSameState() {
    RecordingStore store = new RecordingStore(new InMemoryObjectStore());
    EngineState[] states = twoSnapshots(store);
    long threshold = 2048;
    store.calls.clear();
    Manifest m;
    EngineState loaded;
    try (SnapshotReader r = new SnapshotReader(store, "", Runnable::run, 1, threshold)) {
      RecoveryChoice c = r.loadLatest();
      assertThat(c.rejected()).isEmpty();
      m = c.manifest().orElseThrow();
      loaded = c.state().orElseThrow();
    }
    Fixtures.assertSameState(loaded, states[1]);
    List<Manifest.BatchFile> files = m.files().stream().filter(f -> f.path() != null).toList();
    assertThat(files).anyMatch(f -> f.bytes() > threshold).anyMatch(f -> f.bytes() <= threshold);
    for (Manifest.BatchFile f : files) {
      if (f.bytes() > threshold) {
        assertThat(store.gets(f.path())).as("whole reads of %s (%d bytes)", f.path(), f.bytes()).isZero();
        assertThat(store.ranges(f.path())).as("ranged reads of %s", f.path()).isPositive();
        // 256 rows a group of this view are far below the 64 KiB tail: no read asks for more
        assertThat(store.largestRange(f.path())).isLessThanOrEqualTo(RangedBatchFile.TAIL_BYTES + 1L);
      } else {
        assertThat(store.gets(f.path())).isEqualTo(1);
        assertThat(store.ranges(f.path())).isZero();
      }
    }
    // the same snapshot read whole gives the same state
    try (SnapshotReader r = new SnapshotReader(store, "", Runnable::run, 1, Integer.MAX_VALUE - 8)) {
      Fixtures.assertSameState(r.loadLatest().state().orElseThrow(), states[1]);
    }
  }

  @Test
  void aCorruptLargeFileIsACheckSumMismatchAndTheReaderFallsBack() {
    InMemoryObjectStore store = new InMemoryObjectStore();
    EngineState[] states = twoSnapshots(store);
    try (SnapshotReader r = new SnapshotReader(store, "", Runnable::run, 1, 0)) {
      Manifest m2 = r.read(r.list().get(0));
      Manifest m1 = r.read(r.list().get(1));
      List<String> older = m1.files().stream().map(Manifest.BatchFile::id).toList();
      Manifest.BatchFile f = m2.files().stream().filter(x -> x.path() != null && !older.contains(x.id()))
          .max((a, b) -> Long.compare(a.bytes(), b.bytes())).orElseThrow();
      byte[] good = store.readAllBytes(f.path());
      for (int seed = 0; seed < 12; seed++) {
        byte[] bad = good.clone();
        Random rnd = new Random(seed);
        bad[rnd.nextInt(bad.length)] ^= (byte) (1 << rnd.nextInt(8));
        store.put(f.path(), bad);
        RecoveryChoice c = r.loadLatest();
        int s = seed;
        assertThat(c.chosen().orElseThrow().tick()).as("seed %d", s).isEqualTo(m1.tick());
        Fixtures.assertSameState(c.state().orElseThrow(), states[0]);
        assertThat(c.rejected()).singleElement().satisfies(rej -> assertThat(rej.reason()).as("seed %d", s)
            .contains(f.path()).contains("checksum mismatch"));
      }
      store.put(f.path(), Arrays.copyOf(good, good.length - 3));
      assertThat(r.loadLatest().rejected()).singleElement().satisfies(rej -> assertThat(rej.reason())
          .contains(f.path()).contains("has " + (good.length - 3) + " bytes"));
      store.delete(f.path());
      assertThat(r.loadLatest().rejected()).singleElement().satisfies(rej -> assertThat(rej.reason())
          .contains(f.path()).contains("missing"));
      store.put(f.path(), good);
      Fixtures.assertSameState(r.loadLatest().state().orElseThrow(), states[1]);
    }
  }

  @Test
  void aStoreFailureDuringARangedLoadIsTheStoresNotACorruptSnapshot() {
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(new InMemoryObjectStore());
    twoSnapshots(store);
    // the third ranged read fails: inside the decoding of the first large file
    java.util.concurrent.atomic.AtomicInteger ranged = new java.util.concurrent.atomic.AtomicInteger();
    store.failWhen(c -> c.kind() == FaultInjectingObjectStore.Kind.GET_RANGE && ranged.incrementAndGet() == 3);
    try (SnapshotReader r = new SnapshotReader(store, "", Runnable::run, 1, 0)) {
      Manifest m = r.read(r.list().get(0));
      assertThatThrownBy(() -> r.load(m)).isInstanceOf(FaultInjectingObjectStore.InjectedFault.class)
          .isNotInstanceOf(CorruptSnapshotException.class);
      store.clearFaults();
      assertThat(r.load(m).rows()).isEqualTo(m.rows());
    }
  }

  // ------------------------------------------------------------------ past 2 GiB

  /**
   * A batch file of 2.5 GiB + its content: the content is written as if 2.5 GiB of zeros (behind
   * the magic) came first, so every offset in its footer is past 2^31; a store serves the zeros
   * without holding them. Loading it reads the content by ranges and hashes the zeros in 8 MiB
   * ranges through a 64 KiB buffer.
   */
  @Test
  void aFileLargerThan2GiBLoads() throws IOException {
    long pad = (5L << 29) + 12_345; // 2.5 GiB and an odd number of bytes
    Batch b = random(11, 30_000);
    ByteArrayOutputStream content = new ByteArrayOutputStream();
    OffsetBatchFiles.writeAt(pad, "a", 0, b, content, BatchFileOptions.defaults().withRowGroupRows(4_000));
    VirtualStore store = new VirtualStore(pad, content.toByteArray());
    RangedBatchFile file = RangedBatchFile.open(store, "big.parquet", store.size);
    Batch read = ParquetBatchFiles.read("big.parquet", file, b.id(), KEY, VAL, DESC, b.size());
    assertThat(updates(read)).isEqualTo(updates(b));
    assertThat(file.checksum()).isEqualTo(store.checksum());
    assertThat(file.largestRange()).isLessThanOrEqualTo(RangedBatchFile.MAX_RANGE);
    assertThat(store.size).isGreaterThan(Integer.MAX_VALUE);
  }

  /** One object: "PAR1", zeros up to {@code pad}, then {@code content}; no byte array of its size exists. */
  static final class VirtualStore extends DelegatingStore {
    final long pad;
    final byte[] content;
    final long size;

    VirtualStore(long pad, byte[] content) {
      super(new InMemoryObjectStore());
      this.pad = pad;
      this.content = content;
      this.size = pad + content.length;
    }

    int byteAt(long p) {
      if (p < 4) {
        return "PAR1".charAt((int) p);
      }
      return p < pad ? 0 : content[(int) (p - pad)] & 0xff;
    }

    String checksum() {
      CRC32C c = new CRC32C();
      byte[] zeros = new byte[1 << 20];
      c.update("PAR1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      long left = pad - 4;
      while (left > 0) {
        int n = (int) Math.min(left, zeros.length);
        c.update(zeros, 0, n);
        left -= n;
      }
      c.update(content);
      return Snapshotter.checksum(c);
    }

    @Override
    public InputStream get(String key) {
      throw new AssertionError("read whole: " + key);
    }

    @Override
    public Optional<ObjectInfo> head(String key) {
      return Optional.of(new ObjectInfo(key, size, "", Instant.EPOCH));
    }

    @Override
    public InputStream getRange(String key, long offset, long length) {
      long end = Math.min(size, offset + length);
      return new InputStream() {
        long p = offset;

        @Override
        public int read() {
          return p < end ? byteAt(p++) : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
          if (p >= end) {
            return -1;
          }
          int n = (int) Math.min(len, end - p);
          if (p >= pad) {
            System.arraycopy(content, (int) (p - pad), b, off, n);
          } else if (p >= 4) {
            n = (int) Math.min(n, pad - p);
            Arrays.fill(b, off, off + n, (byte) 0);
          } else {
            n = 1;
            b[off] = (byte) byteAt(p);
          }
          p += n;
          return n;
        }
      };
    }
  }

  /** Records reads: whole ones by key, and the length of every ranged one. */
  static final class RecordingStore extends DelegatingStore {
    record Call(String kind, String key, long length) {}

    final List<Call> calls = Collections.synchronizedList(new ArrayList<>());

    RecordingStore(ObjectStore d) {
      super(d);
    }

    @Override
    public InputStream get(String key) {
      calls.add(new Call("get", key, -1));
      return super.get(key);
    }

    @Override
    public InputStream getRange(String key, long offset, long length) {
      calls.add(new Call("range", key, length));
      return super.getRange(key, offset, length);
    }

    long gets(String key) {
      synchronized (calls) {
        return calls.stream().filter(c -> c.kind().equals("get") && c.key().equals(key)).count();
      }
    }

    long ranges(String key) {
      synchronized (calls) {
        return calls.stream().filter(c -> c.kind().equals("range") && c.key().equals(key)).count();
      }
    }

    long largestRange(String key) {
      synchronized (calls) {
        return calls.stream().filter(c -> c.kind().equals("range") && c.key().equals(key)).mapToLong(Call::length).max().orElse(0);
      }
    }
  }
}
