package io.cairn.snapshotter.format;

import com.github.luben.zstd.ZstdDecompressCtx;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.parquet.bytes.BytesInput;
import org.apache.parquet.compression.CompressionCodecFactory;
import org.apache.parquet.conf.PlainParquetConfiguration;
import org.apache.parquet.hadoop.CodecFactory;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * The page decompressors of one batch-file read: ZSTD (what cairn writes) through zstd-jni
 * directly, one reused native context; UNCOMPRESSED as is; any other codec through parquet-java's
 * own codec factory, created on first need. Why: parquet-java's factory builds a Hadoop {@code
 * Configuration} and Hadoop codec objects per read, and the first one in a JVM parses Hadoop's
 * default XML resources and loads their classes — about 250–300 ms of every restart's first
 * snapshot load on the 2-core machine, for no work on the data. Read-only ({@link #getCompressor}
 * refuses); confined to one thread; {@link #release()} frees the native context.
 */
final class ReadCodecs implements CompressionCodecFactory, AutoCloseable {
  private ZstdPages zstd;
  private CompressionCodecFactory fallback;

  @Override
  public BytesInputDecompressor getDecompressor(CompressionCodecName codec) {
    switch (codec) {
      case UNCOMPRESSED:
        return Uncompressed.INSTANCE;
      case ZSTD:
        if (zstd == null) {
          zstd = new ZstdPages();
        }
        return zstd;
      default:
        if (fallback == null) {
          fallback = new CodecFactory(new PlainParquetConfiguration(), 0);
        }
        return fallback.getDecompressor(codec);
    }
  }

  @Override
  public BytesInputCompressor getCompressor(CompressionCodecName codec) {
    throw new UnsupportedOperationException("Cannot compress with the batch-file read codecs (" + codec + ")");
  }

  @Override
  public void close() {
    release();
  }

  @Override
  public void release() {
    if (zstd != null) {
      zstd.ctx.close();
      zstd = null;
    }
    if (fallback != null) {
      fallback.release();
      fallback = null;
    }
  }

  /** ZSTD pages: one or more zstd frames each, decompressed into exactly the page header's size. */
  static final class ZstdPages implements BytesInputDecompressor {
    private final ZstdDecompressCtx ctx = new ZstdDecompressCtx();

    @Override
    public BytesInput decompress(BytesInput bytes, int uncompressedSize) throws IOException {
      // the page's bytes where they lie (a slice of the column chunk read), not a copy
      ByteBuffer b = bytes.toByteBuffer();
      byte[] in;
      int off;
      int len = b.remaining();
      if (b.hasArray()) {
        in = b.array();
        off = b.arrayOffset() + b.position();
      } else {
        in = new byte[len];
        b.get(in);
        off = 0;
      }
      byte[] out = new byte[uncompressedSize];
      int n;
      try {
        n = ctx.decompressByteArray(out, 0, uncompressedSize, in, off, len);
      } catch (RuntimeException e) {
        throw new IOException("Cannot decompress a ZSTD page of " + len + " bytes: " + e.getMessage(), e);
      }
      check(n, uncompressedSize, len);
      return BytesInput.from(out);
    }

    @Override
    public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize) throws IOException {
      // as parquet-java's own decompressors: the input's position moves past the page, the output's
      // past what was written (no flip)
      byte[] in = new byte[compressedSize];
      input.get(in);
      byte[] out = new byte[uncompressedSize];
      int n;
      try {
        n = ctx.decompressByteArray(out, 0, uncompressedSize, in, 0, compressedSize);
      } catch (RuntimeException e) {
        throw new IOException("Cannot decompress a ZSTD page of " + compressedSize + " bytes: " + e.getMessage(), e);
      }
      check(n, uncompressedSize, compressedSize);
      output.put(out);
    }

    private static void check(int n, int expected, int compressed) throws IOException {
      if (n != expected) {
        throw new IOException("A ZSTD page of " + compressed + " bytes decompressed to " + n + " bytes; its header says "
            + expected);
      }
    }

    @Override
    public void release() {} // the context is the factory's, freed by ReadCodecs.release()
  }

  /** Pages stored without compression. */
  private static final class Uncompressed implements BytesInputDecompressor {
    static final Uncompressed INSTANCE = new Uncompressed();

    @Override
    public BytesInput decompress(BytesInput bytes, int uncompressedSize) {
      return bytes;
    }

    @Override
    public void decompress(ByteBuffer input, int compressedSize, ByteBuffer output, int uncompressedSize) {
      ByteBuffer in = input.duplicate();
      in.limit(in.position() + compressedSize);
      output.put(in);
      input.position(input.position() + compressedSize);
    }

    @Override
    public void release() {}
  }
}
