package io.cairn.snapshotter.format;

import io.cairn.engine.trace.ColumnVector;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageWriter;
import org.apache.parquet.column.statistics.SizeStatistics;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.column.statistics.geospatial.GeospatialStatistics;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.PrimitiveType;

/**
 * Encodes one row group's column chunks page by page, in bulk, and hands the pages to
 * parquet-java's {@link PageWriter} (which compresses them, checksums them and builds the
 * column and offset indexes from the statistics given): no {@code ColumnWriter}, no per-value
 * calls, no {@link Binary} per value.
 *
 * <p>Per page (at most {@link #PAGE_ROWS} rows, and a page of strings also ends once its values
 * reach {@link ColumnBatchWriter#PAGE_BYTES}; pages start on row boundaries): one loop over the
 * rows gathers the non-NULL values, the definition levels and the statistics (min, max, NULL
 * count, NaN count as parquet-java counts them), then the values are encoded at once:
 *
 * <ul>
 *   <li>definition levels (optional columns only) with the RLE/bit-packing hybrid: a page without
 *       NULLs or with only NULLs is one run;
 *   <li>values with the encoding parquet-java's writer picks for the writer version: a dictionary
 *       while it pays (same rule as parquet-java's {@code FallbackValuesWriter}: the first page
 *       decides whether the dictionary pays, a dictionary over 1 MiB falls back from the page
 *       where it overflows on), else PLAIN ({@code PARQUET_1_0}) or DELTA_BINARY_PACKED /
 *       DELTA_BYTE_ARRAY ({@code PARQUET_2_0}); DOUBLE falls back to PLAIN in both; BOOLEAN is
 *       PLAIN ({@code PARQUET_1_0}) or RLE ({@code PARQUET_2_0}) and never has a dictionary.
 * </ul>
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>One call, one column chunk: each {@code write*} call encodes rows {@code [from, to)} of
 *       one column, hands its data pages to the {@link PageWriter} in row order and then, when a
 *       dictionary was used, the dictionary page. The dictionary is cleared at the start of the
 *       call: nothing carries over from one column or row group to the next but reused memory.
 *   <li>Same file content as parquet-java's per-value writer: the same values under the same
 *       encodings, and statistics given to parquet-java as its own {@code Statistics} objects,
 *       fed so that they end in the state the per-value writer leaves them in (so footers, page
 *       headers and column indexes agree). Page boundaries may differ, so bytes are not
 *       identical. {@code BulkPageEncoderPropertyTest} checks this against the per-value writer;
 *       the file-level invariants are {@link ColumnBatchWriter}'s.
 *   <li>Thread confinement: one instance per row group being encoded, used by one thread; its
 *       scratch arrays and buffers are reused from page to page and column to column.
 *   <li>Failure: an {@link IOException} from the page writer is thrown as is, leaving that
 *       writer with part of the column chunk; the caller discards the whole row group (its page
 *       store is closed, nothing of it is appended to the file).
 * </ul>
 */
final class BulkPageEncoder {
  /**
   * Rows per page at most: the pages of parquet-java's per-value writer as {@link ColumnBatchWriter}
   * drove it (its 20,000-row page limit checked every 4,096 rows), so that a dictionary overflows
   * in the same page as before and the files keep their size.
   */
  static final int PAGE_ROWS = 5 * 4096;
  /** parquet-java's default dictionary page size: a larger dictionary falls back. */
  static final int DICTIONARY_BYTES = 1 << 20;

  private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  private final boolean v2Pages;
  private final boolean v2Encodings;
  private final Buf values = new Buf(1 << 16);
  private final Buf levels = new Buf(1 << 10);
  private final Buf pageBytes = new Buf(1 << 16);
  private final int[] defs = new int[PAGE_ROWS];
  private final int[] ints = new int[PAGE_ROWS];
  private final long[] longs = new long[PAGE_ROWS];
  private final long[] longs2 = new long[PAGE_ROWS];
  private final long[] block = new long[128];
  private final byte[][] bytes = new byte[PAGE_ROWS][];
  private final String[] strings = new String[PAGE_ROWS];
  private static final int HASH_BLOCK = 256;
  /** A page of dictionary ids 0: the ids of a constant column. */
  private static final int[] ZERO_IDS = new int[PAGE_ROWS];
  private final int[] hashBlock = new int[HASH_BLOCK];
  private final int[] rowOfValue = new int[PAGE_ROWS];
  private LongDictionary longDictionary;
  private StringDictionary stringDictionary;

