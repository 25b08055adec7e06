package io.cairn.snapshotter.format;

import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.ColumnVector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnReader;
import org.apache.parquet.column.impl.ColumnReadStoreImpl;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ColumnPath;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.api.Converter;
import org.apache.parquet.io.api.GroupConverter;
import org.apache.parquet.io.api.PrimitiveConverter;
import org.apache.parquet.schema.MessageType;

/**
 * Decodes a batch file column by column: for each row group, each column chunk fills a primitive
 * array directly, with no record assembly: in bulk by {@link BulkPageDecoder} where it knows the
 * chunk's type and encodings, else value by value from parquet-java's {@link ColumnReader}
 * (definition level 0 marks a NULL). The arrays are sized once from the footer's row count.
 */
final class ColumnBatchReader {
  private final Schema key;
  private final Schema val;
  private final Type[] types;
  private final int rows;
  /** BIGINT, TIMESTAMP and DATE columns: one array, or chunks above a million rows ({@link ColumnVector.LongsWriter}). */
  private final ColumnVector.LongsWriter[] longs;
  private final double[][] doubles;
  private final String[][] texts;
  private final java.math.BigDecimal[][] decimals;
  private final io.cairn.engine.row.Interval[][] intervals;
  private final boolean[][] booleans;
  private final BitSet[] nulls;
  /** The times and diffs, each kept as one value until a row differs (the common case: see {@link io.cairn.engine.trace.Batch}). */
  private final LongSink times;
  private final LongSink diffs;
  /** Column chunks read by the {@link BulkPageDecoder} (the tests' proof that it ran). */
  private int bulkChunks;
  /** A row group's values, decoded before they are copied into a chunked column or a times or diffs sink. */
  private long[] scratch;

  /**
   * A required BIGINT column read in row order: one value while every row has it, a column (one
   * array or chunked, as the key and value columns) from the first that does not.
   */
  static final class LongSink {
    private final int rows;
    private ColumnVector.LongsWriter values;
    private long first;

    LongSink(int rows) {
      this.rows = rows;
    }

    void set(int i, long v) {
      if (values != null) {
        values.set(i, v);
      } else if (i == 0) {
        first = v;
      } else if (v != first) {
        values = new ColumnVector.LongsWriter(Type.BIGINT, rows);
        values.fill(0, i, first);
        values.set(i, v);
      }
    }

    /** {@link #set} of rows {@code [base, base + n)} to {@code v[0, n)}. */
    void setAll(int base, long[] v, int n) {
      int k = 0;
      if (values == null) {
        if (base == 0 && n > 0) {
          first = v[0];
          k = 1;
        }
        long f = first;
        while (k < n && v[k] == f) {
          k++;
        }
        if (k == n) {
          return;
        }
        values = new ColumnVector.LongsWriter(Type.BIGINT, rows);
        values.fill(0, base + k, f);
      }
      values.copyFrom(v, k, base + k, n - k);
    }

    /** The values, or null when every row had {@link #first()}. */
    ColumnVector.Longs valuesOrNull() {
      return values == null ? null : values.build(null);
    }

    long first() {
      return first;
    }
  }

  private ColumnBatchReader(Schema key, Schema val, int rows) {
    this.key = key;
    this.val = val;
    this.rows = rows;
    int n = key.size() + val.size();
    types = new Type[n];
    longs = new ColumnVector.LongsWriter[n];
    doubles = new double[n][];
    texts = new String[n][];
    decimals = new java.math.BigDecimal[n][];
    intervals = new io.cairn.engine.row.Interval[n][];
    booleans = new boolean[n][];
    nulls = new BitSet[n];
    for (int c = 0; c < n; c++) {
      types[c] = c < key.size() ? key.type(c) : val.type(c - key.size());
      switch (types[c]) {
        case BIGINT, TIMESTAMP, DATE -> longs[c] = new ColumnVector.LongsWriter(types[c], rows);
        case DOUBLE -> doubles[c] = new double[rows];
        case TEXT -> texts[c] = new String[rows];
        case NUMERIC -> decimals[c] = new java.math.BigDecimal[rows];
        case INTERVAL -> intervals[c] = new io.cairn.engine.row.Interval[rows];
        case BOOLEAN, NULL -> booleans[c] = new boolean[rows];
      }
    }
    times = new LongSink(rows);
    diffs = new LongSink(rows);
  }

