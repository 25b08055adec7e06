package io.cairn.engine.catalog;

/**
 * The catalog is not the history it should be: an entry is missing (a gap, or a tail a snapshot
 * says existed), or an entry was changed after it was written. Names the entry. Recovery stops
 * rather than replay a shorter or different history; see the README ("When the catalog is
 * damaged") for what an operator does.
 */
public final class CatalogIntegrityException extends IllegalStateException {
  private final long position;

  public CatalogIntegrityException(long position, String message) {
    super(message);
    this.position = position;
  }

  /** The catalog position at fault. */
  public long position() {
    return position;
  }

  /**
   * Checks that {@code entries} (contiguous, in order) form a hash chain; {@code before} is the
   * hash of the entry before the first one (null: unknown, e.g. reading from the middle). Returns
   * the hash of the last entry (or {@code before} if there is none).
   */
  public static String verifyChain(java.util.List<CatalogEntry> entries, String before, String where) {
    String prev = before;
    for (CatalogEntry e : entries) {
      if (e.chained() && prev != null && !(e.position() == 0 ? e.prevHash().isEmpty() : e.prevHash().equals(prev))) {
        throw new CatalogIntegrityException(e.position() - 1, "Catalog entry " + (e.position() - 1) + " of " + where
            + " was changed or replaced after it was written: entry " + e.position() + " records its hash as "
            + abbreviate(e.prevHash()) + " but it hashes to " + abbreviate(prev));
      }
      prev = e.hash();
    }
    return prev;
  }

  private static String abbreviate(String h) {
    return h == null || h.isEmpty() ? "(none)" : h.substring(0, Math.min(12, h.length())) + "…";
  }
}
