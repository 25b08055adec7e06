package io.cairn.snapshotter.format;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How {@link ParquetBatchFiles} encodes a batch file.
 *
 * @param rowGroupRows the most rows in one row group; a larger batch becomes several row groups,
 *     encoded independently (in parallel on {@code executor}) and written in order
 * @param zstdLevel the ZSTD level of every page, in [1, 19]
 * @param pageFormat Parquet's writer version: {@code PARQUET_1_0} gives v1 data pages with PLAIN
 *     (or dictionary) values, {@code PARQUET_2_0} gives v2 data pages with DELTA_BINARY_PACKED /
 *     DELTA_BYTE_ARRAY (or RLE_DICTIONARY) values, as parquet-java's writer picks them
 * @param executor runs row-group encodings; the writing thread waits for them, so it must not be
 *     a pool the writing thread itself occupies when that pool is bounded ({@code Runnable::run}
 *     encodes on the writing thread)
 * @param rowGroupsInFlight the most row groups encoded ahead of the one being written (bounds
 *     memory: each holds its compressed pages until written)
 */
public record BatchFileOptions(int rowGroupRows, int zstdLevel, PageFormat pageFormat, Executor executor, int rowGroupsInFlight) {
  /** Rows per row group by default: 1Mi rows (≈ 40 MB of five INT64 columns before encoding). */
  public static final int DEFAULT_ROW_GROUP_ROWS = 1 << 20;
  /** ZSTD level by default (measured: benchmarks/RESULTS.md, "Column writer (issue 14)"). */
  public static final int DEFAULT_ZSTD_LEVEL = 1;

  /** The data page format and value encodings. */
  public enum PageFormat { V1, V2 }

  public BatchFileOptions {
    Objects.requireNonNull(pageFormat, "pageFormat");
    Objects.requireNonNull(executor, "executor");
    if (rowGroupRows < 1) {
      throw new IllegalArgumentException("Cannot encode batch files: rows per row group must be >= 1, got " + rowGroupRows);
    }
    if (zstdLevel < 1 || zstdLevel > 19) {
      throw new IllegalArgumentException("Cannot encode batch files: the ZSTD level must be in [1, 19], got " + zstdLevel);
    }
    if (rowGroupsInFlight < 1) {
      throw new IllegalArgumentException("Cannot encode batch files: row groups in flight must be >= 1, got " + rowGroupsInFlight);
    }
  }

  /** The defaults, encoding on the calling thread. */
  public static BatchFileOptions defaults() {
    return new BatchFileOptions(DEFAULT_ROW_GROUP_ROWS, DEFAULT_ZSTD_LEVEL, PageFormat.V1, Runnable::run, 1);
  }

  public BatchFileOptions withRowGroupRows(int rows) {
    return new BatchFileOptions(rows, zstdLevel, pageFormat, executor, rowGroupsInFlight);
  }

  public BatchFileOptions withZstdLevel(int level) {
    return new BatchFileOptions(rowGroupRows, level, pageFormat, executor, rowGroupsInFlight);
  }

  public BatchFileOptions withPageFormat(PageFormat format) {
    return new BatchFileOptions(rowGroupRows, zstdLevel, format, executor, rowGroupsInFlight);
  }

  /** Encodes row groups on {@code e}, at most {@code inFlight} ahead of the writer. */
  public BatchFileOptions withExecutor(Executor e, int inFlight) {
    return new BatchFileOptions(rowGroupRows, zstdLevel, pageFormat, e, inFlight);
  }
}
