package io.cairn.snapshotter.format;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Set;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DataPage;
import org.apache.parquet.column.page.DataPageV1;
import org.apache.parquet.column.page.DataPageV2;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageReader;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;

/**
 * Decodes one column chunk's pages in bulk, straight into the primitive array a batch column is
 * made of: no {@code ColumnReader}, no per-value calls, no {@code Binary} per value. The
 * counterpart of {@link BulkPageEncoder} for loads, which spent most of their CPU in parquet-java's
 * per-value reader (a snapshot load reads every row of the state).
 *
 * <p>What it decodes: flat columns (no repetition, definition level at most 1) of INT64, INT32,
 * DOUBLE and BINARY (as UTF-8 text), in v1 or v2 data pages, with values PLAIN, dictionary
 * (PLAIN_DICTIONARY / RLE_DICTIONARY, dictionary page PLAIN), DELTA_BINARY_PACKED (INT64, INT32)
 * or DELTA_BYTE_ARRAY (BINARY), and definition levels in the RLE/bit-packing hybrid: every
 * encoding {@link BulkPageEncoder} and parquet-java's writers of either version produce for these
 * types. {@link #decodes} says whether a column chunk is all of that, from its footer's encodings;
 * a chunk that is not is read with parquet-java's column reader instead (its caller's choice).
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>One call, one column chunk: {@code read*} consumes the chunk's dictionary page and every
 *       data page of the row group and fills rows {@code [base, base + rows)}; the pages must hold
 *       exactly {@code rows} rows. A NULL (definition level 0) sets the row's bit in the NULL
 *       bitmap and leaves the array's default (0, 0.0, null) in place.
 *   <li>Equal results: the values parquet-java's column reader gives for the same file, text
 *       decoded from UTF-8 as {@code Binary#toStringUsingUTF8} does. A dictionary's strings are
 *       decoded once and shared by every row that refers to them (as the text columns of a
 *       running node share equal values); so is a DELTA_BYTE_ARRAY value equal to the one before.
 *       {@code BulkPageDecoderTest} checks both readers against each other on every page format,
 *       type and NULL density, and on hand-built pages at the encodings' edges.
 *   <li>Corrupt input: every read is checked against its page's end, every dictionary id against
 *       the dictionary's size, every count against the page's; a violation is an {@link
 *       IOException} naming what was wrong (the caller reports the file as corrupt). Work is
 *       bounded by the page's bytes and the row group's rows: a run longer than the page's rows is
 *       cut at them.
 *   <li>Thread confinement: one instance per file read, used by one thread; its scratch arrays
 *       grow to the largest page and are reused from page to page and column to column.
 * </ul>
 */
final class BulkPageDecoder {
  private static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  // the page being decoded: its bytes [pos, end) of buf
  private byte[] buf;
  private int pos;
  private int end;
  private int[] defs = new int[0];
  private int[] ids = new int[0];
  private long[] longs = new long[0];
  private long[] longs2 = new long[0];
  private String[] strings = new String[0];
  private byte[] last = new byte[64];
  // the chunk's dictionary, one of these by type
  private long[] dictLongs;
  private String[] dictStrings;

  /**
   * Whether a column chunk of {@code d} whose footer lists {@code encodings} is decoded here
   * (see the class comment); if not, the caller reads it with parquet-java's column reader.
   */
  static boolean decodes(ColumnDescriptor d, Set<Encoding> encodings) {
    PrimitiveTypeName t = d.getPrimitiveType().getPrimitiveTypeName();
    if (t != PrimitiveTypeName.INT64 && t != PrimitiveTypeName.INT32 && t != PrimitiveTypeName.DOUBLE
        && t != PrimitiveTypeName.BINARY) {
      return false;
    }
    if (d.getMaxRepetitionLevel() != 0 || d.getMaxDefinitionLevel() > 1) {
      return false;
    }
    for (Encoding e : encodings) {
      boolean ok = switch (e) {
        case PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE -> true;
        // the level encoding parquet-java names for levels a v1 page does not hold (repetition levels of a flat column,
        // definition levels of a required one); a page whose definition levels are in it is refused by openPage
        case BIT_PACKED -> true;
        case DELTA_BINARY_PACKED -> t == PrimitiveTypeName.INT64 || t == PrimitiveTypeName.INT32;
        case DELTA_BYTE_ARRAY -> t == PrimitiveTypeName.BINARY;
        default -> false;
      };
      if (!ok) {
        return false;
      }
    }
    return true;
  }