  /**
   * @param v2Pages v2 data page headers (levels stored apart from the compressed values)
   * @param v2Encodings {@code PARQUET_2_0}'s encodings, else {@code PARQUET_1_0}'s
   */
  BulkPageEncoder(boolean v2Pages, boolean v2Encodings) {
    this.v2Pages = v2Pages;
    this.v2Encodings = v2Encodings;
  }

  private enum Mode { DICTIONARY, FALLBACK }

  // ------------------------------------------------------------------ INT64 and DOUBLE

  /**
   * Writes rows {@code [from, to)} of an INT64 column, optional (definition levels, NULLs from
   * {@code col}) or {@code required}.
   */
  void writeLongs(PageWriter pw, ColumnDescriptor d, ColumnVector.Longs col, boolean required, int from, int to, boolean dictionary)
      throws IOException {
    writeEightBytes(pw, d, col, null, required, from, to, dictionary);
  }

  /**
   * Writes {@code rows} copies of {@code value} as a required INT64 column with a dictionary (a
   * batch's constant {@code _time} or {@code _diff}, which the batch does not store): the same pages
   * as {@link #writeLongs} over such a column (a dictionary of one entry, every page one run of id
   * 0), made without a pass over the rows.
   */
  void writeConstantLongs(PageWriter pw, ColumnDescriptor d, long value, int rows) throws IOException {
    for (int s = 0; s < rows; s += PAGE_ROWS) {
      int n = Math.min(PAGE_ROWS, rows - s);
      values.reset();
      values.put((byte) 0); // ids of a one-entry dictionary take 0 bits
      rle(ZERO_IDS, n, 0, values);
      if (s == 0 && !((long) values.size + 8 < 8L * n)) { // the first page decides, as in writeEightBytes: the dictionary does not pay
        long[] a = new long[rows];
        Arrays.fill(a, value);
        writeLongs(pw, d, new ColumnVector.Longs(io.cairn.engine.row.Type.BIGINT, a, null, rows), true, 0, rows, true);
        return;
      }
      Statistics<?> stats = Statistics.createStats(d.getPrimitiveType());
      stats.updateStats(value);
      stats.updateStats(value);
      stats.incrementNumNulls(0);
      writePage(pw, d, false, n, 0, stats, 0, dictionaryDataEncoding());
    }
    if (rows == 0) {
      return; // no pages, no dictionary (as writeLongs over no rows)
    }
    byte[] entry = new byte[8];
    LONG_LE.set(entry, 0, value);
    pw.writeDictionaryPage(new DictionaryPage(BytesInput.from(entry), 1, dictionaryPageEncoding()));
  }

  void writeDoubles(PageWriter pw, ColumnDescriptor d, ColumnVector.Doubles col, int from, int to, boolean dictionary)
      throws IOException {
    writeEightBytes(pw, d, null, col, false, from, to, dictionary);
  }

