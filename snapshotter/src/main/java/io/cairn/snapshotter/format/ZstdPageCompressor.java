package io.cairn.snapshotter.format;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.ByteBufferReleaser;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.compression.CompressionCodecFactory.BytesInputCompressor;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Compresses Parquet pages with zstd-jni directly (one frame per page, as parquet-java's own ZSTD
 * codec writes them), reusing one native context and one output buffer. A page held in one array
 * (as {@link BulkPageEncoder} hands them) is compressed where it lies, without a copy. Confined to
 * one thread; {@link #release()} frees the context.
 */
final class ZstdPageCompressor implements BytesInputCompressor {
  private static final HeapByteBufferAllocator HEAP = new HeapByteBufferAllocator();
  private final ZstdCompressCtx ctx = new ZstdCompressCtx();
  private byte[] out = new byte[0];

  ZstdPageCompressor(int level) {
    ctx.setLevel(level);
    ctx.setChecksum(false);
  }

  @Override
  public BytesInput compress(BytesInput bytes) throws IOException {
    int n;
    try (ByteBufferReleaser releaser = new ByteBufferReleaser(HEAP)) {
      ByteBuffer in = bytes.toByteBuffer(releaser); // a page in one array is wrapped, not copied
      int length = in.remaining();
      int bound = (int) Zstd.compressBound(length);
      if (out.length < bound) {
        out = new byte[Math.max(bound, out.length * 2)];
      }
      if (in.hasArray()) {
        n = ctx.compressByteArray(out, 0, out.length, in.array(), in.arrayOffset() + in.position(), length);
      } else {
        byte[] a = new byte[length];
        in.get(a);
        n = ctx.compressByteArray(out, 0, out.length, a, 0, length);
      }
    }
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