  /**
   * Reads an INT64 or INT32 chunk into {@code out[base, base + rows)} (INT32 sign-extended);
   * returns {@code nulls}, or a new bitmap when the chunk holds the first NULL.
   */
  BitSet readLongs(PageReader pr, ColumnDescriptor d, long[] out, BitSet nulls, int base, int rows) throws IOException {
    boolean int32 = d.getPrimitiveType().getPrimitiveTypeName() == PrimitiveTypeName.INT32;
    readDictionary(pr, int32 ? Kind.INT32 : Kind.INT64);
    int at = base;
    int stop = base + rows;
    DataPage page;
    while (at < stop && (page = pr.readPage()) != null) {
      int n = openPage(page, d, stop - at);
      int m = nonNull;
      boolean dense = m == n;
      long[] dst = dense ? out : scratchLongs(m);
      int off = dense ? at : 0;
      if (m > 0) {
        switch (encoding) {
          case PLAIN -> {
            need((long) m * (int32 ? 4 : 8));
            if (int32) {
              for (int k = 0; k < m; k++) {
                dst[off + k] = (int) INT_LE.get(buf, pos + 4 * k);
              }
            } else {
              for (int k = 0; k < m; k++) {
                dst[off + k] = (long) LONG_LE.get(buf, pos + 8 * k);
              }
            }
          }
          case PLAIN_DICTIONARY, RLE_DICTIONARY -> {
            int[] id = dictionaryIds(m, dictLongs == null ? -1 : dictLongs.length);
            long[] dict = dictLongs;
            for (int k = 0; k < m; k++) {
              dst[off + k] = dict[id[k]];
            }
          }
          case DELTA_BINARY_PACKED -> delta(dst, off, m, int32);
          default -> throw unsupported(d);
        }
      }
      if (!dense) {
        nulls = scatter(dst, out, at, n, nulls);
      }
      at += n;
    }
    checkRows(d, at - base, rows);
    return nulls;
  }

  /** Reads a DOUBLE chunk into {@code out[base, base + rows)}; NULLs as {@link #readLongs}. */
  BitSet readDoubles(PageReader pr, ColumnDescriptor d, double[] out, BitSet nulls, int base, int rows) throws IOException {
    readDictionary(pr, Kind.INT64); // a DOUBLE dictionary page is PLAIN 8-byte values, kept as their bits
    int at = base;
    int stop = base + rows;
    DataPage page;
    while (at < stop && (page = pr.readPage()) != null) {
      int n = openPage(page, d, stop - at);
      int m = nonNull;
      long[] bits = scratchLongs(m);
      if (m > 0) {
        switch (encoding) {
          case PLAIN -> {
            need((long) m * 8);
            for (int k = 0; k < m; k++) {
              bits[k] = (long) LONG_LE.get(buf, pos + 8 * k);
            }
          }
          case PLAIN_DICTIONARY, RLE_DICTIONARY -> {
            int[] id = dictionaryIds(m, dictLongs == null ? -1 : dictLongs.length);
            for (int k = 0; k < m; k++) {
              bits[k] = dictLongs[id[k]];
            }
          }
          default -> throw unsupported(d);
        }
      }
      int v = 0;
      for (int i = 0; i < n; i++) {
        if (m == n || defs[i] != 0) {
          out[at + i] = Double.longBitsToDouble(bits[v++]);
        } else {
          nulls = setNull(nulls, at + i);
        }
      }
      at += n;
    }
    checkRows(d, at - base, rows);
    return nulls;
  }

