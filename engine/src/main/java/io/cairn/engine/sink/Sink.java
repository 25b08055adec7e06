package io.cairn.engine.sink;

import io.cairn.engine.row.Row;
import io.cairn.engine.source.SourceOffsets;
import java.util.List;
import java.util.Map;

/**
 * Where a view's changes leave the node: the destination's client of one sink, driven by one
 * thread of the node's sink service over the engine's {@link SinkTrack} (which keeps the
 * exactly-once bookkeeping; this interface only does the I/O).
 *
 * <p>Contract (exactly once out):
 *
 * <ul>
 *   <li>{@link #open} first fences every older writer of the same sink (a Kafka producer with the
 *       same {@code transactional.id}, on this node or another), then reads the newest committed
 *       progress. After it returns, nothing an older writer had in flight can still commit.
 *   <li>{@link #commit} writes one set of changes and a progress record ("emitted through tick
 *       T", with the sources' offsets at T) atomically: a reader that sees any of it sees all of
 *       it (as far as the destination keeps its promise: see {@link #readBack}). It may split a large set into several transactions; then only the last progress
 *       record is {@code complete}, and a failure between them leaves a prefix committed, which
 *       {@link #readBack} sees.
 *   <li>{@link #readBack} returns, as (row, diff) pairs, exactly what the committed records after
 *       {@code from} add to what a reader rebuilds, the position after them and the highest label
 *       they carry: the bookkeeping subtracts them from what it still has to write and labels on
 *       above them. Records the destination committed without their progress record (a Kafka
 *       broker has committed a transaction before its progress record joined it: measured, see
 *       {@code KafkaSink}) are covered by a progress record of their own label before it returns,
 *       so that a reader finds every committed record under a progress record of its label.
 *   <li>Any method may throw; the caller closes this sink, backs off, creates a new one and opens
 *       it again. Throwing never leaves a half-committed transaction visible.
 * </ul>
 */
public interface Sink extends AutoCloseable {
  /** Fences older writers, then reads the newest committed progress. */
  Progress open();

  /** Everything committed after {@code from} (null or empty: from the destination's beginning) up to its end. */
  ReadBack readBack(Map<String, String> from);

  /** Commits {@code batch}'s changes with progress {@code tick}; returns the position after it. */
  Map<String, String> commit(long tick, SinkTrack.Batch batch);

  @Override
  void close();

  /**
   * The newest committed progress record of this sink.
   *
   * @param tick the last tick it emitted through; -1 when it has none
   * @param offsets the sources' offsets at that tick (empty when none)
   */
  record Progress(long tick, Map<String, SourceOffsets> offsets) {
    public static final Progress NONE = new Progress(-1, Map.of());
  }

  /**
   * What {@link #readBack} found.
   *
   * @param rows rows whose diffs the committed records add (a delete as -1, an insert as +1)
   * @param diffs their diffs
   * @param records how many records were read
   * @param to the destination's position after them
   * @param lastLabel the highest label among them (-1: none, or the destination does not label records)
   */
  record ReadBack(List<Row> rows, long[] diffs, long records, Map<String, String> to, long lastLabel) {}
}
