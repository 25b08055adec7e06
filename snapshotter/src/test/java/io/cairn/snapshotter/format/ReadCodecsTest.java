package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputDecompressor;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.junit.jupiter.api.Test;

/**
 * The batch-file read codecs decompress both ZSTD page styles cairn has written — one frame with
 * its size (zstd-jni's compress, {@link ZstdPageCompressor}) and a streamed frame without it
 * (parquet-java's own ZSTD codec, files written before it) — through both decompress methods,
 * refuse a page whose size disagrees with its header, and hand other codecs to parquet-java.
 */
class ReadCodecsTest {
  private static byte[] page(int size, long seed) {
    byte[] b = new byte[size];
    Random r = new Random(seed);
    for (int i = 0; i < size; i++) {
      b[i] = (byte) (r.nextInt(16) + (i % 7)); // compressible, not trivial
    }
    return b;
  }

  private static byte[] streamed(byte[] raw) throws IOException {
    ByteArrayOutputStream bos = new ByteArrayOutputStream();
    try (ZstdOutputStream z = new ZstdOutputStream(bos, 3)) {
      z.write(raw);
    }
    return bos.toByteArray();
  }

  @Test
  void zstdPagesOfBothStylesDecompressThroughBothMethods() throws IOException {
    try (ReadCodecs codecs = new ReadCodecs()) {
      BytesInputDecompressor d = codecs.getDecompressor(CompressionCodecName.ZSTD);
      for (int size : new int[] {0, 1, 1000, 300_000}) {
        byte[] raw = page(size, size);
        for (byte[] compressed : new byte[][] {Zstd.compress(raw, 1), streamed(raw)}) {
          assertThat(d.decompress(BytesInput.from(compressed), size).toByteArray()).isEqualTo(raw);

          ByteBuffer in = ByteBuffer.allocate(compressed.length + 10);
          in.position(5);
          in.put(compressed);
          in.position(5);
          ByteBuffer out = ByteBuffer.allocate(size + 3);
          out.put((byte) 42);
          d.decompress(in, compressed.length, out, size);
          assertThat(in.position()).as("input moved past the page").isEqualTo(5 + compressed.length);
          assertThat(out.position()).as("output moved past what was written").isEqualTo(1 + size);
          byte[] got = new byte[size];
          out.position(1);
          out.get(got);
          assertThat(got).isEqualTo(raw);
        }
      }
    }
  }

  @Test
  void aPageThatDisagreesWithItsHeaderIsAnErrorNamingBothSizes() {
    byte[] raw = page(1000, 1);
    byte[] compressed = Zstd.compress(raw, 1);
    try (ReadCodecs codecs = new ReadCodecs()) {
      BytesInputDecompressor d = codecs.getDecompressor(CompressionCodecName.ZSTD);
      assertThatThrownBy(() -> d.decompress(BytesInput.from(compressed), 2000)).isInstanceOf(IOException.class)
          .hasMessageContaining("1000").hasMessageContaining("2000");
      assertThatThrownBy(() -> d.decompress(BytesInput.from(compressed), 999)).isInstanceOf(IOException.class)
          .hasMessageContaining(compressed.length + " bytes");
      byte[] garbage = compressed.clone();
      garbage[0] ^= 0x55; // bad magic number
      assertThatThrownBy(() -> d.decompress(BytesInput.from(garbage), 1000)).isInstanceOf(IOException.class)
          .hasMessageContaining("Cannot decompress a ZSTD page");
    }
  }

  @Test
  void uncompressedPassesThroughAndOtherCodecsGoToParquetJava() throws IOException {
    byte[] raw = page(500, 2);
    try (ReadCodecs codecs = new ReadCodecs()) {
      assertThat(codecs.getDecompressor(CompressionCodecName.UNCOMPRESSED).decompress(BytesInput.from(raw), 500).toByteArray())
          .isEqualTo(raw);
      BytesInputDecompressor gzip = codecs.getDecompressor(CompressionCodecName.GZIP);
      ByteArrayOutputStream bos = new ByteArrayOutputStream();
      try (java.util.zip.GZIPOutputStream g = new java.util.zip.GZIPOutputStream(bos)) {
        g.write(raw);
      }
      assertThat(gzip.decompress(BytesInput.from(bos.toByteArray()), 500).toByteArray()).isEqualTo(raw);
      assertThatThrownBy(() -> codecs.getCompressor(CompressionCodecName.ZSTD)).isInstanceOf(UnsupportedOperationException.class);
    }
  }
}