  /** Reads a BINARY chunk as UTF-8 text into {@code out[base, base + rows)}; a NULL stays null. */
  void readStrings(PageReader pr, ColumnDescriptor d, String[] out, int base, int rows) throws IOException {
    readDictionary(pr, Kind.TEXT);
    int at = base;
    int stop = base + rows;
    int lastLen = 0;
    String lastString = null;
    DataPage page;
    while (at < stop && (page = pr.readPage()) != null) {
      int n = openPage(page, d, stop - at);
      int m = nonNull;
      String[] dst = m == n ? out : scratchStrings(m);
      int off = m == n ? at : 0;
      if (m > 0) {
        switch (encoding) {
          case PLAIN -> {
            for (int k = 0; k < m; k++) {
              need(4);
              int len = (int) INT_LE.get(buf, pos);
              pos += 4;
              if (len < 0) {
                throw new IOException("a PLAIN value of column " + name(d) + " has length " + len);
              }
              need(len);
              dst[off + k] = new String(buf, pos, len, StandardCharsets.UTF_8);
              pos += len;
            }
          }
          case PLAIN_DICTIONARY, RLE_DICTIONARY -> {
            int[] id = dictionaryIds(m, dictStrings == null ? -1 : dictStrings.length);
            for (int k = 0; k < m; k++) {
              dst[off + k] = dictStrings[id[k]];
            }
          }
          case DELTA_BYTE_ARRAY -> {
            long[] prefix = scratchLongs(m);
            delta(prefix, 0, m, true);
            long[] suffix = scratchLongs2(m);
            delta(suffix, 0, m, true);
            for (int k = 0; k < m; k++) {
              long p = prefix[k];
              long s = suffix[k];
              if (p < 0 || p > lastLen || s < 0) {
                throw new IOException("a DELTA_BYTE_ARRAY value of column " + name(d) + " has prefix " + p + " and suffix " + s
                    + " after a value of " + lastLen + " bytes");
              }
              need(s);
              if (s == 0 && p == lastLen && lastString != null) {
                dst[off + k] = lastString; // equal to the value before it: one object
                continue;
              }
              int len = (int) (p + s);
              if (len > last.length) {
                last = Arrays.copyOf(last, Math.max(len, 2 * last.length));
              }
              System.arraycopy(buf, pos, last, (int) p, (int) s);
              pos += (int) s;
              lastLen = len;
              lastString = new String(last, 0, len, StandardCharsets.UTF_8);
              dst[off + k] = lastString;
            }
          }
          default -> throw unsupported(d);
        }
      }
      if (m != n) {
        int v = 0;
        for (int i = 0; i < n; i++) {
          if (defs[i] != 0) {
            out[at + i] = dst[v++];
          }
        }
        Arrays.fill(dst, 0, m, null);
      }
      at += n;
    }
    checkRows(d, at - base, rows);
  }

  // ------------------------------------------------------------------ pages

  private Encoding encoding;
  private int nonNull;

