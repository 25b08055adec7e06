package io.cairn.snapshotter.format;

import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.ColumnWriteStore;
import org.apache.parquet.column.ColumnWriter;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.column.impl.ColumnWriteStoreV1;
import org.apache.parquet.column.impl.ColumnWriteStoreV2;
import org.apache.parquet.column.page.PageWriter;
import org.apache.parquet.hadoop.ColumnChunkPageWriteStore;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;

/**
 * Writes a {@link Batch} as a Parquet file column by column: each row group's column chunks are
 * encoded page by page in bulk by {@link BulkPageEncoder} and handed to parquet-java's page store
 * ({@link ColumnChunkPageWriteStore}: compression, page CRCs, column and offset indexes from the
 * statistics passed), then appended with {@link ParquetFileWriter}'s row-group API (file layout,
 * footer). No {@code ColumnWriter}, no per-value call into parquet-java; the per-value path
 * ({@link #encodePerValue}, parquet-java's {@link ColumnWriteStore}) is kept as the tests'
 * reference, selected by {@link #write(String, int, Batch, OutputStream, BatchFileOptions, long,
 * boolean)}.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>The batch is cut into row groups of at most {@link BatchFileOptions#rowGroupRows()} rows.
 *       Each row group is encoded on its own (its own encoder, page store and compressor, so
 *       nothing is shared between threads) into compressed pages held in memory; the writing
 *       thread appends the row groups to the file strictly in order. At most {@link
 *       BatchFileOptions#rowGroupsInFlight()} row groups are encoded ahead of the one written,
 *       and at most {@link RowGroupBudget#size()} are held at once by all the files writing with
 *       the same {@link BatchFileOptions#budget()}: a row group takes a permit before it is
 *       submitted and returns it once appended.
 *   <li>Memory per row group: its compressed pages until appended; while encoding (one column
 *       at a time, one page at a time) the encoder's scratch arrays for one page of {@link
 *       BulkPageEncoder#PAGE_ROWS} rows (≈ 0.6 MB: values as longs twice, ids, definition
 *       levels, string references), the page's encoded bytes (≈ {@link #PAGE_BYTES}; a page of
 *       strings may reach 3× that when UTF-8 takes 3 bytes a char, as pages are cut by chars
 *       when a dictionary is tried), one reused buffer where a v1 page's levels and values are
 *       put together (the compressor reads a page where it lies, without copying it),
 *       and the column's dictionary: at most 1 MiB of entries (parquet-java's default dictionary
 *       page) plus its hash table: ≤ 8 MiB in all for a full INT64/DOUBLE dictionary (128Ki
 *       entries), up to ≈ 16 MiB for a full dictionary of short strings (256Ki entries, their
 *       UTF-8 arrays included). The encoder's arrays are reused from column to column.
 *   <li>Pages start on row boundaries: at most {@link BulkPageEncoder#PAGE_ROWS} rows (parquet-java's
 *       page row count limit), and a page of strings also ends once its values reach {@link
 *       #PAGE_BYTES}. Columns are required ({@code _time}, {@code _diff}: no definition levels) or
 *       optional (definition levels, RLE/bit-packing hybrid; v1 pages carry them length-prefixed
 *       before the values, v2 pages apart and uncompressed).
 *   <li>Encodings are those parquet-java's writer picks for {@link BatchFileOptions#pageFormat()}:
 *       a dictionary while it pays, decided as parquet-java decides it (the first page's ids plus
 *       the dictionary must be smaller than the page's plain values; a dictionary past 1 MiB falls
 *       back from the page where it overflows on, the earlier pages keep their ids), else PLAIN
 *       ({@code V1}) or DELTA_BINARY_PACKED for INT64 / DELTA_BYTE_ARRAY for strings ({@code V2},
 *       {@code V1_PAGES_V2_ENCODINGS}); DOUBLE falls back to PLAIN, BOOLEAN is PLAIN ({@code V1})
 *       or RLE and has no dictionary. Page boundaries differ from parquet-java's (which checks
 *       sizes every so many rows), so the bytes are not identical, the sizes are within a few
 *       hundred bytes.
 *   <li>A key or value column whose first {@link #PROBE} non-NULL values in the row group are
 *       all distinct is written without a dictionary (see {@link #uniqueColumns}): parquet-java
 *       would fill a dictionary for it, find it too large (or not paying), and re-encode the same
 *       values with the fallback encoding, ending with the same file. Only a column whose values
 *       are distinct at first and repeat later by pattern (not by chance) loses a dictionary that
 *       would have paid.
 *   <li>Statistics (min, max, NULL count, NaN count) are computed in the loop that gathers a
 *       page's values and given to parquet-java as its own {@code Statistics} objects, fed with
 *       the page's min and max (and each NaN), which leaves them in the state the per-value writer
 *       leaves them in: footers, page headers and column indexes carry the same statistics, and
 *       the size statistics (unencoded BINARY bytes) are the same (checked by {@code
 *       BulkPageEncoderPropertyTest} against the per-value writer).
 *   <li>The file is the same as the record writer's: same schema, same column order, same footer
 *       key/value metadata.
 * </ul>
 */
