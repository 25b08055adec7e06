package io.cairn.engine.runtime;

import io.cairn.engine.row.Row;
import io.cairn.engine.source.SourceOutput;
import java.util.Arrays;

/**
 * Records a source read ahead for the next tick while the dataflows compute the current one
 * (see {@link SourceIngest#prefetch}), to be handed to the source's operator when that tick opens.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Calls are kept in delivery order (appends, upserts and resets interleaved) and replayed in
 *       that order, so the next tick sees exactly what a poll in it would have delivered.
 *   <li>Used only by the thread holding the tick lock (the source's owner); the dataflows'
 *       workers never see it.
 *   <li>What it holds is past {@code offsets(T)} of the tick being computed and is never part of a
 *       snapshot: it is applied to the next tick, or dropped (source restarted, failed, dropped or
 *       restored), after which the source reads it again from its recorded offsets.
 * </ul>
 */
final class Prefetch implements SourceOutput {
  private static final byte APPEND = 0;
  private static final byte UPSERT = 1;
  private static final byte RESET = 2;

  private byte[] kinds = new byte[64];
  private Row[] keys = new Row[64];
  private Row[] rows = new Row[64];
  private long[] diffs = new long[64];
  private int size;
  private int records;

  @Override
  public void append(Row row, long diff) {
    add(APPEND, null, row, diff);
    records++;
  }

  @Override
  public void upsert(Row key, Row row) {
    add(UPSERT, key, row, 0);
    records++;
  }

  @Override
  public void reset() {
    add(RESET, null, null, 0);
  }

  /** Records held (resets not counted). */
  int records() {
    return records;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** Delivers everything held to {@code out} in order, then empties this buffer. */
  void drainTo(SourceOutput out) {
    for (int i = 0; i < size; i++) {
      switch (kinds[i]) {
        case APPEND -> out.append(rows[i], diffs[i]);
        case UPSERT -> out.upsert(keys[i], rows[i]);
        default -> out.reset();
      }
    }
    clear();
  }

  /** Drops everything held. */
  void clear() {
    Arrays.fill(keys, 0, size, null);
    Arrays.fill(rows, 0, size, null);
    size = 0;
    records = 0;
  }

  private void add(byte kind, Row key, Row row, long diff) {
    if (size == kinds.length) {
      int n = size * 2;
      kinds = Arrays.copyOf(kinds, n);
      keys = Arrays.copyOf(keys, n);
      rows = Arrays.copyOf(rows, n);
      diffs = Arrays.copyOf(diffs, n);
    }
    kinds[size] = kind;
    keys[size] = key;
    rows[size] = row;
    diffs[size] = diff;
    size++;
  }
}