  /**
   * Reads every row group of {@code reader}, whose schema is {@code schema} (already checked) and
   * whose row count is {@code rows} (already checked against the manifest). A column chunk in the
   * encodings {@link BulkPageDecoder} knows (every chunk cairn writes but BOOLEAN, NUMERIC and
   * INTERVAL ones) is decoded by it, in bulk; any other through parquet-java's column reader.
   */
  static ColumnBatchReader read(ParquetFileReader reader, MessageType schema, Schema key, Schema val, int rows) throws IOException {
    return read(reader, schema, key, val, rows, true);
  }

  /** As {@link #read(ParquetFileReader, MessageType, Schema, Schema, int)}; {@code bulk} false reads every chunk with parquet-java's column reader (the tests' reference). */
  static ColumnBatchReader read(ParquetFileReader reader, MessageType schema, Schema key, Schema val, int rows, boolean bulk)
      throws IOException {
    ColumnBatchReader r = new ColumnBatchReader(key, val, rows);
    String createdBy = reader.getFooter().getFileMetaData().getCreatedBy();
    List<ColumnDescriptor> descriptors = schema.getColumns();
    List<BlockMetaData> blocks = reader.getRowGroups();
    BulkPageDecoder decoder = bulk ? new BulkPageDecoder() : null;
    GroupConverter ignored = new IgnoringConverter(descriptors.size());
    int base = 0;
    for (int index = 0; index < blocks.size(); index++) {
      if (blocks.get(index).getRowCount() == 0) {
        continue; // as parquet-java's own iteration does: an empty row group has no pages to read
      }
      try (PageReadStore g = reader.readRowGroup(index)) {
        long count = g.getRowCount();
        if (count < 0 || base + count > rows) {
          throw new IOException("row group at row " + base + " has " + count + " rows, past the footer's " + rows);
        }
        int n = (int) count;
        List<ColumnChunkMetaData> chunks = blocks.get(index).getColumns();
        ColumnReadStoreImpl columns = new ColumnReadStoreImpl(g, ignored, schema, createdBy);
        int k = r.types.length;
        for (int c = 0; c < k + 2; c++) {
          ColumnDescriptor d = descriptors.get(c);
          boolean fast = decoder != null && c < chunks.size() && chunks.get(c).getPath().equals(ColumnPath.get(d.getPath()))
              && BulkPageDecoder.decodes(d, chunks.get(c).getEncodings());
          if (c >= k) { // the times, then the diffs
            LongSink sink = c == k ? r.times : r.diffs;
            if (fast) {
              long[] scratch = r.scratch(n);
              decoder.readLongs(g.getPageReader(d), d, scratch, null, 0, n);
              sink.setAll(base, scratch, n);
              r.bulkChunks++;
            } else {
              readRequired(columns.getColumnReader(d), sink, base, n);
            }
          } else if (fast && r.readBulk(decoder, c, g.getPageReader(d), d, base, n)) {
            r.bulkChunks++;
          } else {
            r.readColumn(c, columns.getColumnReader(d), base, n);
          }
        }
        base += n;
      }
    }
    if (base != rows) {
      throw new IOException("its row groups hold " + base + " rows, its footer says " + rows);
    }
    return r;
  }

  /** Reads column {@code c}'s chunk with {@code decoder} if its type is one it fills; false (nothing read) if not. */
  private boolean readBulk(BulkPageDecoder decoder, int c, PageReader pr, ColumnDescriptor d, int base, int n) throws IOException {
    switch (types[c]) {
      case BIGINT, TIMESTAMP, DATE -> readLongs(decoder, c, pr, d, base, n);
      case DOUBLE -> nulls[c] = decoder.readDoubles(pr, d, doubles[c], nulls[c], base, n);
      case TEXT -> decoder.readStrings(pr, d, texts[c], base, n);
      default -> {
        return false;
      }
    }
    return true;
  }

  /**
   * Decodes a long column's chunk straight into its one array, or, when the column is chunked,
   * into a row group's scratch array copied into the chunks (a row group of the default size
   * covers whole chunks, which are then allocated as copies: no zeroing).
   */
  private void readLongs(BulkPageDecoder decoder, int c, PageReader pr, ColumnDescriptor d, int base, int n) throws IOException {
    long[] array = longs[c].arrayOrNull();
    if (array != null) {
      nulls[c] = decoder.readLongs(pr, d, array, nulls[c], base, n);
      return;
    }
    long[] s = scratch(n);
    BitSet nl = decoder.readLongs(pr, d, s, null, 0, n);
    if (nl != null) {
      for (int i = nl.nextSetBit(0); i >= 0; i = nl.nextSetBit(i + 1)) {
        s[i] = 0; // the decoder leaves a NULL row's entry as it was; a column holds 0 there
        setNull(c, base + i);
      }
    }
    longs[c].copyFrom(s, 0, base, n);
  }

