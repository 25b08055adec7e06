package io.cairn.engine.catalog;

import java.util.List;

/**
 * The catalog: the ordered, durable log of DDL commands, and the only sequencer of dataflow
 * creation and drop. Positions start at {@value #FIRST_POSITION} and are contiguous.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Linearizable append: {@link #append} writes {@code entry} at {@code entry.position()} only
 *       if no entry exists there. Of any number of writers racing for one position exactly one
 *       succeeds; every other gets {@link CatalogConflictException} and must re-read ({@link
 *       #read}), apply what it finds, and retry at the next free position. An appended entry is
 *       never changed or removed.
 *   <li>No gaps: a writer appends at position {@code p} only after reading every entry below
 *       {@code p}; implementations may reject an append whose predecessor is missing.
 *   <li>Read: {@link #read} returns the entries at positions {@code >= from}, in order, up to the
 *       first position that holds none. Every reader sees the same entry at a given position, and
 *       an entry whose append has returned is visible to every later read.
 *   <li>Failures: I/O problems are thrown unchecked. An append that fails otherwise than with
 *       {@link CatalogConflictException} may or may not have written the entry; a reader finds out
 *       by reading.
 * </ul>
 *
 * <p>Implementations are thread-safe.
 */
public interface CatalogLog extends AutoCloseable {
  long FIRST_POSITION = 0;

  /**
   * Appends {@code entry} at {@code entry.position()}.
   *
   * @throws CatalogConflictException if an entry exists at that position (another writer won)
   */
  void append(CatalogEntry entry);

  /** The entries at positions {@code >= from}, in order, up to the first missing position. */
  List<CatalogEntry> read(long from);

  /** The position after the last entry (the next free one), as of now. */
  default long end() {
    List<CatalogEntry> all = read(FIRST_POSITION);
    return all.isEmpty() ? FIRST_POSITION : all.get(all.size() - 1).position() + 1;
  }

  /** A short description for messages, e.g. "memory" or the store's location. */
  String describe();

  @Override
  default void close() {}
}
