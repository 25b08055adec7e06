package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import io.cairn.engine.trace.Update;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import io.cairn.snapshotter.format.BulkPageEncoderPropertyTest.Case;
import io.cairn.snapshotter.format.BulkPageEncoderPropertyTest.Gen;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bulk page decoder ({@link BulkPageDecoder}) against parquet-java's per-value column reader
 * on the same files: files written by cairn's bulk encoder and by parquet-java's own column
 * writers, every page format, every type the decoder takes (and the ones it leaves to the column
 * reader beside them), NULL densities none/some/all, dictionaries of one entry to overflowing
 * ones, deltas of the full 64-bit range. Each check also asserts that the decoder read the chunks
 * it claims (a reader that fell back everywhere would agree trivially). Hand-built pages check
 * that corrupt input is an {@link IOException} naming what was wrong.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class BulkPageDecoderTest {
  static final Type[] DECODED = {Type.BIGINT, Type.TIMESTAMP, Type.DATE, Type.DOUBLE, Type.TEXT};

  record Read(Batch batch, int bulkChunks) {}

  static Read read(byte[] file, Batch like, boolean bulk) throws IOException {
    ReadCodecs codecs = new ReadCodecs();
    ParquetReadOptions options = ParquetReadOptions.builder(new PlainParquetConfiguration()).withCodecFactory(codecs).build();
    try (codecs; ParquetFileReader r = ParquetFileReader.open(new ParquetBatchFiles.BytesInputFile(file), options)) {
      ColumnBatchReader c = ColumnBatchReader.read(r, ParquetBatchFiles.parquetSchema(like.keySchema(), like.valSchema()),
          like.keySchema(), like.valSchema(), (int) r.getRecordCount(), bulk);
      Batch b = Batch.fromColumns(like.id(), like.keySchema(), like.valSchema(), BulkPageEncoderPropertyTest.DESC, c.keyColumns(),
          c.valColumns(), c.timesOrNull(), c.time0(), c.diffsOrNull(), c.diff0(), c.rows());
      return new Read(b, c.bulkChunks());
    }
  }

  static int rowGroups(byte[] file) throws IOException {
    try (ParquetFileReader r = ParquetFileReader.open(new ParquetBatchFiles.BytesInputFile(file),
        ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      return r.getRowGroups().size();
    }
  }

  /** A file written as a snapshot writes it (a DATE column takes parquet-java's writers), or by parquet-java's writers. */
  static byte[] write(Batch b, BatchFileOptions o, boolean perValue) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (perValue) {
      ColumnBatchWriter.write("arr", 0, b, out, o, 0, true);
    } else {
      ColumnBatchWriter.write("arr", 0, b, out, o, 0);
    }
    return out.toByteArray();
  }

  /** Both readers on both writers' files; returns the chunks the decoder read in the bulk-encoded file. */
  static int checkBothReaders(Case c) throws Exception {
    Batch b = c.batch();
    int bulkChunks = 0;
    for (boolean perValueWriter : new boolean[] {false, true}) {
      byte[] file = write(b, c.options(), perValueWriter);
      Read bulk = read(file, b, true);
      Read reference = read(file, b, false);
      assertThat(reference.bulkChunks()).isZero();
      BulkPageEncoderPropertyTest.assertSameRows(bulk.batch(), reference.batch());
      BulkPageEncoderPropertyTest.assertSameRows(bulk.batch(), b);
      if (!perValueWriter) {
        bulkChunks = bulk.bulkChunks();
      }
    }
    return bulkChunks;
  }

  @Test
  void seededRandomFilesReadTheSameInBulkAsValueByValue() throws Exception {
    int bulkChunks = 0;
    for (long seed = 1; seed <= 40; seed++) {
      Case c = BulkPageEncoderPropertyTest.randomCase(seed);
      try {
        bulkChunks += checkBothReaders(c);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("failed for " + c.what() + ": " + e.getMessage(), e);
      }
    }
    assertThat(bulkChunks).as("chunks decoded in bulk over the 40 seeds").isGreaterThan(100);
  }

  /** Every type the decoder takes, at every NULL density and value spread, in every page format: every chunk in bulk. */
  @Test
  void everyDecodedTypeAtEveryDensityAndSpread() throws Exception {
    long seed = 9_000;
    for (PageFormat format : PageFormat.values()) {
      for (Type t : DECODED) {
        for (double nulls : new double[] {0, 0.3, 1}) {
          for (int distinct : new int[] {1, 3, 100, 20_000, 0}) {
            Random r = new Random(seed++);
            Gen g = new Gen(t, nulls, distinct);
            List<Update> u = new ArrayList<>();
            int rows = 25_000 + r.nextInt(100);
            for (int i = 0; i < rows; i++) {
              u.add(new Update(Row.of((long) i), Row.of(BulkPageEncoderPropertyTest.value(r, g, i)), 3 + i % 2, i % 5 == 0 ? -1 : 1));
            }
            Batch b = Batch.fromUpdates(Schema.of(Column.of("k", Type.BIGINT)), Schema.of(Column.of("v", t)), u,
                BulkPageEncoderPropertyTest.DESC);
            BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(format).withRowGroupRows(r.nextBoolean() ? 30_000 : 11_111);
            Case c = new Case(b, o, "seed " + (seed - 1) + " (" + format + ", " + g + ")");
            try {
              int chunks = checkBothReaders(c);
              // key, value, times, diffs: all four of every row group
              assertThat(chunks).as("chunks in bulk").isEqualTo(4 * rowGroups(write(b, o, false)));
            } catch (AssertionError | RuntimeException e) {
              throw new AssertionError("failed for " + c.what() + ": " + e.getMessage(), e);
            }
          }
        }
      }
    }
  }

  /** Random 64-bit values: deltas that need all 64 bits (and overflow), in the delta and plain encodings. */
  @Test
  void deltasOfTheFull64BitRange() throws Exception {
    Random r = new Random(42);
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < 30_000; i++) {
      long v = switch (i % 4) {
        case 0 -> Long.MIN_VALUE;
        case 1 -> Long.MAX_VALUE;
        default -> r.nextLong();
      };
      u.add(new Update(Row.of((long) i), Row.of(v, (long) (i % 3 == 0 ? Integer.MIN_VALUE : Integer.MAX_VALUE)), 3, 1));
    }
    Batch b = Batch.fromUpdates(Schema.of(Column.of("k", Type.BIGINT)),
        Schema.of(Column.of("v", Type.BIGINT), Column.of("d", Type.DATE)), u, BulkPageEncoderPropertyTest.DESC);
    for (PageFormat format : PageFormat.values()) {
      Case c = new Case(b, BatchFileOptions.defaults().withPageFormat(format), format.toString());
      assertThat(checkBothReaders(c)).as(c.what()).isEqualTo(5);
    }
  }

  /** A dictionary's strings are decoded once: equal values of a dictionary-encoded column are one object. */
  @Test
  void dictionaryTextIsOneObjectPerDistinctValue() throws Exception {
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < 50_000; i++) {
      u.add(new Update(Row.of((long) i), Row.of("customer-" + (i % 7)), 3, 1));
    }
    Batch b = Batch.fromUpdates(Schema.of(Column.of("k", Type.BIGINT)), Schema.of(Column.of("v", Type.TEXT)), u,
        BulkPageEncoderPropertyTest.DESC);
    byte[] file = write(b, BatchFileOptions.defaults(), false);
    Batch bulk = read(file, b, true).batch();
    Batch reference = read(file, b, false).batch();
    assertThat(distinctObjects((ColumnVector.Texts) bulk.valColumn(0), b.size())).isEqualTo(7);
    // the value-by-value reader makes one string per row: what the decoder saves
    assertThat(distinctObjects((ColumnVector.Texts) reference.valColumn(0), b.size())).isEqualTo(b.size());
  }

  /** Constant times and diffs (a compacted state) stay one value each, not a column, over several row groups. */
  @Test
  void constantTimesAndDiffsStayOneValue() throws Exception {
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < 30_000; i++) {
      u.add(new Update(Row.of((long) i * 3), Row.of((long) i), 5, 1));
    }
    Batch b = Batch.fromUpdates(Schema.of(Column.of("k", Type.BIGINT)), Schema.of(Column.of("v", Type.BIGINT)), u,
        BulkPageEncoderPropertyTest.DESC);
    assertThat(b.timesOrNull()).isNull();
    byte[] file = write(b, BatchFileOptions.defaults().withRowGroupRows(7_000), false);
    Read bulk = read(file, b, true);
    assertThat(bulk.bulkChunks()).isEqualTo(4 * 5);
    assertThat(bulk.batch().timesOrNull()).isNull();
    assertThat(bulk.batch().diffsOrNull()).isNull();
    assertThat(bulk.batch().constantTime()).isEqualTo(5);
    assertThat(bulk.batch().constantDiff()).isEqualTo(1);
  }

  private static int distinctObjects(ColumnVector.Texts col, int n) {
    java.util.Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (int i = 0; i < n; i++) {
      seen.add(col.get(i));
    }
    return seen.size();
  }

  // ------------------------------------------------------------------ corrupt pages, built by hand

  static final ColumnDescriptor OPTIONAL_LONG =
      new ColumnDescriptor(new String[] {"v"}, Types.optional(PrimitiveTypeName.INT64).named("v"), 0, 1);
  static final ColumnDescriptor REQUIRED_LONG =
      new ColumnDescriptor(new String[] {"v"}, Types.required(PrimitiveTypeName.INT64).named("v"), 0, 0);

  /** The pages of one column chunk. */
  record Pages(DictionaryPage dictionary, Queue<DataPage> pages) implements PageReader {
    Pages(DictionaryPage dictionary, DataPage... pages) {
      this(dictionary, new ArrayDeque<>(List.of(pages)));
    }

    @Override
    public DictionaryPage readDictionaryPage() {
      return dictionary;
    }

    @Override
    public long getTotalValueCount() {
      return pages.stream().mapToLong(DataPage::getValueCount).sum();
    }

    @Override
    public DataPage readPage() {
      return pages.poll();
    }
  }

  static DataPageV1 page(byte[] bytes, int values, Encoding encoding) {
    PrimitiveType t = Types.required(PrimitiveTypeName.INT64).named("v");
    return new DataPageV1(BytesInput.from(bytes), values, bytes.length, Statistics.createStats(t), Encoding.BIT_PACKED,
        Encoding.BIT_PACKED, encoding);
  }

  static byte[] longsLe(long... v) {
    ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
    for (long x : v) {
      b.putLong(x);
    }
    return b.array();
  }

  @Test
  void handBuiltPagesDecode() throws Exception {
    // a dictionary of three, ids 2, 0, 1, 1 bit-packed at width 2: one group of 8 (4 used): 2 | 0<<2 | 1<<4 | 1<<6
    DictionaryPage dict = new DictionaryPage(BytesInput.from(longsLe(10, 20, 30)), 3, Encoding.PLAIN);
    byte[] ids = {2, 0b11, (byte) (2 | (1 << 4) | (1 << 6)), 0};
    long[] out = new long[4];
    new BulkPageDecoder().readLongs(new Pages(dict, page(ids, 4, Encoding.RLE_DICTIONARY)), REQUIRED_LONG, out, null, 0, 4);
    assertThat(out).containsExactly(30, 10, 20, 20);
    // an RLE run of a dictionary of one: width 0
    long[] one = new long[5];
    new BulkPageDecoder().readLongs(new Pages(new DictionaryPage(BytesInput.from(longsLe(7)), 1, Encoding.PLAIN),
        page(new byte[] {0, 10}, 5, Encoding.RLE_DICTIONARY)), REQUIRED_LONG, one, null, 0, 5);
    assertThat(one).containsOnly(7);
    // definition levels 1, 0, 1 (three RLE runs of one at width 1, 6 bytes after their 4-byte length), then two PLAIN
    // values: a NULL in the middle
    ByteArrayOutputStream page = new ByteArrayOutputStream();
    page.write(new byte[] {6, 0, 0, 0, 2, 1, 2, 0, 2, 1});
    page.write(longsLe(-5, 9));
    long[] withNull = new long[3];
    BitSet nulls = new BulkPageDecoder().readLongs(new Pages(null, new DataPageV1(BytesInput.from(page.toByteArray()), 3,
        page.size(), Statistics.createStats(OPTIONAL_LONG.getPrimitiveType()), Encoding.BIT_PACKED, Encoding.RLE, Encoding.PLAIN)),
        OPTIONAL_LONG, withNull, null, 0, 3);
    assertThat(withNull).containsExactly(-5, 0, 9);
    assertThat(nulls.stream().toArray()).containsExactly(1);
  }

  @Test
  void corruptPagesAreIoExceptionsThatSayWhatWasWrong() {
    DictionaryPage dict = new DictionaryPage(BytesInput.from(longsLe(10, 20)), 2, Encoding.PLAIN);
    // id 3 in a dictionary of 2 (an RLE run of 4 × 3 at width 2)
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(dict, page(new byte[] {2, 8, 3}, 4, Encoding.RLE_DICTIONARY)),
        REQUIRED_LONG, new long[4], null, 0, 4)).isInstanceOf(IOException.class).hasMessageContaining("dictionary id 3 outside a dictionary of 2");
    // dictionary ids without a dictionary page
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(new byte[] {1, 8, 1}, 4, Encoding.RLE_DICTIONARY)),
        REQUIRED_LONG, new long[4], null, 0, 4)).isInstanceOf(IOException.class).hasMessageContaining("without a dictionary page");
    // 3 PLAIN values where 4 are due
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(longsLe(1, 2, 3), 4, Encoding.PLAIN)),
        REQUIRED_LONG, new long[4], null, 0, 4)).isInstanceOf(IOException.class).hasMessageContaining("bytes short");
    // a page of 4 rows in a row group of 3
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(longsLe(1, 2, 3, 4), 4, Encoding.PLAIN)),
        REQUIRED_LONG, new long[4], null, 0, 3)).isInstanceOf(IOException.class).hasMessageContaining("holds 4 values where 3 rows are left");
    // pages that end before the row group does
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(longsLe(1, 2), 2, Encoding.PLAIN)),
        REQUIRED_LONG, new long[4], null, 0, 4)).isInstanceOf(IOException.class).hasMessageContaining("hold 2 rows, its row group 4");
    // a DELTA_BINARY_PACKED header counting 5 values in a page of 2: block 128, 4 miniblocks, 5 values, first 0
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(new byte[] {(byte) 0x80, 1, 4, 5, 0}, 2,
        Encoding.DELTA_BINARY_PACKED)), REQUIRED_LONG, new long[2], null, 0, 2))
        .isInstanceOf(IOException.class).hasMessageContaining("holds 5 values where 2 are expected");
    // a varint that never ends
    byte[] endless = new byte[12];
    java.util.Arrays.fill(endless, (byte) 0xff);
    assertThatThrownBy(() -> new BulkPageDecoder().readLongs(new Pages(null, page(endless, 2, Encoding.DELTA_BINARY_PACKED)),
        REQUIRED_LONG, new long[2], null, 0, 2)).isInstanceOf(IOException.class).hasMessageContaining("varint");
  }

  /**
   * Random bytes as pages in every encoding (and as dictionaries, with any size in their header):
   * the decoder ends with values or an {@link IOException}, never another exception, an endless
   * loop or an allocation the page's bytes do not justify.
   */
  @Test
  void randomBytesInEveryEncodingEndInValuesOrAnIoException() throws Exception {
    Random r = new Random(7);
    ColumnDescriptor optionalText =
        new ColumnDescriptor(new String[] {"s"}, Types.optional(PrimitiveTypeName.BINARY).named("s"), 0, 1);
    ColumnDescriptor requiredInt =
        new ColumnDescriptor(new String[] {"d"}, Types.required(PrimitiveTypeName.INT32).named("d"), 0, 0);
    Encoding[] encodings = {Encoding.PLAIN, Encoding.RLE_DICTIONARY, Encoding.PLAIN_DICTIONARY, Encoding.DELTA_BINARY_PACKED,
        Encoding.DELTA_BYTE_ARRAY};
    int ok = 0;
    int refused = 0;
    for (int round = 0; round < 20_000; round++) {
      byte[] bytes = new byte[r.nextInt(120)];
      r.nextBytes(bytes);
      if (bytes.length > 4 && r.nextBoolean()) {
        bytes[0] = (byte) r.nextInt(4); // a plausible level length or bit width now and then
        bytes[1] = bytes[2] = bytes[3] = 0;
      }
      int rows = r.nextInt(40);
      Encoding e = encodings[r.nextInt(encodings.length)];
      byte[] dictBytes = new byte[r.nextInt(64)];
      r.nextBytes(dictBytes);
      int dictSize = r.nextInt(3) == 0 ? r.nextInt(Integer.MAX_VALUE) : r.nextInt(10);
      DictionaryPage dict = r.nextBoolean() ? new DictionaryPage(BytesInput.from(dictBytes), dictSize, Encoding.PLAIN) : null;
      ColumnDescriptor d = switch (r.nextInt(3)) {
        case 0 -> OPTIONAL_LONG;
        case 1 -> requiredInt;
        default -> optionalText;
      };
      DataPageV1 page = new DataPageV1(BytesInput.from(bytes), rows, bytes.length, Statistics.createStats(d.getPrimitiveType()),
          Encoding.BIT_PACKED, d.getMaxDefinitionLevel() > 0 ? Encoding.RLE : Encoding.BIT_PACKED, e);
      try {
        if (d == optionalText) {
          new BulkPageDecoder().readStrings(new Pages(dict, page), d, new String[rows], 0, rows);
        } else {
          new BulkPageDecoder().readLongs(new Pages(dict, page), d, new long[rows], null, 0, rows);
        }
        ok++;
      } catch (IOException expected) {
        refused++;
      } catch (RuntimeException | Error x) {
        throw new AssertionError("round " + round + ": " + e + " page of " + bytes.length + " bytes, " + rows + " rows, column "
            + d + ": " + x, x);
      }
    }
    // both outcomes were reached: the rounds did reach the decoding, not only its first check
    assertThat(ok).isGreaterThan(500);
    assertThat(refused).isGreaterThan(500);
  }
}
