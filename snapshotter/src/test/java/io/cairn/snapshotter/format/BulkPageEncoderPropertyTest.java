package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import java.io.ByteArrayOutputStream;
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
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.internal.column.columnindex.ColumnIndex;
import org.apache.parquet.internal.column.columnindex.OffsetIndex;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded random batches written by the bulk page encoder ({@link BulkPageEncoder}) against
 * parquet-java's per-value column writers (the encoder it replaced): every column type, NULL
 * densities none/some/all, retractions, the empty batch, one row, row counts across page and row
 * group boundaries, repeating and distinct values, every page format. For each: the bulk file
 * reads back as the batch, both files decode to the same rows, and both footers hold the same
 * statistics (min, max, NULL count, NaN count) and size statistics per row group and column.
 * A failure names its seed; {@code -Dcairn.seed=N} reruns one.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES) // each test measured up to 39 s
class BulkPageEncoderPropertyTest {
  static final Description DESC = new Description(3, 9, 3);
  static final Type[] TYPES = {Type.BIGINT, Type.TIMESTAMP, Type.DOUBLE, Type.TEXT, Type.BOOLEAN, Type.NULL};
  static final ExecutorService POOL = Executors.newFixedThreadPool(2);

  @TempDir Path dir;

  @AfterAll
  static void stop() {
    POOL.shutdownNow();
  }

  /** A column generator: its type, its share of NULLs and how many distinct values it draws from. */
  record Gen(Type type, double nulls, int distinct) {}

  static Object value(Random r, Gen g, int i) {
    if (g.type == Type.NULL || r.nextDouble() < g.nulls) {
      return null;
    }
    int pick = g.distinct <= 0 ? i : r.nextInt(g.distinct);
    return switch (g.type) {
      case BIGINT -> g.distinct <= 0 ? (long) i * 7919L - 3 : switch (pick % 7) {
        case 0 -> Long.MIN_VALUE + pick;
        case 1 -> Long.MAX_VALUE - pick;
        default -> (long) pick * (pick % 2 == 0 ? 1 : -1_000_003L);
      };
      case TIMESTAMP -> 1_700_000_000_000_000L + (g.distinct <= 0 ? (long) i * 1000 : pick);
      case DATE -> 18_000L + (g.distinct <= 0 ? i : pick);
      case NUMERIC -> java.math.BigDecimal.valueOf(g.distinct <= 0 ? i : pick, 2);
      case INTERVAL -> new io.cairn.engine.row.Interval(pick % 13, pick % 40 - 20, pick * 1_000_001L);
      case DOUBLE -> switch (pick % 11) {
        case 0 -> Double.NaN;
        case 1 -> -0.0;
        case 2 -> 0.0;
        case 3 -> pick % 3 == 0 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        default -> g.distinct <= 0 ? i * 0.5 - 1e6 : (pick - g.distinct / 2.0) * 1.25;
      };
      case TEXT -> text(pick, g.distinct <= 0);
      case BOOLEAN -> g.distinct == 1 ? true : r.nextBoolean();
      case NULL -> null;
    };
  }

  static String text(int pick, boolean unique) {
    return switch (pick % 7) {
      case 0 -> "";
      case 1 -> "k" + pick;
      case 2 -> "\u00e9t\u00e9-" + pick; // 2-byte UTF-8
      case 3 -> "\u4e2d" + pick + "\uD83D\uDE00"; // 3- and 4-byte UTF-8
      case 4 -> "prefix-shared-by-many-" + pick;
      case 5 -> unique ? "x".repeat(pick % 40) + pick : "\u00ff" + pick; // U+00FF sorts after ASCII bytes unsigned
      default -> "L".repeat(300 + pick % 300) + pick; // long: pages end at their size, dictionaries overflow
    };
  }

  static Gen gen(Random r, Type t) {
    double[] nulls = {0, 0, 0.05, 0.5, 1.0};
    int[] distinct = {1, 2, 5, 60, 5_000, 20_000, 0}; // 0: distinct per row
    return new Gen(t, nulls[r.nextInt(nulls.length)], distinct[r.nextInt(distinct.length)]);
  }

  record Case(Batch batch, BatchFileOptions options, String what) {}

