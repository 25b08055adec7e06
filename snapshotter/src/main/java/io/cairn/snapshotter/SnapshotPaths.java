package io.cairn.snapshotter;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The snapshot store layout under a prefix: {@code batches/<arrangement>/<batch-id>.parquet}
 * (write-once) and {@code snapshots/<tick, 20 digits>-<uuid>.manifest.json} (write-once, the
 * commit point). Arrangement names are kept as they are when made of {@code [A-Za-z0-9._-]};
 * other bytes are percent-encoded.
 */
public final class SnapshotPaths {
  private static final Pattern MANIFEST = Pattern.compile("(\\d{20})-([0-9a-fA-F-]{36})\\.manifest\\.json");
  private final String prefix;

  /** {@code prefix} is "" or a key prefix without trailing '/'. */
  public SnapshotPaths(String prefix) {
    String p = prefix == null ? "" : prefix.strip();
    while (p.endsWith("/")) {
      p = p.substring(0, p.length() - 1);
    }
    while (p.startsWith("/")) {
      p = p.substring(1);
    }
    this.prefix = p.isEmpty() ? "" : p + "/";
  }

  public String prefix() {
    return prefix;
  }

  public String batchesPrefix() {
    return prefix + "batches/";
  }

  public String snapshotsPrefix() {
    return prefix + "snapshots/";
  }

  /** The key of a batch file relative to the prefix (what the manifest stores). */
  public static String batchPath(String arrangement, String batchId) {
    return "batches/" + encode(arrangement) + "/" + encode(batchId) + ".parquet";
  }

  /** The full key of a path relative to the prefix. */
  public String key(String relativePath) {
    return prefix + relativePath;
  }

  public String manifestKey(long tick, String snapshotId) {
    return snapshotsPrefix() + String.format(Locale.ROOT, "%020d-%s.manifest.json", tick, snapshotId);
  }

  /** The tick and id encoded in a manifest key, or empty if the key is not a manifest's. */
  public Optional<ManifestInfo> parseManifestKey(String key, long size, java.time.Instant lastModified) {
    if (!key.startsWith(snapshotsPrefix())) {
      return Optional.empty();
    }
    Matcher m = MANIFEST.matcher(key.substring(snapshotsPrefix().length()));
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.of(new ManifestInfo(key, Long.parseLong(m.group(1)), m.group(2), size, lastModified));
  }

  static String encode(String s) {
    StringBuilder sb = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || (c == '.' && sb.length() > 0)) {
        sb.append(c);
      } else {
        sb.append('%').append(String.format(Locale.ROOT, "%02X", b & 0xff));
      }
    }
    return sb.toString();
  }
}
