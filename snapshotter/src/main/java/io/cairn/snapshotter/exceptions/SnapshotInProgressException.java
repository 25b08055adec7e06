package io.cairn.snapshotter.exceptions;

/** A snapshot was requested while another one is still running (no two snapshots at once). */
public class SnapshotInProgressException extends SnapshotException {
  private static final long serialVersionUID = 1L;

  public SnapshotInProgressException(String message) {
    super(message);
  }
}
