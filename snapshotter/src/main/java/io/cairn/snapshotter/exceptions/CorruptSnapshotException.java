package io.cairn.snapshotter.exceptions;

/**
 * A manifest or batch file failed verification: unparseable, wrong checksum, missing, or of the
 * wrong size. The message names the object and what was wrong.
 */
public class CorruptSnapshotException extends SnapshotException {
  private static final long serialVersionUID = 1L;

  public CorruptSnapshotException(String message) {
    super(message);
  }

  public CorruptSnapshotException(String message, Throwable cause) {
    super(message, cause);
  }
}
