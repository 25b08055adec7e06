package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.SplittableRandom;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridDecoder;
import org.junit.jupiter.api.Test;

/**
 * {@link BulkPageEncoder#rle}'s RLE/bit-packing hybrid, read back by parquet-java's decoder, for
 * every bit width from 0 to 32 (the byte-wise packing up to 8 bits, the word-wise one above), counts
 * that are and are not multiples of 8 (a padded last group), runs long enough to be RLE runs and
 * bit-packed stretches longer than one run's 63 groups.
 */
class RleHybridTest {
  @Test
  void everyWidthReadsBackAsWritten() throws IOException {
    SplittableRandom random = new SplittableRandom(7);
    int[] counts = {1, 7, 8, 9, 63, 64, 65, 504, 505, 20_480, 20_483};
    int checked = 0;
    for (int width = 0; width <= 32; width++) {
      long bound = 1L << width;
      for (int n : counts) {
        int[] v = new int[n];
        for (int i = 0; i < n; ) {
          int x = (int) (width == 0 ? 0 : random.nextLong(bound));
          int run = random.nextInt(4) == 0 ? 1 + random.nextInt(40) : 1; // some runs of 8 and more, mostly single values
          for (int k = 0; k < run && i < n; k++) {
            v[i++] = x;
          }
        }
        if (width > 0) {
          v[0] = (int) (bound - 1); // the widest value of the width appears
        }
        BulkPageEncoder.Buf out = new BulkPageEncoder.Buf(16);
        BulkPageEncoder.rle(v, n, width, out);
        RunLengthBitPackingHybridDecoder d = new RunLengthBitPackingHybridDecoder(width, new ByteArrayInputStream(out.buf, 0, out.size));
        for (int i = 0; i < n; i++) {
          assertThat(d.readInt()).as("width %d, %d values, value %d", width, n, i).isEqualTo(v[i]);
        }
        checked++;
      }
    }
    assertThat(checked).isEqualTo(33 * counts.length);
  }
}
