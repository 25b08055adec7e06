package io.cairn.snapshotter.exceptions;

/** Base of the snapshotter's unchecked exceptions; messages read "Cannot X: reason". */
public class SnapshotException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public SnapshotException(String message) {
    super(message);
  }

  public SnapshotException(String message, Throwable cause) {
    super(message, cause);
  }
}
