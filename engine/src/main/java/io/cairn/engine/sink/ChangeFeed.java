package io.cairn.engine.sink;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.List;

/**
 * A view's (or a source's) consolidated changes, tick by tick: what {@code SUBSCRIBE} and every
 * {@link Sink} read.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Start. A reader starts at the last closed tick T of the moment it subscribes: with {@code
 *       snapshot}, first the contents as of T (one {@link Changes} at T, positive diffs), then every
 *       tick after T in order, each exactly once, an empty {@link Changes} for a tick with none. No
 *       tick is skipped or repeated: the subscription is registered between two ticks.
 *   <li>Consolidation. A tick's changes are summed per row (a row whose diffs cancel out is not
 *       there) and sorted by row, so that they are a function of the contents before and after
 *       the tick, not of how the work was sharded or ordered.
 *   <li>No back-pressure on the engine. A reader has a bound on the rows it holds untaken; a reader
 *       that falls further behind is ended with an error naming how far behind it was, never
 *       waited for (a tick is always taken when the reader holds nothing, however large). Neither
 *       the engine, a snapshot nor another reader slows down for it.
 *   <li>End. Dropping what it reads ends a reader with an error that says so; closing the engine
 *       ends it too.
 * </ul>
 */
public interface ChangeFeed {
  /** The columns. */
  Schema schema();

  /**
   * Subscribes from the last closed tick (see the contract), holding at most {@code maxRows} rows
   * that the reader has not taken.
   */
  Subscription subscribe(boolean snapshot, int maxRows);

  /** One tick's consolidated changes: (row, diff) pairs sorted by row; empty for a tick with none. */
  record Changes(long tick, List<Row> rows, long[] diffs) {
    public int size() {
      return rows.size();
    }
  }

  /** A reader of the feed. Closing it releases its buffer. */
  interface Subscription extends AutoCloseable {
    /** The tick the reader starts at (the snapshot's tick). */
    long startTick();

    /**
     * The next tick's changes, waiting at most {@code timeoutMillis}; null when none came in time.
     *
     * @throws Ended when this reader was ended (fell behind its bound, what it reads was dropped,
     *     the engine closed); the message says why
     */
    Changes next(long timeoutMillis) throws InterruptedException;

    /** Whether the feed has ended this reader (its next {@link #next} throws {@link Ended}). */
    boolean isEnded();

    @Override
    void close();
  }

  /**
   * A subscription that was ended by the feed: the message says why. SQLSTATE 53400
   * (configuration_limit_exceeded) for a reader that fell behind its bound, 57P01 (admin_shutdown)
   * when what it read was dropped or the engine closed.
   */
  final class Ended extends RuntimeException implements io.cairn.engine.sql.SqlState.Carrier {
    private final boolean fellBehind;

    public Ended(String message, boolean fellBehind) {
      super(message);
      this.fellBehind = fellBehind;
    }

    @Override
    public String sqlState() {
      return fellBehind ? "53400" : "57P01";
    }
  }
}
