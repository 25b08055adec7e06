package io.cairn.snapshotter.exceptions;

/**
 * A snapshot did not commit. {@link #outcomeUnknown()} is true when the manifest write itself
 * failed in a way that leaves it unknown whether the manifest became visible (its files are then
 * left in place; garbage collection removes them if it did not).
 */
public class SnapshotFailedException extends SnapshotException {
  private static final long serialVersionUID = 1L;
  private final boolean outcomeUnknown;

  public SnapshotFailedException(String message, Throwable cause, boolean outcomeUnknown) {
    super(message, cause);
    this.outcomeUnknown = outcomeUnknown;
  }

  public boolean outcomeUnknown() {
    return outcomeUnknown;
  }
}
