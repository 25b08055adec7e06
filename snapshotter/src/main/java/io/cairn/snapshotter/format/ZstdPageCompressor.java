package io.cairn.snapshotter.format;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import java.io.IOException;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputCompressor;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Compresses Parquet pages with zstd-jni directly (one frame per page, as parquet-java's own ZSTD
 * codec writes them), reusing one native context and one output buffer. Confined to one thread;
 * {@link #release()} frees the context.
 */
final class ZstdPageCompressor implements BytesInputCompressor {
  private final ZstdCompressCtx ctx = new ZstdCompressCtx();
  private byte[] out = new byte[0];

  ZstdPageCompressor(int level) {
    ctx.setLevel(level);
    ctx.setChecksum(false);
  }

  @Override
  public BytesInput compress(BytesInput bytes) throws IOException {
    byte[] in = bytes.toByteArray();
    int bound = (int) Zstd.compressBound(in.length);
    if (out.length < bound) {
      out = new byte[Math.max(bound, out.length * 2)];
    }
    int n = ctx.compressByteArray(out, 0, out.length, in, 0, in.length);
    return BytesInput.from(java.util.Arrays.copyOf(out, n)); // compressed pages are small: copy, do not lend the buffer
  }

  @Override
  public CompressionCodecName getCodecName() {
    return CompressionCodecName.ZSTD;
  }

  @Override
  public void release() {
    ctx.close();
  }
}
