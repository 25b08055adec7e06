package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.AccessDeniedException;
import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.InvalidKeyException;
import io.cairn.objectstore.exceptions.InvalidRangeException;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * A flat namespace of immutable byte objects, the same contract over a local directory, S3 (and
 * S3-compatible servers) and memory.
 *
 * <h2>Keys</h2>
 * A key is a '/'-separated relative path: non-empty, at most 1024 UTF-8 bytes, no leading or
 * trailing '/', no empty, "." or ".." segment, no control character and no '\'. Every method
 * checks its keys before doing any I/O and throws {@link InvalidKeyException} naming the key.
 * Ordering of keys is the lexicographic order of their UTF-8 bytes (S3's order), see
 * {@link ObjectKeys#ORDER}. A local directory cannot hold both "a" and "a/b": writing the second
 * fails with an {@link ObjectStoreException} there.
 *
 * <h2>Guarantees</h2>
 * <ul>
 *   <li>Writes are atomic: readers see the whole old object or the whole new one, never a
 *       partial one; a failed write leaves no visible object (and, on S3, no multipart parts).
 *   <li>Writes are durable when the method returns (fsync locally; acknowledged by S3).
 *   <li>Reads after a completed write see it (read-after-write; S3 is strongly consistent).
 *   <li>{@link #putIfAbsent} is linearizable: of any number of racing writers to one key,
 *       exactly one succeeds, every other gets {@link ObjectAlreadyExistsException}.
 * </ul>
 *
 * <h2>Failures</h2>
 * Every method throws unchecked exceptions from {@code io.cairn.objectstore.exceptions}:
 * {@link InvalidKeyException} (bad key, nothing sent), {@link ObjectNotFoundException},
 * {@link BucketNotFoundException} (missing bucket or root directory), {@link AccessDeniedException}
 * (wrong credentials, never retried), {@link StoreUnavailableException} (unreachable, timeouts,
 * throttling or 5xx after the store's bounded retries) and {@link ObjectStoreException} for the
 * rest. Messages name the store and the key and never contain a secret. A write that throws
 * anything but {@link ObjectAlreadyExistsException} or {@link InvalidKeyException} has an unknown
 * outcome only if the exception says so; implementations clean up what they know they created.
 *
 * <p>Implementations are thread-safe.
 */
public interface ObjectStore extends AutoCloseable {

  /** Writes (or replaces) {@code key} with {@code bytes}. */
  void put(String key, byte[] bytes);

  /**
   * Writes (or replaces) {@code key} with exactly {@code length} bytes read from {@code in}. Large
   * objects are streamed (S3: multipart with parallel parts), never held whole in memory. If the
   * stream ends before {@code length} bytes, or throws, nothing becomes visible and an
   * {@link ObjectStoreException} is thrown. The stream is not closed; bytes past {@code length}
   * are not read.
   */
  void put(String key, InputStream in, long length);

  /** Writes (or replaces) {@code key} with the content of the regular file {@code file}. */
  void put(String key, Path file);

  /**
   * Creates {@code key} with {@code bytes} only if no object has that key, atomically.
   *
   * @throws ObjectAlreadyExistsException if the key exists (including when a racing writer won);
   *     the existing object is unchanged
   */
  void putIfAbsent(String key, byte[] bytes);

  /**
   * Opens the whole object for streaming. The caller must close the stream. If the object is
   * replaced or deleted while being read, the stream either keeps returning the old content or
   * fails with an {@link IOException}; it never mixes versions silently.
   *
   * @throws ObjectNotFoundException if the key names no object
   */
  InputStream get(String key);

  /**
   * Opens bytes {@code [offset, min(offset + length, size))} of the object. A range reaching past
   * the end is cut at the end; {@code offset == size} gives an empty stream.
   *
   * @throws IllegalArgumentException if {@code offset} or {@code length} is negative
   * @throws InvalidRangeException if {@code offset > size}
   * @throws ObjectNotFoundException if the key names no object
   */
  InputStream getRange(String key, long offset, long length);

  /**
   * Whether {@link #openWrite} streams an object of unknown length as it is produced, with bounded
   * memory (S3: a multipart upload fed part by part; a local directory: a temporary file renamed at
   * commit). A store that does not is written with {@link #put(String, Path)} once the content is
   * complete. A decorator answers as the store it wraps, and forwards {@code openWrite}.
   */
  default boolean supportsStreamingWrites() {
    return false;
  }

  /**
   * Opens a write of {@code key}; nothing is visible until {@link ObjectWrite#commit()}.
   *
   * @throws UnsupportedOperationException unless {@link #supportsStreamingWrites()}
   * @throws io.cairn.objectstore.exceptions.InvalidKeyException if the key is invalid (nothing sent)
   */
  default ObjectWrite openWrite(String key) {
    throw new UnsupportedOperationException("Cannot stream a write to " + describe() + ": it writes whole objects only (put)");
  }

  /** Reads the whole object into memory; for small objects (manifests, catalog entries). */
  default byte[] readAllBytes(String key) {
    try (InputStream in = get(key)) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot read " + key + " in " + describe() + ": " + e.getMessage(), e);
    }
  }

  /** Describes the object, or empty if the key names no object. */
  Optional<ObjectInfo> head(String key);

  /**
   * Lists every object whose key starts with {@code prefix} (a plain string prefix, "" for all),
   * sorted by {@link ObjectKeys#ORDER}. Pages of the backend (S3: 1,000 keys) are followed inside.
   * Objects written or deleted during the listing may or may not appear.
   */
  List<ObjectInfo> list(String prefix);

  /**
   * Deletes the keys; keys that name no object are ignored. Batched (S3: 1,000 keys per request).
   *
   * @throws ObjectStoreException naming the keys that could not be deleted
   */
  void delete(Collection<String> keys);

  /** Deletes one key; no-op if absent. */
  default void delete(String key) {
    delete(List.of(key));
  }

  /** A short description for logs and messages: "file:///dir", "s3://bucket/prefix at endpoint". */
  String describe();

  /** Releases clients and threads. Idempotent. */
  @Override
  void close();
}
