package io.cairn.objectstore.exceptions;

/** A create-if-absent write found the key already present. The object was not changed; the caller lost the race (or retried a write that had already succeeded). */
public class ObjectAlreadyExistsException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public ObjectAlreadyExistsException(String message) {
    super(message);
  }

  public ObjectAlreadyExistsException(String message, Throwable cause) {
    super(message, cause);
  }
}