  /**
   * Positions {@link #buf} at the page's values, decodes its definition levels into {@link #defs}
   * and sets {@link #encoding} and {@link #nonNull}; returns the page's rows (at most {@code left}).
   */
  private int openPage(DataPage page, ColumnDescriptor d, int left) throws IOException {
    int n = page.getValueCount();
    if (n < 0 || n > left) {
      throw new IOException("a page of column " + name(d) + " holds " + n + " values where " + left + " rows are left in its row group");
    }
    boolean optional = d.getMaxDefinitionLevel() > 0;
    if (page instanceof DataPageV1 v1) {
      encoding = v1.getValueEncoding();
      slice(v1.getBytes());
      if (optional) {
        if (v1.getDlEncoding() != Encoding.RLE) {
          throw new IOException("column " + name(d) + " has definition levels in " + v1.getDlEncoding() + ", not RLE");
        }
        need(4);
        int len = (int) INT_LE.get(buf, pos);
        pos += 4;
        if (len < 0) {
          throw new IOException("the definition levels of a page of column " + name(d) + " have length " + len);
        }
        need(len);
        int valuesAt = pos + len;
        int pageEnd = end;
        end = valuesAt;
        levels(n);
        pos = valuesAt;
        end = pageEnd;
      }
    } else if (page instanceof DataPageV2 v2) {
      encoding = v2.getDataEncoding();
      if (optional) {
        slice(v2.getDefinitionLevels());
        levels(n);
        if (n - nonNull != v2.getNullCount()) {
          throw new IOException("a page of column " + name(d) + " has " + (n - nonNull) + " NULL levels, its header says "
              + v2.getNullCount());
        }
      }
      slice(v2.getData());
    } else {
      throw new IOException("column " + name(d) + " has a page of an unknown kind: " + page.getClass().getSimpleName());
    }
    if (!optional) {
      nonNull = n;
    }
    return n;
  }

  /** Decodes {@code n} definition levels (bit width 1) into {@link #defs} and counts the non-NULL ones. */
  private void levels(int n) throws IOException {
    if (defs.length < n) {
      defs = new int[Math.max(n, 2 * defs.length)];
    }
    hybrid(1, defs, n);
    int m = 0;
    for (int i = 0; i < n; i++) {
      if (defs[i] > 1) {
        throw new IOException("a definition level of " + defs[i] + " in a flat column");
      }
      m += defs[i];
    }
    nonNull = m;
  }

  private enum Kind { INT64, INT32, TEXT }

  private void readDictionary(PageReader pr, Kind kind) throws IOException {
    dictLongs = null;
    dictStrings = null;
    DictionaryPage dp = pr.readDictionaryPage();
    if (dp == null) {
      return;
    }
    if (dp.getEncoding() != Encoding.PLAIN && dp.getEncoding() != Encoding.PLAIN_DICTIONARY) {
      throw new IOException("a dictionary page in " + dp.getEncoding() + ", not PLAIN");
    }
    int size = dp.getDictionarySize();
    if (size < 0) {
      throw new IOException("a dictionary of " + size + " entries");
    }
    slice(dp.getBytes());
    switch (kind) {
      case INT64 -> {
        need((long) size * 8);
        dictLongs = new long[size];
        for (int k = 0; k < size; k++) {
          dictLongs[k] = (long) LONG_LE.get(buf, pos + 8 * k);
        }
      }
      case INT32 -> {
        need((long) size * 4);
        dictLongs = new long[size];
        for (int k = 0; k < size; k++) {
          dictLongs[k] = (int) INT_LE.get(buf, pos + 4 * k);
        }
      }
      case TEXT -> {
        need((long) size * 4); // each entry's length at least: a corrupt size allocates nothing
        dictStrings = new String[size];
        for (int k = 0; k < size; k++) {
          need(4);
          int len = (int) INT_LE.get(buf, pos);
          pos += 4;
          if (len < 0) {
            throw new IOException("a dictionary entry of length " + len);
          }
          need(len);
          dictStrings[k] = new String(buf, pos, len, StandardCharsets.UTF_8);
          pos += len;
        }
      }
    }
  }

  /** The page's {@code m} dictionary ids (a bit width byte, then the hybrid), each checked against {@code size}. */
  private int[] dictionaryIds(int m, int size) throws IOException {
    if (size < 0) {
      throw new IOException("a dictionary-encoded page without a dictionary page");
    }
    need(1);
    int w = buf[pos++] & 0xff;
    if (w > 32) {
      throw new IOException("dictionary ids of bit width " + w);
    }
    if (ids.length < m) {
      ids = new int[Math.max(m, 2 * ids.length)];
    }
    hybrid(w, ids, m);
    for (int k = 0; k < m; k++) {
      if (ids[k] < 0 || ids[k] >= size) {
        throw new IOException("dictionary id " + ids[k] + " outside a dictionary of " + size + " entries");
      }
    }
    return ids;
  }

