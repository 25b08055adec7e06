package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Type;
import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A {@link ColumnVector.LongsWriter} written in ranges, in any order, gives the column one array
 * written the same way holds: one array up to its threshold, chunks above it, the same values (0
 * where nothing was written) and the same NULLs. Chunks here hold 2 to 16 values.
 */
class LongsWriterTest {

  @Test
  void rangesWrittenInAnyOrderReadBackAsOneArrayWouldHoldThem() {
    Random r = new Random(11);
    int chunkedColumns = 0;
    for (int round = 0; round < 500; round++) {
      int shift = 1 + r.nextInt(4);
      int size = r.nextInt(200);
      int chunkedAbove = r.nextBoolean() ? size : r.nextInt(40);
      ColumnVector.LongsWriter w = new ColumnVector.LongsWriter(Type.BIGINT, size, shift, chunkedAbove);
      assertThat(w.arrayOrNull() == null).as("round %d", round).isEqualTo(size > chunkedAbove);
      long[] oracle = new long[size];
      for (int op = 0, ops = r.nextInt(12); op < ops && size > 0; op++) {
        int from = r.nextInt(size);
        int n = r.nextInt(size - from + 1);
        switch (r.nextInt(3)) {
          case 0 -> {
            long[] src = new long[n + 5];
            for (int k = 0; k < src.length; k++) {
              src[k] = r.nextLong();
            }
            int off = r.nextInt(6);
            n = Math.min(n, src.length - off);
            w.copyFrom(src, off, from, n);
            System.arraycopy(src, off, oracle, from, n);
          }
          case 1 -> {
            long v = r.nextLong();
            w.fill(from, from + n, v);
            java.util.Arrays.fill(oracle, from, from + n, v);
          }
          default -> {
            long v = r.nextLong();
            w.set(from, v);
            oracle[from] = v;
          }
        }
      }
      BitSet nulls = new BitSet();
      for (int i = 0; i < size; i++) {
        if (r.nextInt(10) == 0) {
          nulls.set(i);
        }
      }
      boolean withNulls = r.nextBoolean();
      ColumnVector.Longs col = w.build(withNulls ? nulls : null);
      assertThat(col.isChunked()).as("round %d", round).isEqualTo(size > chunkedAbove);
      chunkedColumns += col.isChunked() ? 1 : 0;
      assertThat(col.size()).isEqualTo(size);
      for (int i = 0; i < size; i++) {
        assertThat(col.getLong(i)).as("round %d row %d", round, i).isEqualTo(oracle[i]);
        assertThat(col.isNull(i)).isEqualTo(withNulls && nulls.get(i));
      }
      long[] copied = new long[size];
      col.copyTo(0, size, copied, 0);
      assertThat(copied).isEqualTo(oracle);
    }
    assertThat(chunkedColumns).as("columns that were chunked").isGreaterThan(100);
  }

  @Test
  void aRangeOutsideTheColumnIsRefusedAndNamed() {
    ColumnVector.LongsWriter w = new ColumnVector.LongsWriter(Type.BIGINT, 10, 2, 4);
    assertThatThrownBy(() -> w.copyFrom(new long[20], 0, 8, 5)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> w.fill(3, 11, 1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> new ColumnVector.LongsWriter(Type.BIGINT, -1)).hasMessageContaining("-1 values");
  }
}
