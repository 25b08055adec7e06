package io.cairn.objectstore.exceptions;

/** A byte range starts beyond the end of the object. */
public class InvalidRangeException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public InvalidRangeException(String message) {
    super(message);
  }

  public InvalidRangeException(String message, Throwable cause) {
    super(message, cause);
  }
}
