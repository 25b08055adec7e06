package io.cairn.engine.sink;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.List;

/**
 * A view's consolidated changes, addressable by tick: what {@code SUBSCRIBE} and every {@link Sink}
 * read. Nothing implements it yet (issue 33 does); its contract is fixed now so that the node,
 * pgwire and HTTP are built around one feed.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Determinism. The changes of tick T are a function of the view's inputs up to T and of T
 *       (the engine consolidates each tick's output and sorts it by row): a recovery that
 *       recomputes tick T produces exactly the same {@link Changes} again, which is what lets a
 *       sink suppress ticks it has already emitted.
 *   <li>No back-pressure on the engine. A reader has a bounded buffer; a reader that falls
 *       further behind than it allows is ended with an error naming how far behind it was, never
 *       waited for. Neither the engine, a snapshot nor another reader slows down for it.
 *   <li>Start. A reader starts at a tick T: with {@code snapshot}, first the view's contents as of
 *       T (as changes with positive diffs), then every tick after T in order.
 * </ul>
 */
public interface ChangeFeed {
  /** The view's columns. */
  Schema schema();

  /** The last tick whose changes are available. */
  long frontier();

  /**
   * Subscribes from tick {@code from} (exclusive), with the contents as of {@code from} first when
   * {@code snapshot}; at most {@code buffer} ticks are held for a reader that has not taken them.
   */
  Subscription subscribe(long from, boolean snapshot, int buffer);

  /** One tick's consolidated changes: (row, diff) pairs sorted by row; empty for a tick with none. */
  record Changes(long tick, List<Row> rows, long[] diffs) {}

  /** A reader of the feed. Closing it releases its buffer. */
  interface Subscription extends AutoCloseable {
    /**
     * The next tick's changes, waiting at most {@code timeoutMillis}; null when none came in time.
     *
     * @throws IllegalStateException when this reader fell behind its buffer and was ended (the
     *     message says by how much)
     */
    Changes next(long timeoutMillis) throws InterruptedException;

    @Override
    void close();
  }
}
