package io.cairn.objectstore.exceptions;

/** The key names no object. */
public class ObjectNotFoundException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public ObjectNotFoundException(String message) {
    super(message);
  }

  public ObjectNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