  private void writeEightBytes(PageWriter pw, ColumnDescriptor d, ColumnVector.Longs lc, ColumnVector.Doubles dc, boolean required,
      int from, int to, boolean dictionary) throws IOException {
    boolean isDouble = dc != null;
    boolean optional = !required;
    Encoding fallback = !isDouble && v2Encodings ? Encoding.DELTA_BINARY_PACKED : Encoding.PLAIN;
    Mode mode = dictionary ? Mode.DICTIONARY : Mode.FALLBACK;
    LongDictionary dict = null;
    if (dictionary) {
      if (longDictionary == null) {
        longDictionary = new LongDictionary();
      }
      dict = longDictionary;
      dict.clear();
    }
    boolean dictionaryUsed = false;
    boolean firstPage = true;
    long[] v = longs;
    int[] df = defs;
    for (int s = from; s < to; ) {
      int e = Math.min(to, s + PAGE_ROWS);
      int rows = e - s;
      int n = 0;
      int nulls = 0;
      Statistics<?> stats = Statistics.createStats(d.getPrimitiveType());
      if (isDouble) {
        // min and max in Double.compare's order (-0.0 below 0.0), as sortable longs; NaNs apart
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        int nans = 0;
        for (int i = s; i < e; i++) {
          if (dc.isNull(i)) {
            df[i - s] = 0;
            nulls++;
          } else {
            df[i - s] = 1;
            double x = dc.getDouble(i);
            long bits = Double.doubleToRawLongBits(x);
            v[n++] = bits;
            if (x != x) {
              nans++;
            } else {
              long key = bits ^ ((bits >> 63) & Long.MAX_VALUE);
              min = Math.min(min, key);
              max = Math.max(max, key);
            }
          }
        }
        if (n - nans > 0) {
          // parquet-java's statistics keep a min and a max under an order that agrees with Double.compare on non-NaN values
          stats.updateStats(Double.longBitsToDouble(min ^ ((min >> 63) & Long.MAX_VALUE)));
          stats.updateStats(Double.longBitsToDouble(max ^ ((max >> 63) & Long.MAX_VALUE)));
        }
        if (nans > 0) {
          // NaNs are rare: each goes to the statistics as parquet-java's writer sends it (they count it and may keep it as min/max)
          for (int k = 0; k < n; k++) {
            double x = Double.longBitsToDouble(v[k]);
            if (x != x) {
              stats.updateStats(x);
            }
          }
        }
      } else {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        if (optional && lc.hasNullIn(s, e)) {
          for (int i = s; i < e; i++) {
            if (lc.isNull(i)) {
              df[i - s] = 0;
              nulls++;
            } else {
              df[i - s] = 1;
              long x = lc.getLong(i);
              v[n++] = x;
              min = Math.min(min, x);
              max = Math.max(max, x);
            }
          }
        } else { // no NULL in the page: no definition levels to gather (the page's levels are one run)
          lc.copyTo(s, e, v, 0);
          n = rows;
          for (int k = 0; k < n; k++) {
            long x = v[k];
            min = Math.min(min, x);
            max = Math.max(max, x);
          }
        }
        if (n > 0) {
          stats.updateStats(min);
          stats.updateStats(max);
        }
      }
      stats.incrementNumNulls(nulls);

      values.reset();
      Encoding encoding = fallback;
      if (mode == Mode.DICTIONARY) {
        int before = dict.size();
        boolean overflow = false;
        int[] ids = ints;
        long last = 0;
        int lastId = -1;
        for (int k = 0; k < n; k++) {
          long x = v[k];
          if (x == last && lastId >= 0) { // a run (a constant column, repeated values) needs no lookup
            ids[k] = lastId;
            continue;
          }
          lastId = dict.add(x);
          last = x;
          ids[k] = lastId;
          if (dict.bytes() > DICTIONARY_BYTES) {
            overflow = true;
            break;
          }
        }
        if (overflow) {
          dict.truncate(before);
          mode = Mode.FALLBACK;
        } else {
          int width = widthOf(dict.size() - 1);
          values.put((byte) width);
          rle(ids, n, width, values);
          if (firstPage && !((long) values.size + dict.bytes() < 8L * n)) {
            mode = Mode.FALLBACK; // the first page decides: the dictionary does not pay
          } else {
            dictionaryUsed = true;
            encoding = dictionaryDataEncoding();
          }
        }
        if (mode == Mode.FALLBACK) {
          values.reset();
        }
      }
      if (mode == Mode.FALLBACK) {
        if (fallback == Encoding.DELTA_BINARY_PACKED) {
          deltaBinaryPacked(v, n, values);
        } else {
          values.ensure(8 * n);
          byte[] b = values.buf;
          int p = values.size;
          for (int k = 0; k < n; k++, p += 8) {
            LONG_LE.set(b, p, v[k]);
          }
          values.size = p;
        }
      }
      writePage(pw, d, optional, rows, nulls, stats, 0, encoding);
      firstPage = false;
      s = e;
    }
    if (dictionaryUsed) {
      Buf page = new Buf(8 * dict.size());
      long[] keys = dict.keys;
      page.ensure(8 * dict.size());
      for (int k = 0; k < dict.size(); k++) {
        LONG_LE.set(page.buf, page.size, keys[k]);
        page.size += 8;
      }
      pw.writeDictionaryPage(new DictionaryPage(BytesInput.from(page.buf, 0, page.size), dict.size(), dictionaryPageEncoding()));
    }
  }

  // ------------------------------------------------------------------ BINARY (UTF-8 strings)

