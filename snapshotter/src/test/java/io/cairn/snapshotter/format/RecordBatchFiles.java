package io.cairn.snapshotter.format;

import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import io.cairn.engine.trace.Description;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.parquet.conf.ParquetConfiguration;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.InitContext;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.PositionOutputStream;
import org.apache.parquet.io.SeekableInputStream;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.io.api.RecordMaterializer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;

/**
 * Test oracle: the record-at-a-time writer and reader that {@link ParquetBatchFiles} used before
 * the column writer (issue 14), kept as they were. The column writer's files must read back the
 * same through both readers, and this writer's files through the column reader.
 *
 * <p>The batch file format: one {@link Batch} as one Parquet file, readable by any Parquet reader.
 *
 * <p>Columns, in order: the key columns, the value columns (a value column whose name clashes
 * with a key column is stored as {@code val_<name>}), then {@code _time} and {@code _diff}, both
 * required INT64. Key and value columns are optional (SQL NULL): BIGINT → INT64, TIMESTAMP →
 * INT64 TIMESTAMP(MICROS, UTC), DOUBLE → DOUBLE, TEXT → BINARY STRING, BOOLEAN and NULL →
 * BOOLEAN. Rows are in the batch's (key, val, time) order. Pages are ZSTD-compressed. The footer's
 * key/value metadata holds {@code cairn.format-version}, {@code cairn.arrangement}, {@code
 * cairn.shard}, {@code cairn.batch-id}, {@code cairn.lower}/{@code upper}/{@code since}, {@code
 * cairn.key-schema}, {@code cairn.val-schema} and {@code cairn.schema-fingerprint}.
 *
 * <p>Reading rebuilds the batch under the id it was stored with and checks the footer against
 * what the manifest says (schemas, description, row count); {@link Batch#fromColumns} then checks
 * order and consolidation.
 */
final class RecordBatchFiles {
  public static final String FORMAT_VERSION = "1";
  public static final String TIME_COLUMN = "_time";
  public static final String DIFF_COLUMN = "_diff";

  private RecordBatchFiles() {}

  /** The fingerprint stored with a batch file: of the key schema, then the value schema. */
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
      case DOUBLE -> Types.optional(PrimitiveTypeName.DOUBLE).named(name);
      case TEXT -> Types.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named(name);
      case NUMERIC, INTERVAL -> throw new UnsupportedOperationException("the record-based reference predates NUMERIC and INTERVAL");
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

  /** Writes {@code batch} as a Parquet file to {@code out} (not closed). */
  public static void write(String arrangement, int shard, Batch batch, OutputStream out) {
    try (ParquetWriter<Integer> w =
        new WriterBuilder(new StreamOutputFile(out), batch, footer(arrangement, shard, batch))
            .withConf(new PlainParquetConfiguration())
            .withCompressionCodec(CompressionCodecName.ZSTD)
            .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
            .withRowGroupSize(128L * 1024 * 1024)
            .withPageSize(1024 * 1024)
            .build()) {
      for (int i = 0; i < batch.size(); i++) {
        w.write(i);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write batch " + batch.id() + " of " + arrangement + " as Parquet: " + e.getMessage(), e);
    }
  }

  /** Writes {@code batch} as a Parquet file in memory. */
  public static byte[] toBytes(String arrangement, int shard, Batch batch) {
    ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(64L << 20, 1024 + batch.heapBytes() / 4));
    write(arrangement, shard, batch, out);
    return out.toByteArray();
  }

