package io.cairn.snapshotter.format;

import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.exceptions.SnapshotException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

/**
 * The batch file format: one {@link Batch} as one Parquet file, readable by any Parquet reader.
 *
 * <p>Columns, in order: the key columns, the value columns (a value column whose name clashes
 * with a key column is stored as {@code val_<name>}), then {@code _time} and {@code _diff}, both
 * required INT64. Key and value columns are optional (SQL NULL): BIGINT → INT64, TIMESTAMP →
 * INT64 TIMESTAMP(MICROS, UTC), DATE → INT32 DATE (days), NUMERIC → FIXED_LEN_BYTE_ARRAY(16)
 * DECIMAL(38, 18) (every NUMERIC fits: {@link io.cairn.engine.row.Numeric}), DOUBLE → DOUBLE, TEXT → BINARY STRING,
 * INTERVAL → BINARY STRING of its three fields ({@link io.cairn.engine.row.Interval#storageText}: {@code
 * 14 months 3 days 14706500000 microseconds}, which DuckDB casts to INTERVAL; Parquet's INTERVAL has
 * milliseconds and no sign), BOOLEAN and NULL →
 * BOOLEAN. Rows are in the batch's (key, val, time) order, in row groups of at most {@link
 * BatchFileOptions#rowGroupRows()} rows (an empty batch has none). Pages are ZSTD-compressed and
 * carry statistics; values are encoded as parquet-java's writer picks for the {@link
 * BatchFileOptions#pageFormat()} (dictionary while it pays, else PLAIN for v1 pages or
 * DELTA_BINARY_PACKED / DELTA_BYTE_ARRAY for v2 pages). The footer's
 * key/value metadata holds {@code cairn.format-version}, {@code cairn.arrangement}, {@code
 * cairn.shard}, {@code cairn.batch-id}, {@code cairn.lower}/{@code upper}/{@code since}, {@code
 * cairn.key-schema}, {@code cairn.val-schema} and {@code cairn.schema-fingerprint}.
 *
 * <p>Reading rebuilds the batch under the id it was stored with and checks the footer against
 * what the manifest says (schemas, description, row count); {@link Batch#fromColumns} then checks
 * order and consolidation. Files are written column by column ({@code ColumnBatchWriter}) and read
 * column by column ({@code ColumnBatchReader}); neither assembles records.
 */
public final class ParquetBatchFiles {
  public static final String FORMAT_VERSION = "1";
  public static final String TIME_COLUMN = "_time";
  public static final String DIFF_COLUMN = "_diff";

  private ParquetBatchFiles() {}

  /** The fingerprint stored with a batch file: of the key schema, then the value schema. */
  /** A NUMERIC column's Parquet DECIMAL precision and scale (see {@link io.cairn.engine.row.Numeric}). */
  public static final int NUMERIC_PRECISION = 38;

  public static final int NUMERIC_SCALE = io.cairn.engine.row.Numeric.MAX_SCALE;

  /** A NUMERIC as DECIMAL(38, 18)'s 16 bytes: the unscaled value, two's complement, big-endian. */
  public static byte[] numericBytes(java.math.BigDecimal v) {
    byte[] b = v.setScale(NUMERIC_SCALE).unscaledValue().toByteArray();
    byte[] out = new byte[16];
    byte pad = (byte) (v.signum() < 0 ? 0xff : 0);
    java.util.Arrays.fill(out, 0, 16 - b.length, pad);
    System.arraycopy(b, 0, out, 16 - b.length, b.length);
    return out;
  }

  public static String fingerprint(Schema key, Schema val) {
    return key.fingerprint() + val.fingerprint();
  }

  /** The Parquet column names for an arrangement's key and value schemas. */
  public static List<String> columnNames(Schema key, Schema val) {
    List<String> names = new ArrayList<>();
    Set<String> used = new HashSet<>(List.of(TIME_COLUMN, DIFF_COLUMN));
    for (int c = 0; c < key.size(); c++) {
      names.add(unique(key.column(c).name(), "key_", used));
    }
    for (int c = 0; c < val.size(); c++) {
      names.add(unique(val.column(c).name(), "val_", used));
    }
    return names;
  }

  private static String unique(String name, String prefix, Set<String> used) {
    String n = name;
    while (!used.add(n)) {
      n = prefix + n;
    }
    return n;
  }

