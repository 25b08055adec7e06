package io.cairn.objectstore;

import java.time.Instant;
import java.util.Objects;

/**
 * What a store knows about one object.
 *
 * @param key the object's key, relative to the store's root/prefix
 * @param size length in bytes, {@code >= 0}
 * @param etag an opaque version tag: two {@code head}s of the same key return equal tags only if
 *     the content was not rewritten in between. For S3 it is the server's ETag; for the in-memory
 *     store the MD5 of the content; for a local directory it is derived from size and modification
 *     time. Not comparable across backends.
 * @param lastModified when the object was last written, as reported by the backend
 */
public record ObjectInfo(String key, long size, String etag, Instant lastModified) {
  public ObjectInfo {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(etag, "etag");
    Objects.requireNonNull(lastModified, "lastModified");
    if (size < 0) {
      throw new IllegalArgumentException("Cannot describe object " + key + ": negative size " + size);
    }
  }
}