  /**
   * Reads a batch file. {@code id}, the schemas, the description and {@code expectedRows} come
   * from the manifest; the footer must agree.
   *
   * @throws CorruptSnapshotException if the file is not a valid batch file or disagrees with them
   */
  public static Batch read(
      String what, byte[] file, String id, Schema key, Schema val, Description description, long expectedRows) {
    Map<String, String> meta;
    ColumnsReadSupport support = new ColumnsReadSupport(key, val, (int) Math.max(0, Math.min(expectedRows, Integer.MAX_VALUE - 8)));
    try (ParquetReader<Boolean> r = new ReaderBuilder(new BytesInputFile(file), support).build()) {
      while (r.read() != null) {
        // the materializer appends into the columns
      }
    } catch (IOException | RuntimeException e) {
      throw new CorruptSnapshotException("Cannot read batch file " + what + ": " + e.getMessage(), e);
    }
    meta = support.footer;
    check(what, meta, "cairn.batch-id", id);
    check(what, meta, "cairn.key-schema", key.toString());
    check(what, meta, "cairn.val-schema", val.toString());
    check(what, meta, "cairn.lower", Long.toString(description.lower()));
    check(what, meta, "cairn.upper", Long.toString(description.upper()));
    check(what, meta, "cairn.since", Long.toString(description.since()));
    if (support.rows != expectedRows) {
      throw new CorruptSnapshotException(
          "Cannot read batch file " + what + ": it holds " + support.rows + " rows, the manifest says " + expectedRows);
    }
    try {
      return Batch.fromColumns(id, key, val, description, support.keyColumns(), support.valColumns(), support.times(), support.diffs());
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

  // ------------------------------------------------------------------ writing

  private static final class WriterBuilder extends ParquetWriter.Builder<Integer, WriterBuilder> {
    private final Batch batch;
    private final Map<String, String> footer;

    WriterBuilder(OutputFile file, Batch batch, Map<String, String> footer) {
      super(file);
      this.batch = batch;
      this.footer = footer;
    }

    @Override
    protected WriterBuilder self() {
      return this;
    }

    @Override
    protected WriteSupport<Integer> getWriteSupport(org.apache.hadoop.conf.Configuration conf) {
      return new BatchWriteSupport(batch, footer);
    }

    @Override
    protected WriteSupport<Integer> getWriteSupport(ParquetConfiguration conf) {
      return new BatchWriteSupport(batch, footer);
    }
  }

  /** Writes row {@code i} of the batch for each record {@code i}. */
  private static final class BatchWriteSupport extends WriteSupport<Integer> {
    private final Batch batch;
    private final Map<String, String> footer;
    private final MessageType schema;
    private final String[] names;
    private final ColumnVector[] columns;
    private RecordConsumer out;

    BatchWriteSupport(Batch batch, Map<String, String> footer) {
      this.batch = batch;
      this.footer = footer;
      this.schema = parquetSchema(batch.keySchema(), batch.valSchema());
      this.names = columnNames(batch.keySchema(), batch.valSchema()).toArray(new String[0]);
      int k = batch.keySchema().size();
      this.columns = new ColumnVector[k + batch.valSchema().size()];
      for (int c = 0; c < columns.length; c++) {
        columns[c] = c < k ? batch.keyColumn(c) : batch.valColumn(c - k);
      }
    }

    @Override
    public WriteContext init(org.apache.hadoop.conf.Configuration configuration) {
      return new WriteContext(schema, Map.of());
    }

    @Override
    public WriteContext init(ParquetConfiguration configuration) {
      return new WriteContext(schema, Map.of());
    }

    @Override
    public FinalizedWriteContext finalizeWrite() {
      return new FinalizedWriteContext(footer);
    }

    @Override
    public void prepareForWrite(RecordConsumer recordConsumer) {
      this.out = recordConsumer;
    }

    @Override
    public void write(Integer row) {
      int i = row;
      out.startMessage();
      for (int c = 0; c < columns.length; c++) {
        ColumnVector v = columns[c];
        if (v.isNull(i)) {
          continue;
        }
        out.startField(names[c], c);
        if (v instanceof ColumnVector.Longs l) {
          out.addLong(l.getLong(i));
        } else if (v instanceof ColumnVector.Doubles d) {
          out.addDouble(d.getDouble(i));
        } else if (v instanceof ColumnVector.Booleans b) {
          out.addBoolean(b.getBoolean(i));
        } else {
          out.addBinary(Binary.fromString((String) v.get(i)));
        }
        out.endField(names[c], c);
      }
      int t = columns.length;
      out.startField(TIME_COLUMN, t);
      out.addLong(batch.time(i));
      out.endField(TIME_COLUMN, t);
      out.startField(DIFF_COLUMN, t + 1);
      out.addLong(batch.diff(i));
      out.endField(DIFF_COLUMN, t + 1);
      out.endMessage();
    }
  }

  private static final class StreamOutputFile implements OutputFile {
    private final OutputStream out;

    StreamOutputFile(OutputStream out) {
      this.out = out;
    }

    @Override
    public PositionOutputStream create(long blockSizeHint) {
      return new PositionOutputStream() {
        private long pos;

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

  // ------------------------------------------------------------------ reading

  private static final class ReaderBuilder extends ParquetReader.Builder<Boolean> {
    private final ReadSupport<Boolean> support;

    ReaderBuilder(InputFile file, ReadSupport<Boolean> support) {
      super(file, new PlainParquetConfiguration());
      this.support = support;
    }

    @Override
    protected ReadSupport<Boolean> getReadSupport() {
      return support;
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

  private static final class BytesInputFile implements InputFile {
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

  /** Materializes records straight into primitive column arrays. */
  private static final class ColumnsReadSupport extends ReadSupport<Boolean> {
    private final Schema key;
    private final Schema val;
    private final Type[] types;
    private long[][] longs;
    private double[][] doubles;
    private String[][] texts;
    private boolean[][] booleans;
    private BitSet[] nulls;
    private long[] times;
    private long[] diffs;
    private int rows;
    private Map<String, String> footer;

    ColumnsReadSupport(Schema key, Schema val, int capacity) {
      this.key = key;
      this.val = val;
      int n = key.size() + val.size();
      types = new Type[n];
      for (int c = 0; c < n; c++) {
        types[c] = c < key.size() ? key.type(c) : val.type(c - key.size());
      }
      longs = new long[n][];
      doubles = new double[n][];
      texts = new String[n][];
      booleans = new boolean[n][];
      nulls = new BitSet[n];
      int cap = Math.max(4, capacity);
      for (int c = 0; c < n; c++) {
        switch (types[c]) {
          case BIGINT, TIMESTAMP, DATE -> longs[c] = new long[cap];
          case DOUBLE -> doubles[c] = new double[cap];
          case TEXT -> texts[c] = new String[cap];
          case BOOLEAN, NULL -> booleans[c] = new boolean[cap];
        }
      }
      times = new long[cap];
      diffs = new long[cap];
    }

    private void ensure(int row) {
      if (row < times.length) {
        return;
      }
      int cap = Math.max(8, times.length * 2);
      times = java.util.Arrays.copyOf(times, cap);
      diffs = java.util.Arrays.copyOf(diffs, cap);
      for (int c = 0; c < types.length; c++) {
        if (longs[c] != null) {
          longs[c] = java.util.Arrays.copyOf(longs[c], cap);
        } else if (doubles[c] != null) {
          doubles[c] = java.util.Arrays.copyOf(doubles[c], cap);
        } else if (texts[c] != null) {
          texts[c] = java.util.Arrays.copyOf(texts[c], cap);
        } else {
          booleans[c] = java.util.Arrays.copyOf(booleans[c], cap);
        }
      }
    }

    @Override
    public ReadContext init(InitContext context) {
      MessageType expected = parquetSchema(key, val);
      MessageType file = context.getFileSchema();
      if (!file.equals(expected)) {
        throw new CorruptSnapshotException("Cannot read batch file: its schema " + file + " is not " + expected);
      }
      Map<String, String> meta = new java.util.HashMap<>();
      context.getKeyValueMetadata().forEach((k, v) -> meta.put(k, v.isEmpty() ? null : v.iterator().next()));
      this.footer = meta;
      return new ReadContext(expected);
    }

    @Override
    public RecordMaterializer<Boolean> prepareForRead(
        org.apache.hadoop.conf.Configuration configuration, Map<String, String> keyValueMetaData, MessageType fileSchema, ReadContext readContext) {
      return materializer();
    }

    @Override
    public RecordMaterializer<Boolean> prepareForRead(
        ParquetConfiguration configuration, Map<String, String> keyValueMetaData, MessageType fileSchema, ReadContext readContext) {
      return materializer();
    }

    private RecordMaterializer<Boolean> materializer() {
      int n = types.length;
      Converter[] converters = new Converter[n + 2];
      boolean[] seen = new boolean[n];
      for (int c = 0; c < n; c++) {
        final int col = c;
        converters[c] = new PrimitiveConverter() {
          @Override
          public void addLong(long value) {
            longs[col][rows] = value;
            seen[col] = true;
          }

          @Override
          public void addDouble(double value) {
            doubles[col][rows] = value;
            seen[col] = true;
          }

          @Override
          public void addBoolean(boolean value) {
            booleans[col][rows] = value;
            seen[col] = true;
          }

          @Override
          public void addBinary(Binary value) {
            texts[col][rows] = value.toStringUsingUTF8();
            seen[col] = true;
          }
        };
      }
      converters[n] = new PrimitiveConverter() {
        @Override
        public void addLong(long value) {
          times[rows] = value;
        }
      };
      converters[n + 1] = new PrimitiveConverter() {
        @Override
        public void addLong(long value) {
          diffs[rows] = value;
        }
      };
      GroupConverter root = new GroupConverter() {
        @Override
        public Converter getConverter(int fieldIndex) {
          return converters[fieldIndex];
        }

        @Override
        public void start() {
          ensure(rows);
          java.util.Arrays.fill(seen, false);
        }

        @Override
        public void end() {
          for (int c = 0; c < n; c++) {
            if (!seen[c]) {
              if (nulls[c] == null) {
                nulls[c] = new BitSet();
              }
              nulls[c].set(rows);
            }
          }
          rows++;
        }
      };
      return new RecordMaterializer<>() {
        @Override
        public Boolean getCurrentRecord() {
          return Boolean.TRUE;
        }

        @Override
        public GroupConverter getRootConverter() {
          return root;
        }
      };
    }

    private ColumnVector column(int c) {
      BitSet nl = nulls[c];
      return switch (types[c]) {
        case BIGINT, TIMESTAMP, DATE -> new ColumnVector.Longs(types[c], trim(longs[c]), nl, rows);
        case DOUBLE -> new ColumnVector.Doubles(java.util.Arrays.copyOf(doubles[c], rows), nl, rows);
        case TEXT -> new ColumnVector.Texts(texts[c].length == rows ? texts[c] : java.util.Arrays.copyOf(texts[c], rows), rows);
        case NUMERIC, INTERVAL -> throw new UnsupportedOperationException("the record-based reference predates NUMERIC and INTERVAL");
        case BOOLEAN, NULL -> new ColumnVector.Booleans(types[c], java.util.Arrays.copyOf(booleans[c], rows), nl, rows);
      };
    }

    private long[] trim(long[] a) {
      return a.length == rows ? a : java.util.Arrays.copyOf(a, rows);
    }

    List<ColumnVector> keyColumns() {
      List<ColumnVector> out = new ArrayList<>();
      for (int c = 0; c < key.size(); c++) {
        out.add(column(c));
      }
      return out;
    }

    List<ColumnVector> valColumns() {
      List<ColumnVector> out = new ArrayList<>();
      for (int c = key.size(); c < types.length; c++) {
        out.add(column(c));
      }
      return out;
    }

    long[] times() {
      return trim(times);
    }

    long[] diffs() {
      return trim(diffs);
    }
  }
}
