package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Type;
import io.cairn.engine.trace.ColumnVector;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.page.PageWriter;
import org.apache.parquet.column.statistics.SizeStatistics;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.column.statistics.geospatial.GeospatialStatistics;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.junit.jupiter.api.Test;

/**
 * {@link BulkPageEncoder#writeConstantLongs} hands the page writer exactly what {@link
 * BulkPageEncoder#writeLongs} hands it for the same column stored value by value: every page's bytes,
 * counts, statistics and encodings, and the dictionary page, for sizes around the page and run
 * boundaries (including the one-row chunk, whose dictionary does not pay) and every page format.
 */
class ConstantColumnPagesTest {
  private static final ColumnDescriptor TIME =
      new ColumnDescriptor(new String[] {"_time"}, Types.required(PrimitiveTypeName.INT64).named("_time"), 0, 0);

  @Test
  void aConstantColumnGivesThePagesOfItsValuesWrittenOneByOne() throws IOException {
    int p = BulkPageEncoder.PAGE_ROWS;
    int[] sizes = {0, 1, 2, 7, 8, 9, 100, p - 1, p, p + 1, 3 * p + 17};
    long[] values = {0, 1, -1, 7, Long.MIN_VALUE, Long.MAX_VALUE, 123_456_789_012L};
    boolean[][] formats = {{false, false}, {true, true}, {false, true}};
    int compared = 0;
    for (boolean[] f : formats) {
      for (int rows : sizes) {
        for (long value : values) {
          Recorder constant = new Recorder();
          new BulkPageEncoder(f[0], f[1]).writeConstantLongs(constant, TIME, value, rows);
          long[] a = new long[rows];
          Arrays.fill(a, value);
          Recorder stored = new Recorder();
          new BulkPageEncoder(f[0], f[1]).writeLongs(stored, TIME, new ColumnVector.Longs(Type.BIGINT, a, null, rows), true, 0, rows, true);
          String what = "rows " + rows + ", value " + value + ", v2 pages " + f[0] + ", v2 encodings " + f[1];
          assertThat(constant.calls).as(what).isEqualTo(stored.calls);
          int pages = (rows + p - 1) / p;
          int dictionaryPages = rows > 1 ? 1 : 0; // a one-row chunk's dictionary does not pay
          assertThat(constant.calls).as(what).hasSize(pages + dictionaryPages);
          compared++;
        }
      }
    }
    assertThat(compared).isEqualTo(formats.length * sizes.length * values.length);
  }

  /** Records every call as text: bytes in hex, counts, statistics, encodings. */
  private static final class Recorder implements PageWriter {
    final List<String> calls = new ArrayList<>();

    private static String hex(BytesInput b) throws IOException {
      return HexFormat.of().formatHex(b.toByteArray());
    }

    @Override
    public void writePage(BytesInput bytes, int valueCount, Statistics<?> statistics, Encoding rl, Encoding dl, Encoding values)
        throws IOException {
      writePage(bytes, valueCount, -1, statistics, rl, dl, values);
    }

    @Override
    public void writePage(BytesInput bytes, int valueCount, int rowCount, Statistics<?> statistics, Encoding rl, Encoding dl,
        Encoding values) throws IOException {
      calls.add("v1 " + hex(bytes) + " values " + valueCount + " rows " + rowCount + " " + statistics + " nulls "
          + statistics.getNumNulls() + " " + rl + " " + dl + " " + values);
    }

    @Override
    public void writePage(BytesInput bytes, int valueCount, int rowCount, Statistics<?> statistics, SizeStatistics size,
        GeospatialStatistics geo, Encoding rl, Encoding dl, Encoding values) throws IOException {
      writePage(bytes, valueCount, rowCount, statistics, rl, dl, values);
    }

    @Override
    public void writePageV2(int rowCount, int nullCount, int valueCount, BytesInput repetitionLevels, BytesInput definitionLevels,
        Encoding dataEncoding, BytesInput data, Statistics<?> statistics) throws IOException {
      calls.add("v2 rows " + rowCount + " nulls " + nullCount + " values " + valueCount + " rl " + hex(repetitionLevels) + " dl "
          + hex(definitionLevels) + " " + dataEncoding + " " + hex(data) + " " + statistics + " nulls " + statistics.getNumNulls());
    }

    @Override
    public void writePageV2(int rowCount, int nullCount, int valueCount, BytesInput repetitionLevels, BytesInput definitionLevels,
        Encoding dataEncoding, BytesInput data, Statistics<?> statistics, SizeStatistics size, GeospatialStatistics geo)
        throws IOException {
      writePageV2(rowCount, nullCount, valueCount, repetitionLevels, definitionLevels, dataEncoding, data, statistics);
    }

    @Override
    public long getMemSize() {
      return 0;
    }

    @Override
    public long allocatedSize() {
      return 0;
    }

    @Override
    public void writeDictionaryPage(DictionaryPage page) throws IOException {
      calls.add("dictionary " + hex(page.getBytes()) + " entries " + page.getDictionarySize() + " " + page.getEncoding());
    }

    @Override
    public String memUsageString(String prefix) {
      return prefix;
    }
  }
}
