package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.trace.Spine;
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

  /** The collection held by {@code spine} (an arrangement of {@code layout}) as rows with their multiplicities. */
  public static Rows of(Spine spine, Layout layout) {
    Rows rows = new Rows((int) Math.min(1 << 24, spine.updateCount()));
    spine.forEachLive(Long.MAX_VALUE, (b, i, count) -> rows.add(layout.row(b, i), count));
    return rows;
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

  /** Appends every update of {@code other} (whose diffs are non-zero already) in one copy. */
  public void addAll(Rows other) {
    int n = other.size;
    reserve(n);
    System.arraycopy(other.rows, 0, rows, size, n);
    System.arraycopy(other.diffs, 0, diffs, size, n);
    size += n;
  }

  /** Makes room for {@code more} updates beyond the current ones, growing at most once. */
  public void reserve(int more) {
    int need = size + more;
    if (need > rows.length) {
      int grown = Math.max(need, Math.max(16, size * 2));
      rows = Arrays.copyOf(rows, grown);
      diffs = Arrays.copyOf(diffs, grown);
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

  /**
   * Empties the buffer. A buffer more than four times larger than what it held (a view's
   * hydration, a catch-up tick) is given back, so one large tick does not pin its arrays for the
   * operator's lifetime.
   */
  public void clear() {
    if (rows.length > 4 * Math.max(size, 1024)) {
      rows = new Row[16];
      diffs = new long[16];
    } else {
      Arrays.fill(rows, 0, size, null);
    }
    size = 0;
  }
}
