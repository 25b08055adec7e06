package io.cairn.objectstore.exceptions;

/** The bucket (or, for a local store, the root directory) does not exist. */
public class BucketNotFoundException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public BucketNotFoundException(String message) {
    super(message);
  }

  public BucketNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
