package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import java.util.Arrays;

/**
 * A small, reusable multiset of value rows with diffs, consolidated on demand. Scratch space for
 * one key at a time: {@link #clear()} only resets the size.
 */
public final class Values {
  private Row[] vals = new Row[8];
  private long[] diffs = new long[8];
  private int size;

  public void clear() {
    size = 0;
  }

  public void add(Row val, long diff) {
    if (size == vals.length) {
      vals = Arrays.copyOf(vals, size * 2);
      diffs = Arrays.copyOf(diffs, size * 2);
    }
    vals[size] = val;
    diffs[size] = diff;
    size++;
  }

  public int size() {
    return size;
  }

  public Row val(int i) {
    return vals[i];
  }

  public long diff(int i) {
    return diffs[i];
  }

  /** Sorts by val, sums equal vals, drops zeros. */
  public void consolidate() {
    int n = size;
    if (n <= 1) {
      if (n == 1 && diffs[0] == 0) {
        size = 0;
      }
      return;
    }
    if (n <= 32) {
      for (int i = 1; i < n; i++) { // insertion sort of the (val, diff) pairs: a key has few values
        Row v = vals[i];
        long d = diffs[i];
        int j = i - 1;
        while (j >= 0 && vals[j].compareTo(v) > 0) {
          vals[j + 1] = vals[j];
          diffs[j + 1] = diffs[j];
          j--;
        }
        vals[j + 1] = v;
        diffs[j + 1] = d;
      }
    } else {
      Integer[] idx = new Integer[n];
      for (int i = 0; i < n; i++) {
        idx[i] = i;
      }
      Row[] v0 = vals;
      Arrays.sort(idx, (a, b) -> v0[a].compareTo(v0[b]));
      Row[] nv = new Row[vals.length];
      long[] nd = new long[diffs.length];
      for (int i = 0; i < n; i++) {
        nv[i] = vals[idx[i]];
        nd[i] = diffs[idx[i]];
      }
      vals = nv;
      diffs = nd;
    }
    int k = 0;
    for (int x = 0; x < n; x++) {
      if (k > 0 && vals[k - 1].equals(vals[x])) {
        diffs[k - 1] += diffs[x];
        if (diffs[k - 1] == 0) {
          k--;
        }
      } else if (diffs[x] != 0) {
        vals[k] = vals[x];
        diffs[k] = diffs[x];
        k++;
      }
    }
    size = k;
  }
}
