package io.cairn.objectstore.exceptions;

/** A key is not a valid object key (empty, absolute, with empty, '.' or '..' segments, control characters, or too long). Raised before any request is sent. */
public class InvalidKeyException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public InvalidKeyException(String message) {
    super(message);
  }

  public InvalidKeyException(String message, Throwable cause) {
    super(message, cause);
  }
}
