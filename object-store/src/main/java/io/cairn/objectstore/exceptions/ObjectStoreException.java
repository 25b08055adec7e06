package io.cairn.objectstore.exceptions;

/**
 * Base of every failure an {@code ObjectStore} reports. Unchecked; messages read
 * "Cannot &lt;operation&gt; &lt;what&gt;: &lt;reason&gt;" and name the store (directory, or bucket and
 * endpoint) and the key, never a credential.
 */
public class ObjectStoreException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ObjectStoreException(String message) {
    super(message);
  }

  public ObjectStoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
