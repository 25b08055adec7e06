package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.InvalidRangeException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;

/** Small helpers shared by the implementations. */
final class StoreSupport {
  private StoreSupport() {}

  static void checkRange(String key, long offset, long length) {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "Cannot read range of " + key + ": offset " + offset + " and length " + length + " must be >= 0");
    }
  }

  static InvalidRangeException rangeBeyondEnd(String store, String key, long offset, long size) {
    return new InvalidRangeException(
        "Cannot read " + key + " in " + store + " from offset " + offset + ": object has only " + size + " bytes");
  }

  static void checkLength(String key, long length) {
    if (length < 0) {
      throw new IllegalArgumentException("Cannot put " + key + ": negative length " + length);
    }
  }

  /** Reads exactly {@code n} bytes or fails naming the key. */
  static byte[] readExactly(String store, String key, InputStream in, int n) {
    try {
      byte[] bytes = in.readNBytes(n);
      if (bytes.length < n) {
        throw shortStream(store, key, bytes.length, n);
      }
      return bytes;
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + store + ": reading the source failed: " + e, e);
    }
  }

  static ObjectStoreException shortStream(String store, String key, long got, long expected) {
    return new ObjectStoreException(
        "Cannot put " + key + " in " + store + ": source stream ended after " + got + " of " + expected + " bytes");
  }

  static MessageDigest md5() {
    try {
      return MessageDigest.getInstance("MD5");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("MD5 is missing from this JVM", e);
    }
  }

  /** The base64 MD5 of {@code len} bytes of {@code bytes} from {@code off}: a Content-MD5 header value. */
  static String base64Md5(byte[] bytes, int off, int len) {
    var md5 = md5();
    md5.update(bytes, off, len);
    return Base64.getEncoder().encodeToString(md5.digest());
  }

  static String md5Hex(byte[] bytes) {
    return HexFormat.of().formatHex(md5().digest(bytes));
  }
}
