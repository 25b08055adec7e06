package io.cairn.objectstore.exceptions;

/** A store URI or configuration value is invalid; the message names the key or URI part. */
public class ObjectStoreConfigException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public ObjectStoreConfigException(String message) {
    super(message);
  }

  public ObjectStoreConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