  /** A scratch array of at least {@code n} longs (a row group's), kept for the next. */
  private long[] scratch(int n) {
    if (scratch == null || scratch.length < n) {
      scratch = new long[n];
    }
    return scratch;
  }

  private static void readRequired(ColumnReader cr, LongSink out, int base, int n) {
    for (int i = base, end = base + n; i < end; i++) {
      out.set(i, cr.getLong());
      cr.consume();
    }
  }

  private void readColumn(int c, ColumnReader cr, int base, int n) {
    int end = base + n;
    switch (types[c]) {
      case BIGINT, TIMESTAMP -> {
        ColumnVector.LongsWriter out = longs[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() == 0) {
            setNull(c, i);
          } else {
            out.set(i, cr.getLong());
          }
          cr.consume();
        }
      }
      case DATE -> { // INT32 days (Parquet's DATE)
        ColumnVector.LongsWriter out = longs[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() == 0) {
            setNull(c, i);
          } else {
            out.set(i, cr.getInteger());
          }
          cr.consume();
        }
      }
      case DOUBLE -> {
        double[] out = doubles[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() == 0) {
            setNull(c, i);
          } else {
            out[i] = cr.getDouble();
          }
          cr.consume();
        }
      }
      case TEXT -> {
        String[] out = texts[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() != 0) {
            out[i] = cr.getBinary().toStringUsingUTF8();
          }
          cr.consume();
        }
      }
      case INTERVAL -> { // its fields as text
        io.cairn.engine.row.Interval[] out = intervals[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() != 0) {
            out[i] = io.cairn.engine.row.Interval.parse(cr.getBinary().toStringUsingUTF8());
          }
          cr.consume();
        }
      }
      case NUMERIC -> { // DECIMAL(38, 18): 16 bytes, two's complement, big-endian
        java.math.BigDecimal[] out = decimals[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() != 0) {
            out[i] = io.cairn.engine.row.Numeric.of(new java.math.BigDecimal(new java.math.BigInteger(cr.getBinary().getBytes()),
                ParquetBatchFiles.NUMERIC_SCALE));
          }
          cr.consume();
        }
      }
      case BOOLEAN, NULL -> {
        boolean[] out = booleans[c];
        for (int i = base; i < end; i++) {
          if (cr.getCurrentDefinitionLevel() == 0) {
            setNull(c, i);
          } else {
            out[i] = cr.getBoolean();
          }
          cr.consume();
        }
      }
    }
  }

  private void setNull(int c, int i) {
    if (nulls[c] == null) {
      nulls[c] = new BitSet();
    }
    nulls[c].set(i);
  }

  private ColumnVector column(int c) {
    BitSet nl = nulls[c];
    return switch (types[c]) {
      case BIGINT, TIMESTAMP, DATE -> longs[c].build(nl);
      case DOUBLE -> new ColumnVector.Doubles(doubles[c], nl, rows);
      case TEXT -> new ColumnVector.Texts(texts[c], rows);
      case NUMERIC -> new ColumnVector.Values(io.cairn.engine.row.Type.NUMERIC, decimals[c], rows);
      case INTERVAL -> new ColumnVector.Values(io.cairn.engine.row.Type.INTERVAL, intervals[c], rows);
      case BOOLEAN, NULL -> new ColumnVector.Booleans(types[c], booleans[c], nl, rows);
    };
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

  /** The times, or null when every row's is {@link #time0()}. */
  ColumnVector.Longs timesOrNull() {
    return times.valuesOrNull();
  }

  long time0() {
    return times.first();
  }

  /** The diffs, or null when every row's is {@link #diff0()}. */
  ColumnVector.Longs diffsOrNull() {
    return diffs.valuesOrNull();
  }

  long diff0() {
    return diffs.first();
  }

  int rows() {
    return rows;
  }

  int bulkChunks() {
    return bulkChunks;
  }

  /** The column readers want a converter per column; values are taken from the readers instead. */
  private static final class IgnoringConverter extends GroupConverter {
    private final PrimitiveConverter primitive = new PrimitiveConverter() {};
    private final int fields;

    IgnoringConverter(int fields) {
      this.fields = fields;
    }

    @Override
    public Converter getConverter(int fieldIndex) {
      if (fieldIndex < 0 || fieldIndex >= fields) {
        throw new IllegalArgumentException("Cannot convert field " + fieldIndex + " of " + fields);
      }
      return primitive;
    }

    @Override
    public void start() {}

    @Override
    public void end() {}
  }
}