  // ------------------------------------------------------------------ encodings

  /** The RLE/bit-packing hybrid (no length prefix): {@code count} values of width {@code w} ≤ 32 into {@code out}. */
  private void hybrid(int w, int[] out, int count) throws IOException {
    if (w == 0) {
      Arrays.fill(out, 0, count, 0);
      return;
    }
    long mask = (1L << w) - 1;
    int bytes = (w + 7) >>> 3;
    int i = 0;
    while (i < count) {
      long header = uvarint();
      if ((header & 1) == 0) {
        long run = header >>> 1;
        need(bytes);
        int v = 0;
        for (int b = 0; b < bytes; b++) {
          v |= (buf[pos + b] & 0xff) << (8 * b);
        }
        pos += bytes;
        if ((v & ~mask) != 0) {
          throw new IOException("a run value " + Integer.toUnsignedString(v) + " wider than " + w + " bits");
        }
        int to = i + (int) Math.min(count - i, run);
        Arrays.fill(out, i, to, v);
        i = to;
      } else {
        long groups = Math.min(header >>> 1, Integer.MAX_VALUE); // a longer run is past any page's end anyway
        int take = (int) Math.min(groups * 8, count - i);
        long groupBytes = groups * w;
        need(((long) take * w + 7) >>> 3);
        long bit = (long) pos * 8;
        if (pos + (((long) take * w + 7) >>> 3) + 8 <= end) { // the whole run and a long past it in the page: no end checks
          for (int k = 0; k < take; k++, bit += w) {
            out[i + k] = (int) (((long) LONG_LE.get(buf, (int) (bit >>> 3)) >>> (bit & 7)) & mask); // w ≤ 32: in one long
          }
        } else {
          for (int k = 0; k < take; k++, bit += w) {
            out[i + k] = (int) bitsAt(bit, w, mask);
          }
        }
        pos = (int) Math.min(end, pos + groupBytes);
        i += take;
      }
    }
  }

  /**
   * DELTA_BINARY_PACKED: {@code count} values into {@code out[off, off + count)}, as INT32 values
   * (sign-extended) when {@code int32}. Leaves {@link #pos} after the last miniblock read.
   */
  private void delta(long[] out, int off, int count, boolean int32) throws IOException {
    long blockSize = uvarint();
    long miniblocks = uvarint();
    long total = uvarint();
    long first = zigzag(uvarint());
    if (blockSize <= 0 || blockSize > (1 << 24) || blockSize % 128 != 0 || miniblocks <= 0 || blockSize % miniblocks != 0
        || (blockSize / miniblocks) % 8 != 0) {
      throw new IOException("a DELTA_BINARY_PACKED header of block size " + blockSize + " in " + miniblocks + " miniblocks");
    }
    if (total != count) {
      throw new IOException("a DELTA_BINARY_PACKED run holds " + total + " values where " + count + " are expected");
    }
    if (count == 0) {
      return;
    }
    int per = (int) (blockSize / miniblocks);
    long prev = first;
    out[off] = int32 ? (int) prev : prev;
    int done = 1;
    while (done < count) {
      long minDelta = zigzag(uvarint());
      need(miniblocks);
      int widths = pos;
      pos += (int) miniblocks;
      for (int mb = 0; mb < miniblocks && done < count; mb++) {
        int w = buf[widths + mb] & 0xff;
        if (w > 64) {
          throw new IOException("a DELTA_BINARY_PACKED miniblock of bit width " + w);
        }
        int take = Math.min(per, count - done);
        need(((long) take * w + 7) >>> 3);
        long mask = w == 64 ? -1L : (1L << w) - 1;
        long bit = (long) pos * 8;
        int at = off + done;
        if (int32) {
          for (int k = 0; k < take; k++, bit += w) {
            prev += minDelta + bitsAt(bit, w, mask);
            out[at + k] = (int) prev;
          }
        } else if (w == 0) {
          for (int k = 0; k < take; k++) {
            prev += minDelta;
            out[at + k] = prev;
          }
        } else {
          for (int k = 0; k < take; k++, bit += w) {
            prev += minDelta + bitsAt(bit, w, mask);
            out[at + k] = prev;
          }
        }
        pos = (int) Math.min(end, pos + (long) per * w / 8);
        done += take;
      }
    }
  }