  /** The Parquet schema of a batch file. */
  public static MessageType parquetSchema(Schema key, Schema val) {
    List<String> names = columnNames(key, val);
    Types.MessageTypeBuilder b = Types.buildMessage();
    int i = 0;
    for (int c = 0; c < key.size(); c++) {
      b.addField(field(key.type(c), names.get(i++)));
    }
    for (int c = 0; c < val.size(); c++) {
      b.addField(field(val.type(c), names.get(i++)));
    }
    b.addField(Types.required(PrimitiveTypeName.INT64).named(TIME_COLUMN));
    b.addField(Types.required(PrimitiveTypeName.INT64).named(DIFF_COLUMN));
    return b.named("cairn_batch");
  }

  private static org.apache.parquet.schema.Type field(Type type, String name) {
    return switch (type) {
      case BIGINT -> Types.optional(PrimitiveTypeName.INT64).named(name);
      case TIMESTAMP -> Types.optional(PrimitiveTypeName.INT64)
          .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS)).named(name);
      case DATE -> Types.optional(PrimitiveTypeName.INT32).as(LogicalTypeAnnotation.dateType()).named(name);
      case NUMERIC -> Types.optional(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY).length(16)
          .as(LogicalTypeAnnotation.decimalType(NUMERIC_SCALE, NUMERIC_PRECISION)).named(name);
      case DOUBLE -> Types.optional(PrimitiveTypeName.DOUBLE).named(name);
      case TEXT, INTERVAL -> Types.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named(name);
      case BOOLEAN, NULL -> Types.optional(PrimitiveTypeName.BOOLEAN).named(name);
    };
  }

  /** Footer metadata for a batch of {@code arrangement}/{@code shard}. */
  public static Map<String, String> footer(String arrangement, int shard, Batch b) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put("cairn.format-version", FORMAT_VERSION);
    m.put("cairn.arrangement", arrangement);
    m.put("cairn.shard", Integer.toString(shard));
    m.put("cairn.batch-id", b.id());
    m.put("cairn.lower", Long.toString(b.description().lower()));
    m.put("cairn.upper", Long.toString(b.description().upper()));
    m.put("cairn.since", Long.toString(b.description().since()));
    m.put("cairn.key-schema", b.keySchema().toString());
    m.put("cairn.val-schema", b.valSchema().toString());
    m.put("cairn.schema-fingerprint", fingerprint(b.keySchema(), b.valSchema()));
    return m;
  }

  /** Writes {@code batch} as a Parquet file to {@code out} (not closed), with the {@link BatchFileOptions#defaults()}. */
  public static void write(String arrangement, int shard, Batch batch, OutputStream out) {
    write(arrangement, shard, batch, out, BatchFileOptions.defaults());
  }

  /** Writes {@code batch} as a Parquet file to {@code out} (not closed), column by column. */
  public static void write(String arrangement, int shard, Batch batch, OutputStream out, BatchFileOptions options) {
    try {
      ColumnBatchWriter.write(arrangement, shard, batch, out, options);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write batch " + batch.id() + " of " + arrangement + " as Parquet: " + e.getMessage(), e);
    }
  }

  /** Writes {@code batch} as a Parquet file in memory, with the {@link BatchFileOptions#defaults()}. */
  public static byte[] toBytes(String arrangement, int shard, Batch batch) {
    return toBytes(arrangement, shard, batch, BatchFileOptions.defaults());
  }

  /** Writes {@code batch} as a Parquet file in memory. */
  public static byte[] toBytes(String arrangement, int shard, Batch batch, BatchFileOptions options) {
    // ZSTD batch files run at a few bytes per row: start small, grow by doubling
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(16L << 20, 1024 + 4L * batch.size()));
    write(arrangement, shard, batch, out, options);
    return out.toByteArray();
  }

  /**
   * Reads a batch file, column by column. {@code id}, the schemas, the description and {@code
   * expectedRows} come from the manifest; the footer must agree.
   *
   * @throws CorruptSnapshotException naming {@code what} if the file is not a valid batch file or
   *     disagrees with them
   */
  public static Batch read(
      String what, byte[] file, String id, Schema key, Schema val, Description description, long expectedRows) {
    return read(what, new BytesInputFile(file), id, key, val, description, expectedRows);
  }

  /**
   * Reads a batch file through {@code file}, column by column: the footer, then one row group at
   * a time, each read with forward seeks (so a ranged or streamed {@link InputFile} holds about one
   * row group's compressed bytes at a time). A {@link SnapshotException} thrown by {@code file}
   * (e.g. a failing store) passes through unchanged; every other failure is a {@link
   * CorruptSnapshotException}, as for {@link #read(String, byte[], String, Schema, Schema,
   * Description, long)}.
   */
  public static Batch read(
      String what, InputFile file, String id, Schema key, Schema val, Description description, long expectedRows) {
    ColumnBatchReader columns;
    ReadCodecs codecs = new ReadCodecs();
    ParquetReadOptions options = ParquetReadOptions.builder(new PlainParquetConfiguration()).withCodecFactory(codecs).build();
    try (codecs; ParquetFileReader r = ParquetFileReader.open(file, options)) {
      MessageType expected = parquetSchema(key, val);
      MessageType actual = r.getFooter().getFileMetaData().getSchema();
      if (!actual.equals(expected)) {
        throw new CorruptSnapshotException("Cannot read batch file " + what + ": its schema " + actual + " is not " + expected);
      }
      Map<String, String> meta = r.getFooter().getFileMetaData().getKeyValueMetaData();
      check(what, meta, "cairn.batch-id", id);
      check(what, meta, "cairn.key-schema", key.toString());
      check(what, meta, "cairn.val-schema", val.toString());
      check(what, meta, "cairn.lower", Long.toString(description.lower()));
      check(what, meta, "cairn.upper", Long.toString(description.upper()));
      check(what, meta, "cairn.since", Long.toString(description.since()));
      long rows = r.getRecordCount();
      if (rows != expectedRows) {
        throw new CorruptSnapshotException(
            "Cannot read batch file " + what + ": it holds " + rows + " rows, the manifest says " + expectedRows);
      }
      if (rows > Integer.MAX_VALUE - 8) {
        throw new CorruptSnapshotException("Cannot read batch file " + what + ": " + rows + " rows do not fit one batch");
      }
      columns = ColumnBatchReader.read(r, expected, key, val, (int) rows);
    } catch (SnapshotException e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new CorruptSnapshotException("Cannot read batch file " + what + ": " + e.getMessage(), e);
    }
    try {
      return Batch.fromColumns(id, key, val, description, columns.keyColumns(), columns.valColumns(), columns.timesOrNull(),
          columns.time0(), columns.diffsOrNull(), columns.diff0(), columns.rows());
    } catch (IllegalArgumentException e) {
      throw new CorruptSnapshotException("Cannot read batch file " + what + ": " + e.getMessage(), e);
    }
  }

  private static void check(String what, Map<String, String> meta, String key, String expected) {
    String actual = meta == null ? null : meta.get(key);
    if (!expected.equals(actual)) {
      throw new CorruptSnapshotException(
          "Cannot read batch file " + what + ": footer " + key + " is '" + actual + "', the manifest says '" + expected + "'");
    }
  }

  // ------------------------------------------------------------------ files over streams and arrays

  /** An {@link OutputFile} over a stream, counting the position. */
  static final class StreamOutputFile implements OutputFile {
    private final OutputStream out;
    private final long start;

    StreamOutputFile(OutputStream out) {
      this(out, 0);
    }

    /** Positions counted from {@code start}: the bytes written are the file's from there on (for tests of large offsets). */
    StreamOutputFile(OutputStream out, long start) {
      this.out = out;
      this.start = start;
    }

    @Override
    public PositionOutputStream create(long blockSizeHint) {
      return new PositionOutputStream() {
        private long pos = start;

        @Override
        public long getPos() {
          return pos;
        }

        @Override
        public void write(int b) throws IOException {
          out.write(b);
          pos++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
          out.write(b, off, len);
          pos += len;
        }

        @Override
        public void flush() throws IOException {
          out.flush();
        }

        @Override
        public void close() throws IOException {
          out.flush();
        }
      };
    }

    @Override
    public PositionOutputStream createOrOverwrite(long blockSizeHint) {
      return create(blockSizeHint);
    }

    @Override
    public boolean supportsBlockSize() {
      return false;
    }

    @Override
    public long defaultBlockSize() {
      return 0;
    }
  }

  private static final class PositionedBytes extends ByteArrayInputStream {
    PositionedBytes(byte[] b) {
      super(b);
    }

    long position() {
      return pos;
    }

    void seekTo(long p) throws IOException {
      if (p < 0 || p > count) {
        throw new IOException("Cannot seek to " + p + ": the file has " + count + " bytes");
      }
      pos = (int) p;
    }
  }

  static final class BytesInputFile implements InputFile {
    private final byte[] bytes;

    BytesInputFile(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public long getLength() {
      return bytes.length;
    }

    @Override
    public SeekableInputStream newStream() {
      PositionedBytes in = new PositionedBytes(bytes);
      return new DelegatingSeekableInputStream(in) {
        @Override
        public long getPos() {
          return in.position();
        }

        @Override
        public void seek(long newPos) throws IOException {
          in.seekTo(newPos);
        }
      };
    }
  }
}
