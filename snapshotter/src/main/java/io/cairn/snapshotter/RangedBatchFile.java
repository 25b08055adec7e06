package io.cairn.snapshotter;

import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.exceptions.SnapshotException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A batch file in an {@link ObjectStore}, read for Parquet through ranged reads, with its CRC32C
 * computed over the bytes as they go by, so that loading a file of any size holds about one row
 * group of it in memory (and a file over 2 GiB loads).
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Opening fetches the tail (the last {@value #TAIL_BYTES} bytes, more if the footer is
 *       larger) in one ranged read that asks for one byte past the size the manifest records, so
 *       a file that is shorter or longer than recorded is found before any decoding.
 *   <li>Parquet then reads the footer from the tail (memory) and each row group's column chunks
 *       with forward {@code seek}/{@code readFully} calls; each call is one ranged read of
 *       exactly the bytes asked for (parquet-java asks in pieces of at most its allocation size, 8
 *       MiB), plus the not yet hashed bytes before it when that gap is at most {@value
 *       #MAX_COALESCED_GAP} bytes (the 4-byte magic before the first row group), streamed through
 *       a {@value #SKIP_BUFFER}-byte buffer and not kept.
 *   <li>Bytes {@code [0, hashed)} have gone through the checksum in file order. {@link
 *       #checksum()} hashes what is left (the page indexes between the last row group and the
 *       footer, in ranged reads of at most {@value #MAX_RANGE} bytes through the small buffer),
 *       then the tail. A read behind {@code hashed} (not done by parquet-java's sequential
 *       row-group reader) is served by its own ranged read and switches the checksum to a
 *       second, streamed pass over the whole file, so verification is never skipped.
 *   <li>Failures: a missing object, or one whose size differs from the manifest's, is a {@link
 *       CorruptSnapshotException}; a failing store call is a {@link StoreFailure} carrying the
 *       store's exception; a failing stream is a {@link SnapshotException}. Parquet sees them
 *       as unchecked exceptions and does not wrap them.
 * </ul>
 *
 * <p>Not thread-safe: one load reads one file on one thread.
 */
final class RangedBatchFile implements InputFile {
  /** Bytes read at the end of the file when it is opened: the footer of a batch file is a few KiB. */
  static final int TAIL_BYTES = 64 << 10;
  static final int SKIP_BUFFER = 64 << 10;
  static final long MAX_COALESCED_GAP = 1 << 20;
  static final long MAX_RANGE = 8 << 20;

  /** A store call failed; the cause is the store's exception. */
  static final class StoreFailure extends SnapshotException {
    private static final long serialVersionUID = 1L;

    StoreFailure(ObjectStoreException cause) {
      super(cause.getMessage(), cause);
    }

    ObjectStoreException storeException() {
      return (ObjectStoreException) getCause();
    }
  }

  private final ObjectStore store;
  private final String key;
  private final long size;
  private final byte[] tail;
  private final long tailStart;
  private final CRC32C crc = new CRC32C();
  private byte[] skip;
  private long hashed;
  private boolean inOrder = true;
  private long ranges;
  private long largestRange;

  private RangedBatchFile(ObjectStore store, String key, long size, byte[] tail) {
    this.store = store;
    this.key = key;
    this.size = size;
    this.tail = tail;
    this.tailStart = size - tail.length;
  }

  /**
   * Opens {@code key}, which the manifest says has {@code size} bytes, and reads its tail.
   *
   * @throws CorruptSnapshotException if it is missing or not {@code size} bytes long
   */
  static RangedBatchFile open(ObjectStore store, String key, long size) {
    int n = (int) Math.min(size, TAIL_BYTES);
    byte[] tail = new byte[n];
    long start = size - n;
    RangedBatchFile file = new RangedBatchFile(store, key, size, new byte[0]);
    int got;
    try (InputStream in = file.range(start, n + 1L)) {
      got = in.readNBytes(tail, 0, n);
      if (got == n && in.read() >= 0) {
        throw new CorruptSnapshotException("Cannot load batch file " + key + ": it has more than " + size
            + " bytes, the manifest says " + size);
      }
    } catch (IOException e) {
      throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
    }
    if (got < n) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it has " + (start + got)
          + " bytes, the manifest says " + size);
    }
    // the footer: <metadata> <4-byte little-endian metadata length> "PAR1"
    if (n >= 8) {
      long footer = (tail[n - 8] & 0xffL) | (tail[n - 7] & 0xffL) << 8 | (tail[n - 6] & 0xffL) << 16
          | (tail[n - 5] & 0xffL) << 24;
      long need = footer + 8;
      if (need > n && need <= size) {
        byte[] longer = new byte[(int) need];
        System.arraycopy(tail, 0, longer, (int) (need - n), n);
        file.readRange(size - need, longer, 0, (int) (need - n), false);
        tail = longer;
      }
    }
    RangedBatchFile opened = new RangedBatchFile(store, key, size, tail);
    opened.ranges = file.ranges;
    opened.largestRange = file.largestRange;
    return opened;
  }

  @Override
  public long getLength() {
    return size;
  }

  @Override
  public SeekableInputStream newStream() {
    return new Stream();
  }

  /** Ranged reads made so far. */
  long ranges() {
    return ranges;
  }

  /** The longest ranged read made so far, in bytes. */
  long largestRange() {
    return largestRange;
  }

  /**
   * The CRC32C of the whole file, as {@code crc32c:xxxxxxxx}: reads the bytes not yet hashed
   * (or, after a backward read, the whole file again, streamed).
   */
  String checksum() {
    if (!inOrder) {
      crc.reset();
      hashed = 0;
    }
    hashThrough(tailStart);
    crc.update(tail, 0, tail.length);
    hashed = size;
    return Snapshotter.checksum(crc);
  }

  // ---- reading

  private InputStream range(long offset, long length) {
    ranges++;
    largestRange = Math.max(largestRange, length);
    try {
      return store.getRange(key, offset, length);
    } catch (ObjectNotFoundException e) {
      throw new CorruptSnapshotException("Cannot load batch file " + key + ": it is missing", e);
    } catch (ObjectStoreException e) {
      throw new StoreFailure(e);
    }
  }

  /** Reads exactly {@code [pos, pos + len)} of the body into {@code b}, hashing when in order. */
  private void readBody(long pos, byte[] b, int off, int len) {
    if (pos < hashed) {
      inOrder = false;
      readRange(pos, b, off, len, false);
      return;
    }
    if (pos - hashed > MAX_COALESCED_GAP) {
      hashThrough(pos);
    }
    long gap = pos - hashed;
    try (InputStream in = range(hashed, gap + len)) {
      discard(in, gap, hashed);
      readExactly(in, b, off, len, pos);
    } catch (IOException e) {
      throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
    }
    if (inOrder) {
      crc.update(b, off, len);
    }
    hashed = pos + len;
  }

  private void readRange(long pos, byte[] b, int off, int len, boolean hash) {
    try (InputStream in = range(pos, len)) {
      readExactly(in, b, off, len, pos);
    } catch (IOException e) {
      throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
    }
    if (hash) {
      crc.update(b, off, len);
    }
  }

  /** Hashes {@code [hashed, end)} without keeping it. */
  private void hashThrough(long end) {
    while (hashed < end) {
      long n = Math.min(end - hashed, MAX_RANGE);
      try (InputStream in = range(hashed, n)) {
        discard(in, n, hashed);
      } catch (IOException e) {
        throw new SnapshotException("Cannot load batch file " + key + ": " + e.getMessage(), e);
      }
      hashed += n;
    }
  }

  private void discard(InputStream in, long n, long from) throws IOException {
    if (n == 0) {
      return;
    }
    if (skip == null) {
      skip = new byte[SKIP_BUFFER];
    }
    long left = n;
    while (left > 0) {
      int r = in.read(skip, 0, (int) Math.min(left, skip.length));
      if (r < 0) {
        throw shortFile(from + n - left);
      }
      crc.update(skip, 0, r);
      left -= r;
    }
  }

  private void readExactly(InputStream in, byte[] b, int off, int len, long pos) throws IOException {
    int got = in.readNBytes(b, off, len);
    if (got < len) {
      throw shortFile(pos + got);
    }
  }

  private CorruptSnapshotException shortFile(long at) {
    return new CorruptSnapshotException("Cannot load batch file " + key + ": it ends at byte " + at
        + ", the manifest says " + size + " bytes");
  }

  /** Parquet's view: a position, and reads served from the tail or by ranged reads. */
  private final class Stream extends SeekableInputStream {
    private long pos;

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public void seek(long newPos) throws IOException {
      if (newPos < 0 || newPos > size) {
        throw new EOFException("Cannot seek to " + newPos + " in " + key + ": it has " + size + " bytes");
      }
      pos = newPos;
    }

    private void readAt(byte[] b, int off, int len) {
      while (len > 0) {
        if (pos >= tailStart) {
          System.arraycopy(tail, (int) (pos - tailStart), b, off, len);
          pos += len;
          return;
        }
        int n = (int) Math.min(len, tailStart - pos);
        readBody(pos, b, off, n);
        pos += n;
        off += n;
        len -= n;
      }
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (pos >= size) {
        return -1;
      }
      int n = (int) Math.min(len, size - pos);
      readAt(b, off, n);
      return n;
    }

    @Override
    public void readFully(byte[] bytes) throws IOException {
      readFully(bytes, 0, bytes.length);
    }

    @Override
    public void readFully(byte[] bytes, int start, int len) throws IOException {
      if (len > size - pos) {
        throw new EOFException("Cannot read " + len + " bytes at " + pos + " of " + key + ": it has " + size + " bytes");
      }
      readAt(bytes, start, len);
    }

    @Override
    public int read(ByteBuffer buf) throws IOException {
      if (!buf.hasRemaining()) {
        return 0;
      }
      if (pos >= size) {
        return -1;
      }
      int n = (int) Math.min(buf.remaining(), size - pos);
      fill(buf, n);
      return n;
    }

    @Override
    public void readFully(ByteBuffer buf) throws IOException {
      if (buf.remaining() > size - pos) {
        throw new EOFException("Cannot read " + buf.remaining() + " bytes at " + pos + " of " + key + ": it has "
            + size + " bytes");
      }
      fill(buf, buf.remaining());
    }

    private void fill(ByteBuffer buf, int n) {
      if (buf.hasArray()) {
        readAt(buf.array(), buf.arrayOffset() + buf.position(), n);
        buf.position(buf.position() + n);
        return;
      }
      // a direct buffer: through a heap array of at most MAX_RANGE bytes per ranged read
      int left = n;
      while (left > 0) {
        int k = (int) Math.min(left, MAX_RANGE);
        byte[] tmp = new byte[k];
        readAt(tmp, 0, k);
        buf.put(tmp, 0, k);
        left -= k;
      }
    }
  }
}
