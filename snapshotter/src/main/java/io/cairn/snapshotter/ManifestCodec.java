package io.cairn.snapshotter;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Manifest ⇄ bytes. The bytes are compact JSON whose last member is {@code "checksum":
 * "sha256:<hex>"}: the SHA-256 of the exact bytes of the document without that member (the JSON
 * object closed right after the previous member). Any changed byte is therefore detected: in the
 * body by the digest, in the checksum by the digest, in the member's name by its absence.
 */
public final class ManifestCodec {
  private static final byte[] MARKER = ",\"checksum\":\"sha256:".getBytes(StandardCharsets.US_ASCII);
  private static final ObjectMapper MAPPER =
      new ObjectMapper()
          .setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
          .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true)
          .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true)
          .configure(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES, true)
          .configure(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES, true)
          .configure(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS, true); // a sink's NUMERIC value read back exactly

  private ManifestCodec() {}

  public static byte[] encode(Manifest m) {
    byte[] body;
    try {
      body = MAPPER.writeValueAsBytes(m);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot encode manifest " + m.snapshotId() + ": " + e.getMessage(), e);
    }
    String digest = sha256(body);
    byte[] tail = (digest + "\"}").getBytes(StandardCharsets.US_ASCII);
    byte[] out = Arrays.copyOf(body, body.length - 1 + MARKER.length + tail.length);
    System.arraycopy(MARKER, 0, out, body.length - 1, MARKER.length);
    System.arraycopy(tail, 0, out, body.length - 1 + MARKER.length, tail.length);
    return out;
  }

  /**
   * Verifies the checksum and parses.
   *
   * @throws CorruptSnapshotException naming {@code what} and the problem
   */
  public static Manifest decode(String what, byte[] bytes) {
    int at = lastIndexOf(bytes, MARKER);
    if (at < 0) {
      throw new CorruptSnapshotException("Cannot read manifest " + what + ": it has no checksum");
    }
    int start = at + MARKER.length;
    if (bytes.length < start + 2 || bytes[bytes.length - 1] != '}' || bytes[bytes.length - 2] != '"') {
      throw new CorruptSnapshotException("Cannot read manifest " + what + ": it does not end with its checksum");
    }
    String stored = new String(bytes, start, bytes.length - 2 - start, StandardCharsets.US_ASCII);
    byte[] body = Arrays.copyOf(bytes, at + 1);
    body[at] = '}';
    String actual = sha256(body);
    if (!actual.equals(stored)) {
      throw new CorruptSnapshotException(
          "Cannot read manifest " + what + ": checksum mismatch (stored sha256:" + stored + ", computed sha256:" + actual + ")");
    }
    try {
      com.fasterxml.jackson.databind.JsonNode tree = MAPPER.readTree(body);
      if (tree instanceof com.fasterxml.jackson.databind.node.ObjectNode o && !o.has("views")) {
        o.putArray("views"); // format 1 and 2: no views
      }
      if (tree instanceof com.fasterxml.jackson.databind.node.ObjectNode o && !o.has("sinks")) {
        o.putArray("sinks"); // format 1 to 3: no sinks
      }
      return MAPPER.treeToValue(tree, Manifest.class);
    } catch (IOException | RuntimeException e) {
      throw new CorruptSnapshotException("Cannot read manifest " + what + ": " + e.getMessage(), e);
    }
  }

  private static int lastIndexOf(byte[] a, byte[] m) {
    outer:
    for (int i = a.length - m.length; i >= 0; i--) {
      for (int j = 0; j < m.length; j++) {
        if (a[i + j] != m[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
