package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import java.util.Arrays;

/** A growable buffer of (row, diff) pairs: the updates one operator shard emits in a tick. */
public final class Rows {
  private Row[] rows;
  private long[] diffs;
  private int size;

  public Rows() {
    this(16);
  }

  /** An empty buffer with room for {@code capacity} updates before it grows. */
  public Rows(int capacity) {
    rows = new Row[capacity];
    diffs = new long[capacity];
  }

  public void add(Row row, long diff) {
    if (diff == 0) {
      return;
    }
    if (size == rows.length) {
      int grown = Math.max(16, size * 2);
      rows = Arrays.copyOf(rows, grown);
      diffs = Arrays.copyOf(diffs, grown);
    }
    rows[size] = row;
    diffs[size] = diff;
    size++;
  }

  public void addAll(Rows other) {
    for (int i = 0; i < other.size; i++) {
      add(other.rows[i], other.diffs[i]);
    }
  }

  public int size() {
    return size;
  }

  public Row row(int i) {
    return rows[i];
  }

  public long diff(int i) {
    return diffs[i];
  }

  public void clear() {
    Arrays.fill(rows, 0, size, null);
    size = 0;
  }
}
