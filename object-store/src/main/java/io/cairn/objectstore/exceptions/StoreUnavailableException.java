package io.cairn.objectstore.exceptions;

/** The store could not be reached or kept failing (connection refused, timeouts, throttling, 5xx) after the configured retries. */
public class StoreUnavailableException extends ObjectStoreException {
  private static final long serialVersionUID = 1L;

  public StoreUnavailableException(String message) {
    super(message);
  }

  public StoreUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
