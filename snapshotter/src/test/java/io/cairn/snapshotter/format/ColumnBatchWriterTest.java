package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The column writer and reader against the record writer and reader they replaced ({@link
 * RecordBatchFiles}, the oracle): same batch in, same batch back out, whichever pair wrote and read.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 1.2 s
class ColumnBatchWriterTest {
  static final Schema KEY = Schema.of(Column.of("id", Type.BIGINT), Column.of("name", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("id", Type.BIGINT), Column.of("price", Type.DOUBLE), Column.of("ok", Type.BOOLEAN),
      Column.of("at", Type.TIMESTAMP), Column.of("nothing", Type.NULL));
  static final Description DESC = new Description(3, 9, 3);
  static final ExecutorService POOL = Executors.newFixedThreadPool(3);

  @TempDir Path dir;

  @AfterAll
  static void stopPool() {
    POOL.shutdownNow();
  }

  /** Every type, its edge values, and a NULL in every column. */
  static Batch edgeCases() {
    double[] doubles = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE, -Double.MAX_VALUE, 2.5};
    String[] texts = {"", "a", "b\u00e9\u4e2d", "\uD83D\uDE00 emoji", "\u0000nul inside", "z".repeat(300)};
    long[] longs = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE};
    List<Update> u = new ArrayList<>();
    int i = 0;
    for (double d : doubles) {
      for (String t : texts) {
        long l = longs[i % longs.length];
        u.add(new Update(Row.of(l, t), Row.of((long) i, d, i % 2 == 0, (long) i * 1_000_003L - 7, null), 3 + i % 5, i % 3 == 0 ? -i - 1 : i + 1));
        i++;
      }
    }
    // a NULL in every column, key and value
    u.add(new Update(Row.of(null, null), Row.of(null, null, null, null, null), 4, 2));
    u.add(new Update(Row.of(null, "x"), Row.of(5L, null, true, null, null), 5, -1));
    u.add(new Update(Row.of(7L, null), Row.of(null, 1.0, null, 9L, null), 6, 3));
    return Batch.fromUpdates(KEY, VAL, u, DESC);
  }

  /** {@code n} random updates (seeded) with NULLs sprinkled in every column. */
  static Batch random(long seed, int n) {
    Random r = new Random(seed);
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Long id = r.nextInt(20) == 0 ? null : (long) r.nextInt(n);
      String name = r.nextInt(20) == 0 ? null : r.nextInt(4) == 0 ? "" : "n" + r.nextInt(50);
      Long v = r.nextInt(20) == 0 ? null : r.nextLong();
      Double price = r.nextInt(20) == 0 ? null : r.nextInt(50) == 0 ? Double.NaN : r.nextGaussian() * 100;
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

  /** Exact values, comparing doubles by their bits (NaN, -0.0). */
  static void assertSameContents(Batch actual, Batch expected) {
    assertThat(actual.id()).isEqualTo(expected.id());
    assertThat(actual.description()).isEqualTo(expected.description());
    assertThat(actual.size()).isEqualTo(expected.size());
    assertThat(updates(actual)).isEqualTo(updates(expected));
    for (int i = 0; i < expected.size(); i++) {
      Object a = actual.valColumn(1).get(i);
      Object e = expected.valColumn(1).get(i);
      if (e == null) {
        assertThat(a).isNull();
      } else {
        assertThat(Double.doubleToRawLongBits((Double) a)).as("price bits at %d", i).isEqualTo(Double.doubleToRawLongBits((Double) e));
      }
    }
  }

  static Batch readNew(byte[] bytes, Batch b) {
    return ParquetBatchFiles.read("t.parquet", bytes, b.id(), KEY, VAL, DESC, b.size());
  }

  static Batch readOld(byte[] bytes, Batch b) {
    return RecordBatchFiles.read("t.parquet", bytes, b.id(), KEY, VAL, DESC, b.size());
  }

  @ParameterizedTest
  @EnumSource(PageFormat.class)
  void everyTypeRoundTripsAndAgreesWithTheRecordWriter(PageFormat format) {
    Batch b = edgeCases();
    byte[] fresh = ParquetBatchFiles.toBytes("arr", 2, b, BatchFileOptions.defaults().withPageFormat(format));
    byte[] old = RecordBatchFiles.toBytes("arr", 2, b);
    assertSameContents(readNew(fresh, b), b);
    assertSameContents(readOld(fresh, b), b);
    assertSameContents(readNew(old, b), b);
    assertSameContents(readNew(fresh, b), readOld(old, b));
  }

  @Test
  void schemaAndFooterAreTheRecordWritersOnes() throws Exception {
    Batch b = edgeCases();
    ParquetMetadata fresh = footer(ParquetBatchFiles.toBytes("arr", 2, b));
    ParquetMetadata old = footer(RecordBatchFiles.toBytes("arr", 2, b));
    assertThat(fresh.getFileMetaData().getSchema()).isEqualTo(old.getFileMetaData().getSchema());
    assertThat(fresh.getFileMetaData().getKeyValueMetaData()).isEqualTo(old.getFileMetaData().getKeyValueMetaData());
    assertThat(fresh.getFileMetaData().getKeyValueMetaData()).containsKeys("cairn.format-version", "cairn.arrangement", "cairn.shard",
        "cairn.batch-id", "cairn.lower", "cairn.upper", "cairn.since", "cairn.key-schema", "cairn.val-schema", "cairn.schema-fingerprint");
    for (ColumnChunkMetaData c : fresh.getBlocks().get(0).getColumns()) {
      assertThat(c.getCodec().name()).isEqualTo("ZSTD");
      assertThat(c.getStatistics().isEmpty()).as("statistics of %s", c.getPath()).isFalse();
    }
  }

  @ParameterizedTest
  @EnumSource(PageFormat.class)
  void aLargeBatchBecomesSeveralRowGroupsEncodedInParallel(PageFormat format) throws Exception {
    Batch b = random(42, 5_000);
    BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(format).withRowGroupRows(333).withExecutor(POOL, 3);
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, o);
    List<BlockMetaData> blocks = footer(bytes).getBlocks();
    assertThat(blocks).hasSize((b.size() + 332) / 333);
    assertThat(blocks.stream().mapToLong(BlockMetaData::getRowCount).sum()).isEqualTo(b.size());
    assertThat(blocks.subList(0, blocks.size() - 1)).allSatisfy(bl -> assertThat(bl.getRowCount()).isEqualTo(333));
    assertSameContents(readNew(bytes, b), b);
    assertSameContents(readOld(bytes, b), b);
    // the same bytes whichever executor encoded the row groups
    assertThat(ParquetBatchFiles.toBytes("arr", 0, b, o.withExecutor(Runnable::run, 1))).isEqualTo(bytes);
  }

  @Test
  void pagesAlsoSplitInsideARowGroup() throws Exception {
    Batch b = random(7, 60_000);
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withRowGroupRows(25_000));
    assertThat(footer(bytes).getBlocks()).hasSize(3);
    assertSameContents(readNew(bytes, b), b);
  }

  @ParameterizedTest
  @EnumSource(value = PageFormat.class, names = {"V2", "V1_PAGES_V2_ENCODINGS"})
  void v2EncodingsUseDeltaBinaryPackedWhereDictionariesDoNotPay(PageFormat format) throws Exception {
    List<Update> u = new ArrayList<>();
    for (long i = 0; i < 200_000; i++) {
      u.add(new Update(Row.of(i * 3, "k"), Row.of(i * i, 1.0, true, i, null), 3, 1));
    }
    Batch b = Batch.fromUpdates(KEY, VAL, u, DESC);
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(format));
    ColumnChunkMetaData id = footer(bytes).getBlocks().get(0).getColumns().get(0);
    assertThat(id.getEncodings()).contains(Encoding.DELTA_BINARY_PACKED);
    assertSameContents(readNew(bytes, b), b);
  }

  @Test
  void filesWithOtherOptionsEncodedConcurrentlyKeepTheirOwnEncodings() throws Exception {
    Batch b = random(5, 20_000);
    byte[] v1 = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(PageFormat.V1));
    byte[] v2 = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(PageFormat.V1_PAGES_V2_ENCODINGS));
    List<java.util.concurrent.Future<byte[]>> runs = new ArrayList<>();
    for (int i = 0; i < 24; i++) {
      PageFormat f = i % 2 == 0 ? PageFormat.V1 : PageFormat.V1_PAGES_V2_ENCODINGS;
      runs.add(POOL.submit(() -> ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(f).withRowGroupRows(2_000))));
    }
    byte[] v1Groups = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(PageFormat.V1).withRowGroupRows(2_000));
    byte[] v2Groups = ParquetBatchFiles.toBytes("arr", 0, b,
        BatchFileOptions.defaults().withPageFormat(PageFormat.V1_PAGES_V2_ENCODINGS).withRowGroupRows(2_000));
    assertThat(v1).isNotEqualTo(v2);
    for (int i = 0; i < runs.size(); i++) {
      assertThat(runs.get(i).get()).as("run %d", i).isEqualTo(i % 2 == 0 ? v1Groups : v2Groups);
    }
  }

  @Test
  void anEmptyBatchIsAFileWithoutRowGroups() throws Exception {
    Batch b = Batch.empty(KEY, VAL, DESC);
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b);
    assertThat(footer(bytes).getBlocks()).isEmpty();
    Batch back = readNew(bytes, b);
    assertThat(back.isEmpty()).isTrue();
    assertThat(back.id()).isEqualTo(b.id());
    assertThat(readOld(bytes, b).isEmpty()).isTrue();
  }

  @Test
  void aCorruptedFileNamesTheFile() {
    Batch b = random(3, 2_000);
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withRowGroupRows(500));
    // flip bytes in the middle of the data pages (the footer still parses)
    byte[] bad = bytes.clone();
    for (int i = bad.length / 4; i < bad.length / 4 + 64; i++) {
      bad[i] ^= 0x5a;
    }
    assertThatThrownBy(() -> ParquetBatchFiles.read("arr/b-17.parquet", bad, b.id(), KEY, VAL, DESC, b.size()))
        .isInstanceOf(CorruptSnapshotException.class)
        .hasMessageStartingWith("Cannot read batch file arr/b-17.parquet: ");
    // a truncated file (no footer)
    byte[] cut = java.util.Arrays.copyOf(bytes, bytes.length / 2);
    assertThatThrownBy(() -> ParquetBatchFiles.read("arr/b-18.parquet", cut, b.id(), KEY, VAL, DESC, b.size()))
        .isInstanceOf(CorruptSnapshotException.class)
        .hasMessageStartingWith("Cannot read batch file arr/b-18.parquet: ");
    // a row count the manifest does not expect
    assertThatThrownBy(() -> ParquetBatchFiles.read("arr/b-19.parquet", bytes, b.id(), KEY, VAL, DESC, b.size() + 1))
        .isInstanceOf(CorruptSnapshotException.class)
        .hasMessageContaining("arr/b-19.parquet")
        .hasMessageContaining("the manifest says " + (b.size() + 1));
  }

  @ParameterizedTest
  @EnumSource(PageFormat.class)
  void duckDbReadsEveryRowGroup(PageFormat format) throws Exception {
    Batch b = random(11, 3_000);
    Path f = dir.resolve("b-" + format + ".parquet");
    Files.write(f, ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withPageFormat(format).withRowGroupRows(400)));
    long diffs = 0;
    long nullNames = 0;
    for (int i = 0; i < b.size(); i++) {
      diffs += b.diff(i);
      nullNames += b.keyColumn(1).isNull(i) ? 1 : 0;
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*), sum(_diff), count(*) - count(name) FROM read_parquet('" + f + "')")) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(b.size());
      assertThat(rs.getLong(2)).isEqualTo(diffs);
      assertThat(rs.getLong(3)).isEqualTo(nullNames);
    }
  }

  @Test
  void seededRandomBatchesAgreeWithTheOracle() {
    for (long seed = 100; seed < 120; seed++) {
      Random r = new Random(seed);
      Batch b = random(seed, 1 + r.nextInt(3_000));
      BatchFileOptions o = BatchFileOptions.defaults().withRowGroupRows(1 + r.nextInt(1_000)).withZstdLevel(1 + r.nextInt(9))
          .withPageFormat(PageFormat.values()[r.nextInt(PageFormat.values().length)]).withExecutor(POOL, 1 + r.nextInt(4));
      byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, o);
      Batch expected = readOld(RecordBatchFiles.toBytes("arr", 0, b), b);
      try {
        assertSameContents(readNew(bytes, b), expected);
        assertSameContents(readOld(bytes, b), expected);
      } catch (AssertionError e) {
        throw new AssertionError("seed " + seed + ", options " + o + ": " + e.getMessage(), e);
      }
    }
  }

  private ParquetMetadata footer(byte[] bytes) throws Exception {
    Path f = Files.createTempFile(dir, "f", ".parquet");
    Files.write(f, bytes);
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      return r.getFooter();
    }
  }
}
