package io.cairn.snapshotter.format;

import io.cairn.engine.trace.Batch;
import java.io.IOException;
import java.io.OutputStream;

/** Test access to writing a batch file as the tail of a larger file, for tests of offsets past 2 GiB. */
public final class OffsetBatchFiles {
  private OffsetBatchFiles() {}

  /**
   * Writes {@code batch} to {@code out} as the bytes from {@code start} on of a file whose first
   * {@code start} bytes are not written: the footer's offsets count them.
   */
  public static void writeAt(long start, String arrangement, int shard, Batch batch, OutputStream out, BatchFileOptions o)
      throws IOException {
    ColumnBatchWriter.write(arrangement, shard, batch, out, o, start);
  }
}