  /** The {@code w} bits at bit {@code bit} of {@link #buf} (little-endian, LSB first); bytes past {@link #end} read as 0. */
  private long bitsAt(long bit, int w, long mask) {
    int at = (int) (bit >>> 3);
    int shift = (int) (bit & 7);
    long v = le64(at) >>> shift;
    if (shift + w > 64) {
      v |= le64(at + 8) << (64 - shift);
    }
    return v & mask;
  }

  private long le64(int at) {
    if (at + 8 <= end) {
      return (long) LONG_LE.get(buf, at);
    }
    long v = 0;
    for (int i = Math.min(end, at + 8) - 1; i >= at; i--) {
      v = (v << 8) | (buf[i] & 0xff);
    }
    return v;
  }

  private long uvarint() throws IOException {
    long v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      byte b = buf[pos++];
      v |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return v;
      }
    }
    throw new IOException("a varint longer than 10 bytes");
  }

  private static long zigzag(long v) {
    return (v >>> 1) ^ -(v & 1);
  }

  private void need(long bytes) throws IOException {
    if (bytes > end - pos) {
      throw new IOException("a page ends " + (bytes - (end - pos)) + " bytes short of its values");
    }
  }

  // ------------------------------------------------------------------ helpers

  private void slice(BytesInput bytes) throws IOException {
    ByteBuffer b = bytes.toByteBuffer();
    if (b.hasArray()) {
      buf = b.array();
      pos = b.arrayOffset() + b.position();
      end = pos + b.remaining();
    } else {
      buf = new byte[b.remaining()];
      b.get(buf);
      pos = 0;
      end = buf.length;
    }
  }

  /** Moves the page's {@code m} dense values to their rows of {@code out} after {@code at}; NULL rows into the bitmap. */
  private BitSet scatter(long[] dense, long[] out, int at, int n, BitSet nulls) {
    int v = 0;
    for (int i = 0; i < n; i++) {
      if (defs[i] != 0) {
        out[at + i] = dense[v++];
      } else {
        nulls = setNull(nulls, at + i);
      }
    }
    return nulls;
  }

  private static BitSet setNull(BitSet nulls, int row) {
    if (nulls == null) {
      nulls = new BitSet();
    }
    nulls.set(row);
    return nulls;
  }

  private long[] scratchLongs(int n) {
    if (longs.length < n) {
      longs = new long[Math.max(n, 2 * longs.length)];
    }
    return longs;
  }

  private long[] scratchLongs2(int n) {
    if (longs2.length < n) {
      longs2 = new long[Math.max(n, 2 * longs2.length)];
    }
    return longs2;
  }

  private String[] scratchStrings(int n) {
    if (strings.length < n) {
      strings = new String[Math.max(n, 2 * strings.length)];
    }
    return strings;
  }

  private IOException unsupported(ColumnDescriptor d) {
    return new IOException("column " + name(d) + " has a page in " + encoding + ", which its footer does not list");
  }

  private static void checkRows(ColumnDescriptor d, int read, int rows) throws IOException {
    if (read != rows) {
      throw new IOException("the pages of column " + name(d) + " hold " + read + " rows, its row group " + rows);
    }
  }

  private static String name(ColumnDescriptor d) {
    return String.join(".", d.getPath());
  }
}
