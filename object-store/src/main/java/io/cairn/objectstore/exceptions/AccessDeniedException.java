package io.cairn.objectstore.exceptions;

/** The store refused the credentials or the operation (wrong key pair, expired token, missing permission). Never retried. */
public class AccessDeniedException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public AccessDeniedException(String message) {
    super(message);
  }

  public AccessDeniedException(String message, Throwable cause) {
    super(message, cause);
  }
}