  static Case randomCase(long seed) {
    Random r = new Random(seed);
    int shape = r.nextInt(10);
    int rows = switch (shape) {
      case 0 -> 0;
      case 1 -> 1;
      case 2, 3 -> 20_000 + r.nextInt(30_000); // across the page limit
      default -> 1 + r.nextInt(3_000);
    };
    List<Column> keyCols = new ArrayList<>();
    List<Gen> gens = new ArrayList<>();
    int keys = 1 + r.nextInt(2);
    int vals = r.nextInt(5);
    for (int c = 0; c < keys + vals; c++) {
      Type t = TYPES[r.nextInt(TYPES.length)];
      gens.add(gen(r, t));
      keyCols.add(Column.of("c" + c, t));
    }
    Schema key = new Schema(keyCols.subList(0, keys));
    Schema val = new Schema(keyCols.subList(keys, keys + vals));
    List<Update> u = new ArrayList<>();
    int times = 1 + r.nextInt(6);
    for (int i = 0; i < rows; i++) {
      Object[] k = new Object[keys];
      Object[] v = new Object[vals];
      for (int c = 0; c < keys + vals; c++) {
        Object x = value(r, gens.get(c), i);
        if (c < keys) {
          k[c] = x;
        } else {
          v[c - keys] = x;
        }
      }
      long diff = r.nextInt(3) == 0 ? -(1 + r.nextInt(3)) : 1 + r.nextInt(2);
      u.add(new Update(Row.of(k), Row.of(v), 3 + r.nextInt(times), diff));
    }
    Batch b = Batch.fromUpdates(key, val, u, DESC);
    int groupRows = switch (r.nextInt(4)) {
      case 0 -> BatchFileOptions.DEFAULT_ROW_GROUP_ROWS;
      case 1 -> 1 + r.nextInt(50);
      default -> 1 + r.nextInt(Math.max(1, b.size()));
    };
    BatchFileOptions o = BatchFileOptions.defaults().withRowGroupRows(groupRows)
        .withPageFormat(PageFormat.values()[r.nextInt(PageFormat.values().length)]);
    if (r.nextBoolean()) {
      o = o.withExecutor(POOL, 1 + r.nextInt(3));
    }
    return new Case(b, o, "seed " + seed + " (" + b.size() + " rows, key " + key + ", val " + val + ", " + gens + ", "
        + groupRows + " rows per row group, " + o.pageFormat() + ")");
  }

