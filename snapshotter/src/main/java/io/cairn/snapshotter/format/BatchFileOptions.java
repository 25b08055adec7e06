package io.cairn.snapshotter.format;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How {@link ParquetBatchFiles} encodes a batch file.
 *
 * @param rowGroupRows the most rows in one row group; a larger batch becomes several row groups,
 *     encoded independently (in parallel on {@code executor}) and written in order
 * @param zstdLevel the ZSTD level of every page, in [1, 19]
 * @param pageFormat the data page header version and the value encodings, see {@link PageFormat}
 * @param executor runs row-group encodings; the writing thread waits for them, so it must not be
 *     a pool the writing thread itself occupies when that pool is bounded ({@code Runnable::run}
 *     encodes on the writing thread)
 * @param rowGroupsInFlight the most row groups of one file encoded ahead of the one being written
 * @param budget the row groups held encoded at once across every file written with these options
 *     (each holds its compressed pages until written): it bounds the encoder's memory when
 *     several files are written at once
 */
public record BatchFileOptions(
    int rowGroupRows, int zstdLevel, PageFormat pageFormat, Executor executor, int rowGroupsInFlight, RowGroupBudget budget) {
  /** Rows per row group by default: 1Mi rows (≈ 40 MB of five INT64 columns before encoding). */
  public static final int DEFAULT_ROW_GROUP_ROWS = 1 << 20;
  /** ZSTD level by default (measured: benchmarks/RESULTS.md, "Column writer (issue 14)"). */
  public static final int DEFAULT_ZSTD_LEVEL = 1;

  /**
   * The data page header version and the value encodings (parquet-java picks, per column and page,
   * dictionary encoding while the dictionary pays, else the version's fallback).
   */
  public enum PageFormat {
    /** v1 data pages; fallback PLAIN (parquet-java's {@code PARQUET_1_0} writer). */
    V1,
    /** v2 data pages; fallback DELTA_BINARY_PACKED for INT64, DELTA_BYTE_ARRAY for strings ({@code PARQUET_2_0}). */
    V2,
    /**
     * v1 data pages (which every Parquet reader reads) with the {@code PARQUET_2_0} writer's
     * encodings (DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY, RLE_DICTIONARY).
     */
    V1_PAGES_V2_ENCODINGS
  }

  public BatchFileOptions {
    Objects.requireNonNull(pageFormat, "pageFormat");
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(budget, "budget");
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

  /**
   * The page format by default: v1 pages with v2 encodings were the smallest (3.26 vs 3.73 bytes a
   * row) and fastest to write and read here (benchmarks/RESULTS.md, "Column writer (issue 14)").
   * A reader must know DELTA_BINARY_PACKED and DELTA_BYTE_ARRAY (parquet-java, Arrow, DuckDB,
   * Spark 3.3+, Trino do); {@link PageFormat#V1} is for one that does not.
   */
  public static final PageFormat DEFAULT_PAGE_FORMAT = PageFormat.V1_PAGES_V2_ENCODINGS;

  /** The defaults, encoding on the calling thread. */
  public static BatchFileOptions defaults() {
    return new BatchFileOptions(DEFAULT_ROW_GROUP_ROWS, DEFAULT_ZSTD_LEVEL, DEFAULT_PAGE_FORMAT, Runnable::run, 1, new RowGroupBudget(1));
  }

  public BatchFileOptions withRowGroupRows(int rows) {
    return new BatchFileOptions(rows, zstdLevel, pageFormat, executor, rowGroupsInFlight, budget);
  }

  public BatchFileOptions withZstdLevel(int level) {
    return new BatchFileOptions(rowGroupRows, level, pageFormat, executor, rowGroupsInFlight, budget);
  }

  public BatchFileOptions withPageFormat(PageFormat format) {
    return new BatchFileOptions(rowGroupRows, zstdLevel, format, executor, rowGroupsInFlight, budget);
  }

  /**
   * Encodes row groups on {@code e}, at most {@code inFlight} ahead of the writer, and at most
   * {@code inFlight} held at once by all the files written with the options returned (a new
   * {@link RowGroupBudget}).
   */
  public BatchFileOptions withExecutor(Executor e, int inFlight) {
    return new BatchFileOptions(rowGroupRows, zstdLevel, pageFormat, e, inFlight, new RowGroupBudget(inFlight));
  }
}
