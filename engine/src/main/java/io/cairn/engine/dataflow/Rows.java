package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import java.util.Arrays;

/** A growable buffer of (row, diff) pairs: the updates one operator shard emits in a tick. */
public final class Rows {
  private Row[] rows = new Row[16];
  private long[] diffs = new long[16];
  private int size;

  public void add(Row row, long diff) {
    if (diff == 0) {
      return;
    }
    if (size == rows.length) {
      rows = Arrays.copyOf(rows, size * 2);
      diffs = Arrays.copyOf(diffs, size * 2);
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
