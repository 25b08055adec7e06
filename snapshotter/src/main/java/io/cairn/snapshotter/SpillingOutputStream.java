package io.cairn.snapshotter;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Holds what is written in memory up to {@code threshold} bytes, then moves it to a temporary
 * file and continues there: an encoded batch file is uploaded from memory when small and from disk
 * when large, and memory stays bounded by the threshold. {@link #close()} finishes writing; {@link
 * #discard()} deletes the temporary file (call it once the content is uploaded or abandoned).
 */
final class SpillingOutputStream extends OutputStream {
  private final long threshold;
  private final Path tempDir;
  private byte[] buf = new byte[8192];
  private int count;
  private long size;
  private Path file;
  private OutputStream fileOut;

  SpillingOutputStream(long threshold, Path tempDir) {
    this.threshold = threshold;
    this.tempDir = tempDir;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (fileOut == null && size + len > threshold) {
      file = tempDir == null ? Files.createTempFile("cairn-batch-", ".parquet") : Files.createTempFile(tempDir, "cairn-batch-", ".parquet");
      fileOut = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16);
      fileOut.write(buf, 0, count);
      buf = null;
    }
    if (fileOut != null) {
      fileOut.write(b, off, len);
    } else {
      if (count + len > buf.length) {
        buf = Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(count + (long) len, 2L * buf.length)));
      }
      System.arraycopy(b, off, buf, count, len);
      count += len;
    }
    size += len;
  }

  @Override
  public void flush() throws IOException {
    if (fileOut != null) {
      fileOut.flush();
    }
  }

  @Override
  public void close() throws IOException {
    if (fileOut != null) {
      fileOut.close();
    }
  }

  /** Bytes written. */
  long size() {
    return size;
  }

  /** The temporary file holding the content, or null if it is in memory. */
  Path file() {
    return file;
  }

  /** The content, if in memory. */
  byte[] bytes() {
    return buf.length == count ? buf : Arrays.copyOf(buf, count);
  }

  /** Deletes the temporary file, if any; returns whether one was there to delete. */
  boolean discard() throws IOException {
    close();
    return file != null && Files.deleteIfExists(file);
  }
}
