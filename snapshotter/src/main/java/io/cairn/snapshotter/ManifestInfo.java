package io.cairn.snapshotter;

import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

/** A manifest as listed (not yet read): its key and what its name says. */
public record ManifestInfo(String key, long tick, String snapshotId, long size, Instant lastModified) {
  /** Newest first: by tick, then by write time, then by key. */
  public static final Comparator<ManifestInfo> NEWEST_FIRST =
      Comparator.comparingLong(ManifestInfo::tick)
          .thenComparing(ManifestInfo::lastModified)
          .thenComparing(ManifestInfo::key)
          .reversed();

  public ManifestInfo {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(snapshotId, "snapshotId");
    Objects.requireNonNull(lastModified, "lastModified");
  }
}