  /** Writes rows {@code [from, to)} of an optional string column. */
  void writeStrings(PageWriter pw, ColumnDescriptor d, ColumnVector col, int from, int to, boolean dictionary) throws IOException {
    Encoding fallback = v2Encodings ? Encoding.DELTA_BYTE_ARRAY : Encoding.PLAIN;
    Mode mode = dictionary ? Mode.DICTIONARY : Mode.FALLBACK;
    StringDictionary dict = null;
    if (dictionary) {
      if (stringDictionary == null) {
        stringDictionary = new StringDictionary();
      }
      dict = stringDictionary;
      dict.clear();
    }
    boolean dictionaryUsed = false;
    boolean firstPage = true;
    int[] df = defs;
    String[] strs = strings;
    byte[][] bs = bytes;
    for (int s = from; s < to; ) {
      int limit = Math.min(to, s + PAGE_ROWS);
      int n = 0;
      int nulls = 0;
      long raw = 0; // bytes of the values, as parquet-java counts a page's size: 4 + length each
      int i = s;
      byte[] min = null;
      byte[] max = null;
      if (mode == Mode.DICTIONARY) {
        // the strings are not looked at here: the dictionary loop reads them block by block (and cuts the page at PAGE_BYTES)
        int[] rowOf = rowOfValue;
        for (; i < limit; i++) {
          String x = (String) col.get(i);
          if (x == null) {
            df[i - s] = 0;
            nulls++;
          } else {
            df[i - s] = 1;
            rowOf[n] = i - s;
            strs[n++] = x;
          }
        }
      } else {
        for (; i < limit && raw < ColumnBatchWriter.PAGE_BYTES; i++) {
          String x = (String) col.get(i);
          if (x == null) {
            df[i - s] = 0;
            nulls++;
          } else {
            df[i - s] = 1;
            byte[] b = x.getBytes(StandardCharsets.UTF_8);
            bs[n++] = b;
            raw += 4 + b.length;
            if (min == null) {
              min = b;
              max = b;
            } else if (Arrays.compareUnsigned(b, min) < 0) {
              min = b;
            } else if (Arrays.compareUnsigned(b, max) > 0) {
              max = b;
            }
          }
        }
      }
      int e = i;
      int rows = e - s;
      values.reset();
      Encoding encoding = fallback;
      long unencoded = 0;
      if (mode == Mode.DICTIONARY) {
        int before = dict.size();
        boolean overflow = false;
        int[] ids = ints;
        int stamp = dict.newPage();
        int[] hashes = hashBlock;
        int gathered = n;
        int scanned = 0; // values whose length is in raw (the length in chars stands for the length in bytes)
        for (int k = 0; k < n; k++) {
          if ((k & (HASH_BLOCK - 1)) == 0) {
            // the block's strings first, in a loop without data-dependent branches: their cache misses overlap
            for (int j = k, end = Math.min(n, k + HASH_BLOCK); j < end; j++) {
              String x = strs[j];
              hashes[j - k] = x.hashCode();
              raw += 4 + x.length();
              if (raw >= ColumnBatchWriter.PAGE_BYTES) {
                n = j + 1; // the page ends with this value
                break;
              }
            }
            scanned = Math.min(n, k + HASH_BLOCK);
          }
          int id = dict.add(strs[k], hashes[k & (HASH_BLOCK - 1)]);
          ids[k] = id;
          if (dict.bytes() > DICTIONARY_BYTES) {
            overflow = true;
            break;
          }
          byte[] b = dict.entries[id];
          unencoded += b.length;
          if (dict.marks[id] != stamp) {
            dict.marks[id] = stamp;
            if (min == null) {
              min = b;
              max = b;
            } else if (Arrays.compareUnsigned(b, min) < 0) {
              min = b;
            } else if (Arrays.compareUnsigned(b, max) > 0) {
              max = b;
            }
          }
        }
        if (overflow) {
          // the page's values past the block being looked up still count towards its size
          for (int j = scanned; j < n; j++) {
            raw += 4 + strs[j].length();
            if (raw >= ColumnBatchWriter.PAGE_BYTES) {
              n = j + 1;
              break;
            }
          }
        }
        if (n < gathered) {
          rows = rowOfValue[n - 1] + 1;
          e = s + rows;
          nulls = rows - n;
          Arrays.fill(strs, n, gathered, null);
        }
        if (overflow) {
          dict.truncate(before);
          mode = Mode.FALLBACK;
        } else {
          int width = widthOf(dict.size() - 1);
          values.put((byte) width);
          rle(ids, n, width, values);
          if (firstPage && !((long) values.size + dict.bytes() < 4L * n + unencoded)) {
            mode = Mode.FALLBACK;
          } else {
            dictionaryUsed = true;
            encoding = dictionaryDataEncoding();
          }
        }
        if (mode == Mode.FALLBACK) {
          // re-encode the page's values as the fallback encoding: their UTF-8 bytes and statistics afresh
          values.reset();
          min = null;
          max = null;
          for (int k = 0; k < n; k++) {
            byte[] b = strs[k].getBytes(StandardCharsets.UTF_8);
            bs[k] = b;
            if (min == null) {
              min = b;
              max = b;
            } else if (Arrays.compareUnsigned(b, min) < 0) {
              min = b;
            } else if (Arrays.compareUnsigned(b, max) > 0) {
              max = b;
            }
          }
        }
        Arrays.fill(strs, 0, n, null);
      }
      if (mode == Mode.FALLBACK) {
        unencoded = 0;
        if (fallback == Encoding.DELTA_BYTE_ARRAY) {
          long[] prefixes = longs;
          long[] suffixes = longs2;
          byte[] prev = EMPTY;
          for (int k = 0; k < n; k++) {
            byte[] b = bs[k];
            int m = Arrays.mismatch(prev, b);
            int p = m < 0 ? b.length : m;
            prefixes[k] = p;
            suffixes[k] = b.length - p;
            unencoded += b.length;
            prev = b;
          }
          deltaBinaryPacked(prefixes, n, values);
          deltaBinaryPacked(suffixes, n, values);
          for (int k = 0; k < n; k++) {
            byte[] b = bs[k];
            int p = (int) prefixes[k];
            values.put(b, p, b.length - p);
          }
        } else {
          for (int k = 0; k < n; k++) {
            byte[] b = bs[k];
            values.ensure(4 + b.length);
            INT_LE.set(values.buf, values.size, b.length);
            values.size += 4;
            values.put(b, 0, b.length);
            unencoded += b.length;
          }
        }
        Arrays.fill(bs, 0, n, null);
      }
      Statistics<?> stats = Statistics.createStats(d.getPrimitiveType());
      if (min != null) {
        stats.updateStats(Binary.fromConstantByteArray(min));
        stats.updateStats(Binary.fromConstantByteArray(max));
      }
      stats.incrementNumNulls(nulls);
      writePage(pw, d, true, rows, nulls, stats, unencoded, encoding);
      firstPage = false;
      s = e;
    }
    if (dictionaryUsed) {
      Buf page = new Buf(Math.max(16, (int) dict.bytes()));
      for (int k = 0; k < dict.size(); k++) {
        byte[] b = dict.entries[k];
        page.ensure(4 + b.length);
        INT_LE.set(page.buf, page.size, b.length);
        page.size += 4;
        page.put(b, 0, b.length);
      }
      pw.writeDictionaryPage(new DictionaryPage(BytesInput.from(page.buf, 0, page.size), dict.size(), dictionaryPageEncoding()));
    }
  }