  static byte[] write(Batch b, BatchFileOptions o, boolean perValue) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ColumnBatchWriter.write("arr", 0, b, out, o, 0, perValue);
    return out.toByteArray();
  }

  static Batch read(byte[] bytes, Batch b) {
    return ParquetBatchFiles.read("t.parquet", bytes, b.id(), b.keySchema(), b.valSchema(), DESC, b.size());
  }

  /** Every update, with doubles compared by their bits (NaN, -0.0). */
  static void assertSameRows(Batch actual, Batch expected) {
    assertThat(actual.size()).isEqualTo(expected.size());
    assertThat(ColumnBatchWriterTest.updates(actual)).isEqualTo(ColumnBatchWriterTest.updates(expected));
    for (int c = 0; c < expected.valSchema().size() + expected.keySchema().size(); c++) {
      int k = expected.keySchema().size();
      ColumnVector e = c < k ? expected.keyColumn(c) : expected.valColumn(c - k);
      ColumnVector a = c < k ? actual.keyColumn(c) : actual.valColumn(c - k);
      if (e instanceof ColumnVector.Doubles ed) {
        for (int i = 0; i < expected.size(); i++) {
          assertThat(a.isNull(i)).isEqualTo(e.isNull(i));
          if (!e.isNull(i)) {
            assertThat(Double.doubleToRawLongBits(((ColumnVector.Doubles) a).getDouble(i)))
                .as("column %d row %d", c, i).isEqualTo(Double.doubleToRawLongBits(ed.getDouble(i)));
          }
        }
      }
    }
  }

  private ParquetMetadata footer(byte[] bytes, List<List<String>> indexes) throws Exception {
    Path f = Files.createTempFile(dir, "f", ".parquet");
    Files.write(f, bytes);
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      for (BlockMetaData block : r.getFooter().getBlocks()) {
        List<String> perColumn = new ArrayList<>();
        for (ColumnChunkMetaData c : block.getColumns()) {
          ColumnIndex ci = r.readColumnIndex(c);
          OffsetIndex oi = r.readOffsetIndex(c);
          assertThat(oi).as("offset index of %s", c.getPath()).isNotNull();
          // the column index summed over pages: NULL counts add up to the chunk's
          perColumn.add(ci == null ? "none" : "nulls " + ci.getNullCounts().stream().mapToLong(Long::longValue).sum()
              + ", pages " + oi.getPageCount() + " rows " + oi.getLastRowIndex(oi.getPageCount() - 1, block.getRowCount()));
        }
        indexes.add(perColumn);
      }
      return r.getFooter();
    } finally {
      Files.delete(f);
    }
  }

  static String describe(Statistics<?> s) {
    return "min " + (s.hasNonNullValue() ? s.minAsString() : "-") + ", max " + (s.hasNonNullValue() ? s.maxAsString() : "-")
        + ", nulls " + s.getNumNulls() + ", nans " + (s.isNanCountSet() ? s.getNanCount() : "unset") + ", empty " + s.isEmpty();
  }

  void check(Case c) throws Exception {
    Batch b = c.batch();
    byte[] bulk = write(b, c.options(), false);
    byte[] perValue = write(b, c.options(), true);
    // (a) the bulk file reads back exactly as the batch
    assertSameRows(read(bulk, b), b);
    // (b) both files decode to the same rows
    assertSameRows(read(bulk, b), read(perValue, b));
    // (c) the same statistics per row group and column
    List<List<String>> bulkIndexes = new ArrayList<>();
    List<List<String>> perValueIndexes = new ArrayList<>();
    ParquetMetadata fb = footer(bulk, bulkIndexes);
    ParquetMetadata fp = footer(perValue, perValueIndexes);
    assertThat(fb.getFileMetaData().getSchema()).isEqualTo(fp.getFileMetaData().getSchema());
    assertThat(fb.getFileMetaData().getKeyValueMetaData()).isEqualTo(fp.getFileMetaData().getKeyValueMetaData());
    assertThat(fb.getBlocks()).hasSameSizeAs(fp.getBlocks());
    for (int g = 0; g < fb.getBlocks().size(); g++) {
      BlockMetaData gb = fb.getBlocks().get(g);
      BlockMetaData gp = fp.getBlocks().get(g);
      assertThat(gb.getRowCount()).isEqualTo(gp.getRowCount());
      for (int col = 0; col < gb.getColumns().size(); col++) {
        ColumnChunkMetaData cb = gb.getColumns().get(col);
        ColumnChunkMetaData cp = gp.getColumns().get(col);
        String where = "row group " + g + ", column " + cb.getPath();
        assertThat(cb.getValueCount()).as(where).isEqualTo(cp.getValueCount());
        assertThat(describe(cb.getStatistics())).as("statistics of " + where).isEqualTo(describe(cp.getStatistics()));
        assertThat(cb.getStatistics()).as("statistics of " + where).isEqualTo(cp.getStatistics());
        assertThat(cb.getSizeStatistics().getUnencodedByteArrayDataBytes()).as("size statistics of " + where)
            .isEqualTo(cp.getSizeStatistics().getUnencodedByteArrayDataBytes());
        assertThat(cb.getSizeStatistics().getDefinitionLevelHistogram()).as(where)
            .isEqualTo(cp.getSizeStatistics().getDefinitionLevelHistogram());
        assertThat(cb.getCodec()).isEqualTo(cp.getCodec());
        if (cb.getPrimitiveType().getPrimitiveTypeName() != org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName.BINARY) {
          // the same encodings (pages of fixed-width values end on the same rows as the per-value writer's; string pages
          // end at their size, checked every 4,096 rows by the per-value writer, so a dictionary may overflow a page apart)
          assertThat(cb.getEncodings()).as("encodings of " + where).isEqualTo(cp.getEncodings());
        }
        // the NULL counts of the column index's pages add up the same; the pages cover the row group
        assertThat(bulkIndexes.get(g).get(col).replaceAll(", pages \\d+", ""))
            .as("column index of " + where).isEqualTo(perValueIndexes.get(g).get(col).replaceAll(", pages \\d+", ""));
      }
    }
  }

  @Test
  void seededRandomBatchesAgreeWithTheParquetJavaColumnWriters() throws Exception {
    String one = System.getProperty("cairn.seed");
    long first = one != null ? Long.parseLong(one) : 1;
    // 60 seeds by default (the build's time), -Dcairn.seeds=120 for the full run
    long last = one != null ? first : Long.getLong("cairn.seeds", 60);
    for (long seed = first; seed <= last; seed++) {
      Case c = randomCase(seed);
      try {
        check(c);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("failed for " + c.what() + ": " + e.getMessage(), e);
      }
    }
  }

  /** The cases a random draw may miss: every type at every NULL density and value spread, in every page format. */
  @Test
  void everyTypeAtEveryDensityAndSpread() throws Exception {
    long seed = 7_000;
    for (PageFormat format : PageFormat.values()) {
      for (Type t : TYPES) {
        for (double nulls : new double[] {0, 0.3, 1}) {
          for (int distinct : new int[] {1, 3, 100, 20_000, 0}) {
            Random r = new Random(seed++);
            Gen g = new Gen(t, nulls, distinct);
            List<Update> u = new ArrayList<>();
            int rows = 25_000 + r.nextInt(100);
            for (int i = 0; i < rows; i++) {
              u.add(new Update(Row.of((long) i), Row.of(value(r, g, i)), 3, i % 5 == 0 ? -1 : 1));
            }
            Schema key = Schema.of(Column.of("k", Type.BIGINT));
            Schema val = Schema.of(Column.of("v", t));
            Batch b = Batch.fromUpdates(key, val, u, DESC);
            BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(format).withRowGroupRows(r.nextBoolean() ? 30_000 : 11_111);
            Case c = new Case(b, o, "seed " + (seed - 1) + " (" + format + ", " + g + ")");
            try {
              check(c);
            } catch (AssertionError | RuntimeException e) {
              throw new AssertionError("failed for " + c.what() + ": " + e.getMessage(), e);
            }
          }
        }
      }
    }
  }

  /**
   * A page of strings ends once its values reach {@link ColumnBatchWriter#PAGE_BYTES}, with a
   * dictionary (ids in the page) and without one, and when the dictionary overflows mid-page.
   */
  @Test
  void pagesOfLongStringsEndAtTheirSize() throws Exception {
    Schema key = Schema.of(Column.of("k", Type.BIGINT));
    Schema val = Schema.of(Column.of("s", Type.TEXT));
    for (int distinct : new int[] {3, 20_000}) {
      List<Update> u = new ArrayList<>();
      for (int i = 0; i < 20_000; i++) {
        u.add(new Update(Row.of((long) i), Row.of(i % 17 == 0 ? null : "L".repeat(1_000) + (i * 7919 % distinct)), 3, 1));
      }
      Batch b = Batch.fromUpdates(key, val, u, DESC);
      for (PageFormat format : PageFormat.values()) {
        Case c = new Case(b, BatchFileOptions.defaults().withPageFormat(format), distinct + " distinct, " + format);
        check(c);
        Path f = dir.resolve("long-" + distinct + "-" + format + ".parquet");
        Files.write(f, write(b, c.options(), false));
        try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
          OffsetIndex oi = r.readOffsetIndex(r.getFooter().getBlocks().get(0).getColumns().get(1));
          // ≈ 19.9 MB of strings: about 19 pages of 1 MiB, whether the ids or the strings are in the pages
          assertThat(oi.getPageCount()).as(c.what()).isBetween(18, 21);
        }
      }
    }
  }

  /** DuckDB reads every value of a bulk-encoded file of every type, in every page format. */
  @Test
  void duckDbReadsEveryValue() throws Exception {
    for (PageFormat format : PageFormat.values()) {
      for (long seed = 40; seed < 46; seed++) {
        Case c = randomCase(seed * 31 + format.ordinal());
        Batch b = c.batch();
        if (b.size() == 0) {
          continue;
        }
        Path f = dir.resolve("d-" + format + "-" + seed + ".parquet");
        Files.write(f, write(b, c.options().withPageFormat(format), false));
        int k = b.keySchema().size();
        int cols = k + b.valSchema().size();
        try (Connection conn = DriverManager.getConnection("jdbc:duckdb:"); Statement st = conn.createStatement();
            ResultSet rs = st.executeQuery("SELECT * FROM read_parquet('" + f + "', file_row_number = true) ORDER BY file_row_number")) {
          int i = 0;
          while (rs.next()) {
            for (int col = 0; col < cols; col++) {
              ColumnVector v = col < k ? b.keyColumn(col) : b.valColumn(col - k);
              Object expected = v.get(i);
              Object actual = switch (v.type()) {
                case BIGINT -> rs.getObject(col + 1) == null ? null : rs.getLong(col + 1);
                case TIMESTAMP -> rs.getObject(col + 1) == null ? null : "ts";
                case DATE -> rs.getObject(col + 1) == null ? null : rs.getObject(col + 1, java.time.LocalDate.class).toEpochDay();
                case NUMERIC -> rs.getBigDecimal(col + 1) == null ? null : io.cairn.engine.row.Numeric.of(rs.getBigDecimal(col + 1));
                case INTERVAL -> rs.getString(col + 1) == null ? null : io.cairn.engine.row.Interval.parse(rs.getString(col + 1));
                case DOUBLE -> rs.getObject(col + 1) == null ? null : rs.getDouble(col + 1);
                case TEXT -> rs.getString(col + 1);
                case BOOLEAN, NULL -> rs.getObject(col + 1) == null ? null : rs.getBoolean(col + 1);
              };
              if (v.type() == Type.TIMESTAMP && expected != null) {
                expected = "ts";
              }
              assertThat(actual).as("%s: row %d column %d (%s)", c.what(), i, col, format).isEqualTo(expected);
            }
            assertThat(rs.getLong(cols + 1)).isEqualTo(b.time(i));
            assertThat(rs.getLong(cols + 2)).isEqualTo(b.diff(i));
            i++;
          }
          assertThat(i).as(c.what()).isEqualTo(b.size());
        }
      }
    }
  }
}