final class ColumnBatchWriter {
  /** Rows per column loop between page-size checks (the per-value path). */
  static final int CHUNK = 4096;
  /** Data page size threshold (parquet-java's default): a page of strings ends once its values reach it. */
  static final int PAGE_BYTES = 1 << 20;

  private ColumnBatchWriter() {}

  static void write(String arrangement, int shard, Batch batch, OutputStream out, BatchFileOptions o) throws IOException {
    write(arrangement, shard, batch, out, o, 0);
  }

  /**
   * Writes as if {@code start} bytes preceded {@code out}'s first byte (the magic): every offset in
   * the footer counts them. Only tests of files larger than their content use {@code start > 0}.
   */
  static void write(String arrangement, int shard, Batch batch, OutputStream out, BatchFileOptions o, long start)
      throws IOException {
    write(arrangement, shard, batch, out, o, start, hasDate(batch));
  }

  /**
   * Whether a key or value column is a DATE, a NUMERIC or an INTERVAL: Parquet's DATE is INT32, a
   * NUMERIC is a DECIMAL in 16 fixed bytes and an INTERVAL a string of its fields, which {@link
   * BulkPageEncoder} (INT64, DOUBLE, BOOLEAN, BINARY of strings) does not write; such batches take
   * parquet-java's column writers.
   */
  private static boolean hasDate(Batch batch) {
    for (io.cairn.engine.row.Type t : new io.cairn.engine.row.Type[] {io.cairn.engine.row.Type.DATE, io.cairn.engine.row.Type.NUMERIC,
        io.cairn.engine.row.Type.INTERVAL}) {
      if (batch.keySchema().has(t) || batch.valSchema().has(t)) {
        return true;
      }
    }
    return false;
  }

  /**
   * As {@link #write(String, int, Batch, OutputStream, BatchFileOptions, long)}; {@code perValue}
   * encodes through parquet-java's column writers instead of {@link BulkPageEncoder} (the writer
   * the bulk encoder replaced, kept as the tests' reference).
   */
  static void write(String arrangement, int shard, Batch batch, OutputStream out, BatchFileOptions o, long start, boolean perValue)
      throws IOException {
    MessageType schema = ParquetBatchFiles.parquetSchema(batch.keySchema(), batch.valSchema());
    Map<String, String> footer = ParquetBatchFiles.footer(arrangement, shard, batch);
    ParquetProperties props = properties(o);
    ParquetFileWriter file = new ParquetFileWriter(
        new ParquetBatchFiles.StreamOutputFile(out, start), schema, ParquetFileWriter.Mode.OVERWRITE, 128L << 20, 0, null, props);
    file.start();
    int n = batch.size();
    int groups = (int) ((n + (long) o.rowGroupRows() - 1) / o.rowGroupRows());
    ArrayDeque<CompletableFuture<EncodedRowGroup>> inFlight = new ArrayDeque<>();
    RowGroupBudget budget = o.budget();
    int next = 0;
    try {
      for (int g = 0; g < groups; g++) {
        while (next < groups && inFlight.size() < o.rowGroupsInFlight()) {
          if (inFlight.isEmpty()) {
            acquire(budget);
          } else if (!budget.tryAcquire()) {
            break; // the budget is taken by other files: append what this one holds first
          }
          int from = next * o.rowGroupRows();
          int to = (int) Math.min(n, (long) from + o.rowGroupRows());
          try {
            inFlight.add(CompletableFuture.supplyAsync(
                () -> perValue ? encodePerValue(batch, schema, props, o, from, to) : encode(batch, schema, o, from, to), o.executor()));
          } catch (RuntimeException | Error e) {
            budget.release();
            throw e;
          }
          next++;
        }
        CompletableFuture<EncodedRowGroup> head = inFlight.poll();
        EncodedRowGroup rg = null;
        try {
          rg = join(head);
          file.startBlock(rg.rows());
          rg.pages().flushToFileWriter(file);
          file.endBlock();
        } finally {
          if (rg != null) {
            rg.pages().close();
          }
          budget.release();
        }
      }
    } catch (IOException | RuntimeException | Error e) {
      for (CompletableFuture<EncodedRowGroup> f : inFlight) {
        f.cancel(false); // an encoding already running finishes; its heap buffers are garbage
        budget.release();
      }
      throw e;
    }
    file.end(footer);
  }