  private static final byte[] EMPTY = new byte[0];

  // ------------------------------------------------------------------ BOOLEAN

  /** Writes rows {@code [from, to)} of an optional boolean column (no dictionary, as parquet-java). */
  void writeBooleans(PageWriter pw, ColumnDescriptor d, ColumnVector.Booleans col, int from, int to) throws IOException {
    int[] df = defs;
    int[] v = ints;
    for (int s = from; s < to; ) {
      int e = Math.min(to, s + PAGE_ROWS);
      int n = 0;
      int nulls = 0;
      boolean anyFalse = false;
      boolean anyTrue = false;
      for (int i = s; i < e; i++) {
        if (col.isNull(i)) {
          df[i - s] = 0;
          nulls++;
        } else {
          df[i - s] = 1;
          boolean x = col.getBoolean(i);
          v[n++] = x ? 1 : 0;
          anyTrue |= x;
          anyFalse |= !x;
        }
      }
      Statistics<?> stats = Statistics.createStats(d.getPrimitiveType());
      if (n > 0) {
        stats.updateStats(!anyFalse);
        stats.updateStats(anyTrue);
      }
      stats.incrementNumNulls(nulls);
      values.reset();
      Encoding encoding;
      if (v2Encodings) {
        // RLE with its length first, as parquet-java's RunLengthBitPackingHybridValuesWriter writes it
        values.ensure(4);
        values.size = 4;
        rle(v, n, 1, values);
        INT_LE.set(values.buf, 0, values.size - 4);
        encoding = Encoding.RLE;
      } else {
        int nb = (n + 7) >>> 3;
        values.ensure(nb);
        byte[] b = values.buf;
        Arrays.fill(b, 0, nb, (byte) 0);
        for (int k = 0; k < n; k++) {
          b[k >>> 3] |= (byte) (v[k] << (k & 7));
        }
        values.size = nb;
        encoding = Encoding.PLAIN;
      }
      writePage(pw, d, true, e - s, nulls, stats, 0, encoding);
      s = e;
    }
  }

  // ------------------------------------------------------------------ pages

  private Encoding dictionaryDataEncoding() {
    return v2Encodings ? Encoding.RLE_DICTIONARY : Encoding.PLAIN_DICTIONARY;
  }

