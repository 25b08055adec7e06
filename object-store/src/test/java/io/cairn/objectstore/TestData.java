package io.cairn.objectstore;

import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Deterministic pseudo-random content that is generated, never held whole in memory. */
final class TestData {
  private TestData() {}

  static byte[] bytes(long seed, int length) {
    try (InputStream in = stream(seed, length)) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** {@code length} bytes from a xorshift generator seeded with {@code seed}. */
  static InputStream stream(long seed, long length) {
    return new InputStream() {
      private long state = seed * 0x9E3779B97F4A7C15L + 1;
      private long produced;
      private long word;
      private int left;

      private int nextByte() {
        if (left == 0) {
          state ^= state << 13;
          state ^= state >>> 7;
          state ^= state << 17;
          word = state;
          left = 8;
        }
        int b = (int) (word & 0xff);
        word >>>= 8;
        left--;
        return b;
      }

      @Override
      public int read() {
        if (produced >= length) {
          return -1;
        }
        produced++;
        return nextByte();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        if (len == 0) {
          return 0;
        }
        if (produced >= length) {
          return -1;
        }
        int n = (int) Math.min(len, length - produced);
        for (int i = 0; i < n; i++) {
          b[off + i] = (byte) nextByte();
        }
        produced += n;
        return n;
      }
    };
  }

  static String sha256(InputStream in) throws IOException {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
    byte[] buf = new byte[1 << 16];
    int n;
    while ((n = in.read(buf)) >= 0) {
      md.update(buf, 0, n);
    }
    return HexFormat.of().formatHex(md.digest());
  }

  static String sha256(long seed, long length) throws IOException {
    return sha256(stream(seed, length));
  }
}
