package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A small, reusable multiset of value rows with diffs, consolidated on demand. */
public final class Values {
  private final List<Row> vals = new ArrayList<>();
  private long[] diffs = new long[8];

  public void clear() {
    vals.clear();
  }

  public void add(Row val, long diff) {
    if (vals.size() == diffs.length) {
      diffs = Arrays.copyOf(diffs, diffs.length * 2);
    }
    diffs[vals.size()] = diff;
    vals.add(val);
  }

  public int size() {
    return vals.size();
  }

  public Row val(int i) {
    return vals.get(i);
  }

  public long diff(int i) {
    return diffs[i];
  }

  /** Sorts by val, sums equal vals, drops zeros. */
  public void consolidate() {
    int n = vals.size();
    if (n == 1) {
      if (diffs[0] == 0) {
        vals.clear();
      }
      return;
    }
    if (n == 0) {
      return;
    }
    Integer[] idx = new Integer[n];
    for (int i = 0; i < n; i++) {
      idx[i] = i;
    }
    Arrays.sort(idx, (a, b) -> vals.get(a).compareTo(vals.get(b)));
    List<Row> nv = new ArrayList<>(n);
    long[] nd = new long[Math.max(8, n)];
    int k = 0;
    for (int x = 0; x < n; x++) {
      Row v = vals.get(idx[x]);
      long d = diffs[idx[x]];
      if (k > 0 && nv.get(k - 1).equals(v)) {
        nd[k - 1] += d;
        if (nd[k - 1] == 0) {
          nv.remove(--k);
        }
      } else if (d != 0) {
        nv.add(v);
        nd[k++] = d;
      }
    }
    vals.clear();
    vals.addAll(nv);
    diffs = nd;
  }
}