  private Encoding dictionaryPageEncoding() {
    return v2Encodings ? Encoding.PLAIN : Encoding.PLAIN_DICTIONARY;
  }

  /** Writes the page whose values are in {@link #values} and whose definition levels are the first {@code rows} of {@link #defs}. */
  private void writePage(PageWriter pw, ColumnDescriptor d, boolean optional, int rows, int nulls, Statistics<?> stats,
      long unencodedBytes, Encoding encoding) throws IOException {
    PrimitiveType type = d.getPrimitiveType();
    SizeStatistics size = new SizeStatistics(type, unencodedBytes, new ArrayList<>(), new ArrayList<>());
    GeospatialStatistics geo = GeospatialStatistics.noopBuilder().build();
    levels.reset();
    if (optional) {
      if (!v2Pages) {
        levels.ensure(4);
        levels.size = 4;
      }
      if (nulls == 0 || nulls == rows) {
        levels.varint(rows << 1);
        levels.put((byte) (nulls == 0 ? 1 : 0));
      } else {
        rle(defs, rows, 1, levels);
      }
      if (!v2Pages) {
        INT_LE.set(levels.buf, 0, levels.size - 4);
      }
    }
    if (v2Pages) {
      BytesInput dl = optional ? BytesInput.from(Arrays.copyOf(levels.buf, levels.size)) : BytesInput.empty();
      pw.writePageV2(rows, nulls, rows, BytesInput.empty(), dl, encoding, BytesInput.from(values.buf, 0, values.size), stats, size, geo);
    } else {
      BytesInput page;
      if (optional) { // levels then values in one reused array, which the compressor reads in place
        pageBytes.reset();
        pageBytes.put(levels.buf, 0, levels.size);
        pageBytes.put(values.buf, 0, values.size);
        page = BytesInput.from(pageBytes.buf, 0, pageBytes.size);
      } else {
        page = BytesInput.from(values.buf, 0, values.size);
      }
      pw.writePage(page, rows, rows, stats, size, geo, Encoding.BIT_PACKED, optional ? Encoding.RLE : Encoding.BIT_PACKED, encoding);
    }
  }

  // ------------------------------------------------------------------ encodings

  /** Bits to store values in {@code [0, max]} (parquet-java's {@code BytesUtils.getWidthFromMaxInt}). */
  static int widthOf(int max) {
    return 32 - Integer.numberOfLeadingZeros(max);
  }

  /**
   * Appends {@code v[0, n)} (each in {@code [0, 2^width)}) in the RLE/bit-packing hybrid without
   * a length: a run of 8 or more equal values is an RLE run, anything else is bit-packed 8 at a
   * time (at most 63 groups per run, as parquet-java writes them); the last group is padded with
   * zeros.
   */
  static void rle(int[] v, int n, int width, Buf out) {
    int valueBytes = (width + 7) >>> 3;
    int i = 0;
    int bpStart = 0;
    int groups = 0;
    while (i < n) {
      int x = v[i];
      int j = i + 1;
      while (j < n && v[j] == x) {
        j++;
      }
      if (j - i >= 8) {
        if (groups > 0) {
          bitPacked(v, bpStart, groups, n, width, out);
          groups = 0;
        }
        out.varint((long) (j - i) << 1);
        out.ensure(4);
        for (int b = 0; b < valueBytes; b++) {
          out.buf[out.size++] = (byte) (x >>> (8 * b));
        }
        i = j;
      } else {
        if (groups == 0) {
          bpStart = i;
        }
        groups++;
        i += 8;
        if (groups == 63) {
          bitPacked(v, bpStart, groups, n, width, out);
          groups = 0;
        }
      }
    }
    if (groups > 0) {
      bitPacked(v, bpStart, groups, n, width, out);
    }
  }

