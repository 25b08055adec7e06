package io.cairn.objectstore;

/**
 * A store that writes an object of unknown length as it is produced, with bounded memory (S3: a
 * multipart upload fed part by part; a local directory: a temporary file renamed at commit). A
 * store without this ability is written with {@link ObjectStore#put(String, java.nio.file.Path)}
 * after the content is complete.
 */
public interface SupportsStreamingWrites {

  /**
   * Opens a write of {@code key}; nothing is visible until {@link ObjectWrite#commit()}.
   *
   * @throws io.cairn.objectstore.exceptions.InvalidKeyException if the key is invalid (nothing sent)
   */
  ObjectWrite openWrite(String key);
}
