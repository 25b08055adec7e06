package io.cairn.snapshotter;

import java.util.List;

/**
 * What {@link StoreVerifier} found: one line for the catalog, then one per manifest. A manifest
 * that garbage collection deleted while verification ran is {@link Status#GONE}, not invalid: it
 * was a consistent snapshot that no longer exists, and recovery will not choose it.
 */
public record VerifyReport(List<Line> lines) {
  /** The verdict on one object. */
  public enum Status {
    OK,
    INVALID,
    GONE
  }

  /** The verdict on the catalog or one manifest, with what was wrong (empty when OK). */
  public record Line(String subject, Status status, String detail) {}

  public VerifyReport {
    lines = List.copyOf(lines);
  }

  /** True when nothing is INVALID (the exit code of {@code cairn snapshots verify}). */
  public boolean valid() {
    return lines.stream().noneMatch(l -> l.status() == Status.INVALID);
  }

  public String toText() {
    StringBuilder sb = new StringBuilder();
    for (Line l : lines) {
      sb.append(String.format(java.util.Locale.ROOT, "%-8s %s", l.status(), l.subject()));
      if (!l.detail().isEmpty()) {
        sb.append(": ").append(l.detail());
      }
      sb.append('\n');
    }
    return sb.toString();
  }
}