  private static void bitPacked(int[] v, int start, int groups, int n, int width, Buf out) {
    out.varint(((long) groups << 1) | 1);
    out.ensure(groups * width + 8);
    byte[] b = out.buf;
    int p = out.size;
    int end = start + groups * 8;
    int full = Math.min(end, start + ((n - start) & ~7)); // groups with 8 values, then at most one padded group
    if (width <= 8) {
      int idx = start;
      for (; idx < full; idx += 8) {
        long acc = (v[idx] & 0xFFL) | (v[idx + 1] & 0xFFL) << width | (v[idx + 2] & 0xFFL) << 2 * width
            | (v[idx + 3] & 0xFFL) << 3 * width | (v[idx + 4] & 0xFFL) << 4 * width | (v[idx + 5] & 0xFFL) << 5 * width
            | (v[idx + 6] & 0xFFL) << 6 * width | (v[idx + 7] & 0xFFL) << 7 * width;
        LONG_LE.set(b, p, acc); // 8 bytes written, width kept (ensure left room for the overshoot)
        p += width;
      }
      if (idx < end) {
        long acc = 0;
        for (int k = 0; idx + k < n; k++) {
          acc |= (v[idx + k] & 0xFFL) << k * width;
        }
        LONG_LE.set(b, p, acc);
        p += width;
      }
    } else { // 9 to 32 bits: four bytes written at a time (fewer than 32 bits pending, so a value always fits)
      long acc = 0;
      int bits = 0;
      for (int idx = start; idx < end; idx++) {
        long x = idx < n ? v[idx] & 0xFFFFFFFFL : 0; // the last group is padded with zeros
        acc |= x << bits;
        bits += width;
        if (bits >= 32) {
          INT_LE.set(b, p, (int) acc);
          p += 4;
          acc >>>= 32;
          bits -= 32;
        }
      }
      for (; bits > 0; bits -= 8) { // 8 values take whole bytes: what is pending is whole bytes
        b[p++] = (byte) acc;
        acc >>>= 8;
      }
    }
    out.size = p;
  }

  /**
   * Appends {@code v[0, n)} as DELTA_BINARY_PACKED with parquet-java's layout: blocks of 128
   * values in 4 miniblocks of 32; an INT32 column's non-negative values come out as parquet-java's
   * INT32 writer's (their deltas fit 32 bits).
   */
  void deltaBinaryPacked(long[] v, int n, Buf out) {
    out.varint(128);
    out.varint(4);
    out.varint(n);
    out.zigzag(n > 0 ? v[0] : 0);
    long[] d = block;
    for (int b = 1; b < n; b += 128) {
      int m = Math.min(128, n - b);
      long min = Long.MAX_VALUE;
      for (int j = 0; j < m; j++) {
        long x = v[b + j] - v[b + j - 1];
        d[j] = x;
        min = Math.min(min, x);
      }
      for (int j = 0; j < m; j++) {
        d[j] -= min;
      }
      for (int j = m; j < 128; j++) {
        d[j] = 0;
      }
      out.zigzag(min);
      int miniblocks = (m + 31) >>> 5;
      out.ensure(4 + 32 * 8 * 4);
      int widthAt = out.size;
      out.size += 4;
      for (int mb = 0; mb < 4; mb++) {
        int w = 0;
        if (mb < miniblocks) {
          long or = 0;
          for (int j = mb * 32, end = j + 32; j < end; j++) {
            or |= d[j];
          }
          w = 64 - Long.numberOfLeadingZeros(or);
        }
        out.buf[widthAt + mb] = (byte) w;
      }
      for (int mb = 0; mb < miniblocks; mb++) {
        pack32(d, mb * 32, out.buf[widthAt + mb], out);
      }
    }
  }

  /** Packs the 32 values {@code d[off, off + 32)}, each below 2^w, LSB first: 4w bytes. */
  private static void pack32(long[] d, int off, int w, Buf out) {
    if (w == 0) {
      return;
    }
    byte[] b = out.buf;
    int p = out.size;
    if (w == 64) { // random values: the deltas take every bit
      for (int j = off, end = off + 32; j < end; j++, p += 8) {
        LONG_LE.set(b, p, d[j]);
      }
      out.size = p;
      return;
    }
    long acc = 0;
    int bits = 0;
    for (int j = off, end = off + 32; j < end; j++) {
      long x = d[j];
      acc |= x << bits;
      bits += w;
      if (bits >= 64) {
        LONG_LE.set(b, p, acc);
        p += 8;
        bits -= 64;
        acc = bits == 0 ? 0 : x >>> (w - bits);
      }
    }
    if (bits > 0) { // 32w bits in all: 32 bits are left when w is odd
      INT_LE.set(b, p, (int) acc);
      p += 4;
    }
    out.size = p;
  }

  // ------------------------------------------------------------------ buffers and dictionaries

  /** A growable byte buffer. */
  static final class Buf {
    byte[] buf;
    int size;

    Buf(int capacity) {
      buf = new byte[capacity];
    }

    void reset() {
      size = 0;
    }

    void ensure(int more) {
      if (size + more > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(size + more, buf.length * 2));
      }
    }

    void put(byte x) {
      ensure(1);
      buf[size++] = x;
    }

    void put(byte[] b, int off, int len) {
      ensure(len);
      System.arraycopy(b, off, buf, size, len);
      size += len;
    }