  private static void acquire(RowGroupBudget budget) throws IOException {
    try {
      budget.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while waiting for a row group to encode");
    }
  }

  private static EncodedRowGroup join(CompletableFuture<EncodedRowGroup> f) throws IOException {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while encoding a row group", e);
    } catch (ExecutionException | CompletionException e) {
      Throwable c = e.getCause();
      if (c instanceof UncheckedIOException u) {
        throw u.getCause();
      }
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IOException(c);
    } catch (CancellationException e) {
      throw new IOException("row group encoding was cancelled", e);
    }
  }

  /**
   * The writer properties of {@code o}. Built from a fresh builder each time: a builder made with
   * {@code ParquetProperties.copy} shares the source's values-writer factory, which {@code build()}
   * re-initialises, so copies would change the encodings of properties in use on other threads.
   */
  static ParquetProperties properties(BatchFileOptions o) {
    return properties(o, List.of());
  }

  /** As {@link #properties(BatchFileOptions)}, without dictionary encoding for the columns named. */
  static ParquetProperties properties(BatchFileOptions o, List<String> noDictionary) {
    ParquetProperties.Builder b = ParquetProperties.builder();
    for (String c : noDictionary) {
      b.withDictionaryEncoding(c, false);
    }
    return b
        .withWriterVersion(o.pageFormat() == BatchFileOptions.PageFormat.V1
            ? ParquetProperties.WriterVersion.PARQUET_1_0
            : ParquetProperties.WriterVersion.PARQUET_2_0)
        .withPageSize(PAGE_BYTES)
        .withDictionaryEncoding(true)
        .withStatisticsEnabled(true)
        .withPageWriteChecksumEnabled(true)
        .withAllocator(new HeapByteBufferAllocator())
        .build();
  }

  /** The compressed pages of one row group, ready to append. */
  record EncodedRowGroup(int rows, ColumnChunkPageWriteStore pages) {}

  /** Encodes rows {@code [from, to)} of {@code batch} as one row group, page by page in bulk ({@link BulkPageEncoder}). */
  static EncodedRowGroup encode(Batch batch, MessageType schema, BatchFileOptions o, int from, int to) {
    List<String> unique = uniqueColumns(batch, schema, from, to);
    ZstdPageCompressor compressor = new ZstdPageCompressor(o.zstdLevel());
    ColumnChunkPageWriteStore pages = new ColumnChunkPageWriteStore(
        compressor, schema, new HeapByteBufferAllocator(), ParquetProperties.DEFAULT_COLUMN_INDEX_TRUNCATE_LENGTH, true);
    boolean done = false;
    try {
      BulkPageEncoder enc = new BulkPageEncoder(
          o.pageFormat() == BatchFileOptions.PageFormat.V2, o.pageFormat() != BatchFileOptions.PageFormat.V1);
      List<ColumnDescriptor> descriptors = schema.getColumns();
      int k = batch.keySchema().size();
      int v = batch.valSchema().size();
      for (int c = 0; c < k + v; c++) {
        ColumnDescriptor d = descriptors.get(c);
        PageWriter pw = pages.getPageWriter(d);
        boolean dictionary = !unique.contains(d.getPath()[0]);
        ColumnVector col = c < k ? batch.keyColumn(c) : batch.valColumn(c - k);
        if (col instanceof ColumnVector.Longs l) {
          enc.writeLongs(pw, d, l, false, from, to, dictionary);
        } else if (col instanceof ColumnVector.Doubles dc) {
          enc.writeDoubles(pw, d, dc, from, to, dictionary);
        } else if (col instanceof ColumnVector.Booleans b) {
          enc.writeBooleans(pw, d, b, from, to);
        } else {
          enc.writeStrings(pw, d, col, from, to, dictionary);
        }
      }
      ColumnVector.Longs times = batch.timesOrNull();
      ColumnVector.Longs diffs = batch.diffsOrNull();
      // a constant column is not stored in the batch: its pages are made from the one value
      ColumnDescriptor timeColumn = descriptors.get(k + v);
      ColumnDescriptor diffColumn = descriptors.get(k + v + 1);
      if (times != null) {
        enc.writeLongs(pages.getPageWriter(timeColumn), timeColumn, times, true, from, to, true);
      } else {
        enc.writeConstantLongs(pages.getPageWriter(timeColumn), timeColumn, batch.constantTime(), to - from);
      }
      if (diffs != null) {
        enc.writeLongs(pages.getPageWriter(diffColumn), diffColumn, diffs, true, from, to, true);
      } else {
        enc.writeConstantLongs(pages.getPageWriter(diffColumn), diffColumn, batch.constantDiff(), to - from);
      }
      done = true;
      return new EncodedRowGroup(to - from, pages);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      compressor.release();
      if (!done) {
        pages.close();
      }
    }
  }

  /** Encodes rows {@code [from, to)} of {@code batch} as one row group through parquet-java's column writers, value by value. */
  static EncodedRowGroup encodePerValue(
      Batch batch, MessageType schema, ParquetProperties fileProps, BatchFileOptions o, int from, int to) {
    List<String> unique = uniqueColumns(batch, schema, from, to);
    ParquetProperties props = unique.isEmpty() ? fileProps : properties(o, unique);
    ZstdPageCompressor compressor = new ZstdPageCompressor(o.zstdLevel());
    ColumnChunkPageWriteStore pages = new ColumnChunkPageWriteStore(
        compressor, schema, props.getAllocator(), props.getColumnIndexTruncateLength(), props.getPageWriteChecksumEnabled());
    ColumnWriteStore store = o.pageFormat() == BatchFileOptions.PageFormat.V2
        ? new ColumnWriteStoreV2(schema, pages, props)
        : new ColumnWriteStoreV1(schema, pages, props);
    boolean done = false;
    try {
      List<ColumnDescriptor> descriptors = schema.getColumns();
      int k = batch.keySchema().size();
      int v = batch.valSchema().size();
      ColumnWriter[] writers = new ColumnWriter[descriptors.size()];
      for (int c = 0; c < writers.length; c++) {
        writers[c] = store.getColumnWriter(descriptors.get(c));
      }
      for (int s = from; s < to; s += CHUNK) {
        int e = Math.min(to, s + CHUNK);
        for (int c = 0; c < k + v; c++) {
          writeColumn(writers[c], c < k ? batch.keyColumn(c) : batch.valColumn(c - k), s, e);
        }
        for (int i = s; i < e; i++) {
          writers[k + v].write(batch.time(i), 0, 0);
        }
        for (int i = s; i < e; i++) {
          writers[k + v + 1].write(batch.diff(i), 0, 0);
        }
        for (int i = s; i < e; i++) {
          store.endRecord();
        }
      }
      store.flush();
      store.close();
      done = true;
      return new EncodedRowGroup(to - from, pages);
    } finally {
      compressor.release();
      if (!done) {
        pages.close();
      }
    }
  }

  /** Values looked at per column and row group to decide whether a dictionary can pay. */
  static final int PROBE = 4096;

  /**
   * The key and value columns whose first {@link #PROBE} non-NULL values in rows {@code [from,
   * to)} are all distinct. parquet-java would try a dictionary on such a column until the
   * dictionary outgrows its page (1 MiB: 128Ki INT64 values) or the first page shows it does not
   * pay, then re-encode those values with the fallback encoding. No repeat among 4,096 values
   * drawn at random from D distinct ones is all but impossible unless D is far above that limit
   * (about 4096²/2D repeats are expected: 64 at 128Ki), so these columns are written with the
   * fallback encoding from the start: the encoding parquet-java would end with, without the
   * wasted attempt (measured on the random rows of {@code io.cairn.benchmarks.snapshot.S3WriteThroughputBenchmark}: the same
   * bytes). Booleans have no dictionary and are not probed.
   */
  static List<String> uniqueColumns(Batch batch, MessageType schema, int from, int to) {
    int k = batch.keySchema().size();
    int v = batch.valSchema().size();
    List<String> out = new java.util.ArrayList<>();
    for (int c = 0; c < k + v; c++) {
      ColumnVector col = c < k ? batch.keyColumn(c) : batch.valColumn(c - k);
      if (col instanceof ColumnVector.Booleans) {
        continue;
      }
      if (allDistinct(col, from, to)) {
        out.add(schema.getColumns().get(c).getPath()[0]);
      }
    }
    return out;
  }

  private static boolean allDistinct(ColumnVector col, int from, int to) {
    if (col instanceof ColumnVector.Longs || col instanceof ColumnVector.Doubles) {
      long[] table = new long[PROBE * 2];
      boolean[] used = new boolean[PROBE * 2];
      int mask = table.length - 1;
      int seen = 0;
      for (int i = from; i < to && seen < PROBE; i++) {
        if (col.isNull(i)) {
          continue;
        }
        long x = col instanceof ColumnVector.Longs l ? l.getLong(i) : Double.doubleToRawLongBits(((ColumnVector.Doubles) col).getDouble(i));
        int h = (int) (x * 0x9E3779B97F4A7C15L >>> 40) & mask;
        while (used[h]) {
          if (table[h] == x) {
            return false;
          }
          h = (h + 1) & mask;
        }
        used[h] = true;
        table[h] = x;
        seen++;
      }
      return seen == PROBE;
    }
    java.util.HashSet<Object> set = new java.util.HashSet<>(PROBE * 2);
    for (int i = from; i < to && set.size() < PROBE; i++) {
      Object x = col.get(i);
      if (x != null && !set.add(x)) {
        return false;
      }
    }
    return set.size() == PROBE;
  }

  /** Writes rows {@code [from, to)} of an optional column: definition level 1 for a value, 0 for NULL. */
  private static void writeColumn(ColumnWriter w, ColumnVector col, int from, int to) {
    if (col instanceof ColumnVector.Longs l && l.type() == io.cairn.engine.row.Type.DATE) { // INT32 days
      for (int i = from; i < to; i++) {
        if (l.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(Math.toIntExact(l.getLong(i)), 0, 1);
        }
      }
    } else if (col instanceof ColumnVector.Longs l) {
      for (int i = from; i < to; i++) {
        if (l.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(l.getLong(i), 0, 1);
        }
      }
    } else if (col instanceof ColumnVector.Doubles d) {
      for (int i = from; i < to; i++) {
        if (d.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(d.getDouble(i), 0, 1);
        }
      }
    } else if (col instanceof ColumnVector.Values n && n.type() == io.cairn.engine.row.Type.INTERVAL) { // its fields as text
      for (int i = from; i < to; i++) {
        if (n.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(Binary.fromString(((io.cairn.engine.row.Interval) n.get(i)).storageText()), 0, 1);
        }
      }
    } else if (col instanceof ColumnVector.Values n) {
      for (int i = from; i < to; i++) {
        if (n.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(org.apache.parquet.io.api.Binary.fromConstantByteArray(ParquetBatchFiles.numericBytes((java.math.BigDecimal) n.get(i))), 0, 1);
        }
      }
    } else if (col instanceof ColumnVector.Booleans b) {
      for (int i = from; i < to; i++) {
        if (b.isNull(i)) {
          w.writeNull(0, 0);
        } else {
          w.write(b.getBoolean(i), 0, 1);
        }
      }
    } else {
      for (int i = from; i < to; i++) {
        Object s = col.get(i);
        if (s == null) {
          w.writeNull(0, 0);
        } else {
          w.write(Binary.fromString((String) s), 0, 1);
        }
      }
    }
  }
}
