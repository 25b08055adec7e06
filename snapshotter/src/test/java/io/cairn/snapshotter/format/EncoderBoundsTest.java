package io.cairn.snapshotter.format;

import static io.cairn.snapshotter.format.ColumnBatchWriterTest.DESC;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.KEY;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.VAL;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.assertSameContents;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.random;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.readNew;
import static io.cairn.snapshotter.format.ColumnBatchWriterTest.readOld;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.trace.Batch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.parquet.ParquetReadOptions;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.io.LocalInputFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The encoder's memory bound ({@link RowGroupBudget}) and its skipping of dictionaries that cannot pay. */
class EncoderBoundsTest {
  static final ExecutorService ENCODE = Executors.newFixedThreadPool(2);
  static final ExecutorService WRITERS = Executors.newFixedThreadPool(4);

  @TempDir Path dir;

  @AfterAll
  static void stop() {
    ENCODE.shutdownNow();
    WRITERS.shutdownNow();
  }

  @Test
  void filesWrittenAtOnceHoldAtMostTheirSharedBudgetOfRowGroups() throws Exception {
    BatchFileOptions shared = BatchFileOptions.defaults().withRowGroupRows(500).withExecutor(ENCODE, 3);
    List<Batch> batches = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      batches.add(random(40 + i, 6_000)); // 12 row groups each
    }
    for (int round = 0; round < 5; round++) {
      List<Future<byte[]>> files = new ArrayList<>();
      for (Batch b : batches) {
        files.add(WRITERS.submit(() -> ParquetBatchFiles.toBytes("arr", 0, b, shared)));
      }
      for (int i = 0; i < batches.size(); i++) {
        byte[] alone = ParquetBatchFiles.toBytes("arr", 0, batches.get(i), BatchFileOptions.defaults().withRowGroupRows(500));
        assertThat(files.get(i).get()).as("round %d, file %d: the same bytes as written alone", round, i).isEqualTo(alone);
      }
    }
    assertThat(shared.budget().peakHeld()).isBetween(1, 3);
    assertThat(shared.budget().held()).isZero();
  }

  @Test
  void aFailedWriteReturnsItsRowGroupsToTheBudget() {
    BatchFileOptions shared = BatchFileOptions.defaults().withRowGroupRows(500).withExecutor(ENCODE, 3);
    Batch b = random(7, 6_000);
    OutputStream failing = new ByteArrayOutputStream() {
      @Override
      public synchronized void write(byte[] bytes, int off, int len) {
        if (size() + len > 20_000) {
          throw new UncheckedIOException(new IOException("disk full"));
        }
        super.write(bytes, off, len);
      }
    };
    assertThatThrownBy(() -> ParquetBatchFiles.write("arr", 0, b, failing, shared)).hasMessageContaining("disk full");
    assertThat(shared.budget().held()).isZero();
    // the budget is whole again: a next file is written
    assertSameContents(readNew(ParquetBatchFiles.toBytes("arr", 0, b, shared), b), b);
  }

  @Test
  void aColumnOfDistinctValuesIsWrittenWithoutADictionaryAndEveryReaderReadsIt() throws Exception {
    Batch b = random(9, 20_000); // val_id: random longs; name: 51 strings
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b, BatchFileOptions.defaults().withRowGroupRows(8_000));
    Path f = dir.resolve("b.parquet");
    Files.write(f, bytes);
    try (ParquetFileReader r = ParquetFileReader.open(new LocalInputFile(f), ParquetReadOptions.builder(new PlainParquetConfiguration()).build())) {
      List<BlockMetaData> blocks = r.getFooter().getBlocks();
      assertThat(blocks).hasSize(3);
      for (BlockMetaData block : blocks) {
        ColumnChunkMetaData name = block.getColumns().get(1);
        ColumnChunkMetaData valId = block.getColumns().get(2);
        assertThat(valId.getPath().toDotString()).isEqualTo("val_id");
        assertThat(valId.getEncodings()).doesNotContain(Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY)
            .contains(Encoding.DELTA_BINARY_PACKED);
        assertThat(name.getEncodings()).containsAnyOf(Encoding.PLAIN_DICTIONARY, Encoding.RLE_DICTIONARY);
      }
    }
    assertSameContents(readNew(bytes, b), b);
    assertSameContents(readOld(bytes, b), b);
    long count = 0;
    long xor = 0;
    for (int i = 0; i < b.size(); i++) {
      if (!b.valColumn(0).isNull(i)) {
        count++;
        xor ^= (Long) b.valColumn(0).get(i);
      }
    }
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*), count(val_id), bit_xor(val_id) FROM read_parquet('" + f + "')")) {
      rs.next();
      assertThat(rs.getLong(1)).isEqualTo(b.size());
      assertThat(rs.getLong(2)).isEqualTo(count);
      assertThat(rs.getLong(3)).isEqualTo(xor);
    }
  }

  @Test
  void onlyColumnsWithoutARepeatInTheirFirstValuesLoseTheDictionary() {
    // val_id: random longs; price repeats NaN, name 51 strings, at 1M values, id sorted with repeats; ok is BOOLEAN
    Batch b = random(9, 20_000);
    assertThat(ColumnBatchWriter.uniqueColumns(b, ParquetBatchFiles.parquetSchema(KEY, VAL), 0, 8_000)).containsExactly("val_id");
    // fewer non-NULL values than the probe: nothing to go by, the dictionary is tried
    assertThat(ColumnBatchWriter.uniqueColumns(b, ParquetBatchFiles.parquetSchema(KEY, VAL), 0, ColumnBatchWriter.PROBE)).isEmpty();
  }
}