    /** Unsigned LEB128. */
    void varint(long x) {
      ensure(10);
      while ((x & ~0x7FL) != 0) {
        buf[size++] = (byte) ((x & 0x7F) | 0x80);
        x >>>= 7;
      }
      buf[size++] = (byte) x;
    }

    void zigzag(long x) {
      varint((x << 1) ^ (x >> 63));
    }
  }

  /** Distinct longs in the order first seen, with their ids (open addressing). */
  static final class LongDictionary {
    long[] keys = new long[1024];
    private long[] table = new long[4096];
    private int[] slots = new int[4096]; // id + 1, 0 = empty
    private int size;

    void clear() {
      if (size > 0) {
        Arrays.fill(slots, 0);
      }
      size = 0;
    }

    int size() {
      return size;
    }

    long bytes() {
      return 8L * size;
    }

    /** Keeps the first {@code n} entries for the dictionary page; the table is stale afterwards (no more adds). */
    void truncate(int n) {
      size = n;
    }

    int add(long x) {
      int mask = slots.length - 1;
      int h = (int) ((x * 0x9E3779B97F4A7C15L) >>> 40) & mask;
      while (true) {
        int s = slots[h];
        if (s == 0) {
          break;
        }
        if (table[h] == x) {
          return s - 1;
        }
        h = (h + 1) & mask;
      }
      int id = size++;
      if (id == keys.length) {
        keys = Arrays.copyOf(keys, id * 2);
      }
      keys[id] = x;
      table[h] = x;
      slots[h] = id + 1;
      if (size * 2 > slots.length) {
        grow();
      }
      return id;
    }

    private void grow() {
      long[] t = new long[table.length * 2];
      int[] s = new int[slots.length * 2];
      int mask = s.length - 1;
      for (int id = 0; id < size; id++) {
        long x = keys[id];
        int h = (int) ((x * 0x9E3779B97F4A7C15L) >>> 40) & mask;
        while (s[h] != 0) {
          h = (h + 1) & mask;
        }
        t[h] = x;
        s[h] = id + 1;
      }
      table = t;
      slots = s;
    }
  }

  /** Distinct strings in the order first seen, with their UTF-8 bytes and ids (open addressing). */
  static final class StringDictionary {
    byte[][] entries = new byte[1024][];
    int[] marks = new int[1024];
    private String[] keys = new String[1024];
    private String[] table = new String[4096];
    private int[] slots = new int[4096];
    private int size;
    private long bytes;
    private int stamp;

    void clear() {
      if (size > 0) {
        Arrays.fill(table, null);
        Arrays.fill(slots, 0);
        Arrays.fill(keys, 0, size, null);
        Arrays.fill(entries, 0, size, null);
        Arrays.fill(marks, 0, size, 0);
      }
      size = 0;
      bytes = 0;
      stamp = 0;
    }

    /** A new page: a fresh stamp for {@link #marks}. */
    int newPage() {
      return ++stamp;
    }

    int size() {
      return size;
    }

    /** The dictionary page's size as parquet-java counts it: 4 + length per entry. */
    long bytes() {
      return bytes;
    }

    void truncate(int n) {
      for (int k = n; k < size; k++) {
        bytes -= 4 + entries[k].length;
      }
      size = n;
    }

    int add(String x, int hash) {
      int mask = slots.length - 1;
      int h = (hash * 0x9E3779B9 >>> 12) & mask;
      while (true) {
        int s = slots[h];
        if (s == 0) {
          break;
        }
        String t = table[h];
        if (t == x || t.equals(x)) {
          return s - 1;
        }
        h = (h + 1) & mask;
      }
      int id = size++;
      if (id == keys.length) {
        keys = Arrays.copyOf(keys, id * 2);
        entries = Arrays.copyOf(entries, id * 2);
        marks = Arrays.copyOf(marks, id * 2);
      }
      byte[] b = x.getBytes(StandardCharsets.UTF_8);
      keys[id] = x;
      entries[id] = b;
      bytes += 4 + b.length;
      table[h] = x;
      slots[h] = id + 1;
      if (size * 2 > slots.length) {
        grow();
      }
      return id;
    }

    private void grow() {
      String[] t = new String[table.length * 2];
      int[] s = new int[slots.length * 2];
      int mask = s.length - 1;
      for (int id = 0; id < size; id++) {
        String x = keys[id];
        int h = (x.hashCode() * 0x9E3779B9 >>> 12) & mask;
        while (s[h] != 0) {
          h = (h + 1) & mask;
        }
        t[h] = x;
        s[h] = id + 1;
      }
      table = t;
      slots = s;
    }
  }
}
