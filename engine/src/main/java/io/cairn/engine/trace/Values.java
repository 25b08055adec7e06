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

  /** Sorts by val, sums equal vals, drops zeros ({@link Consolidation}). */
  public void consolidate() {
    int n = size;
    if (n <= 1) {
      if (n == 1 && diffs[0] == 0) {
        size = 0;
      }
      return;
    }
    if (perm.length < n || outVals.length < n) {
      perm = new int[vals.length];
      outVals = new Row[vals.length];
      outDiffs = new long[vals.length];
    }
    Consolidation.sortInto(perm, n, byVal);
    gathered = 0;
    Consolidation.scan(perm, n, byVal, diffOf, gather);
    Row[] v = vals;
    long[] d = diffs;
    vals = outVals;
    diffs = outDiffs;
    outVals = v;
    outDiffs = d;
    Arrays.fill(outVals, 0, n, null);
    size = gathered;
  }

  // consolidation scratch: the order, and the arrays the live values are gathered into (swapped with vals/diffs)
  private int[] perm = new int[0];
  private Row[] outVals = new Row[0];
  private long[] outDiffs = new long[0];
  private int gathered;
  private final Consolidation.Order byVal = (a, b) -> vals[a].compareTo(vals[b]);
  private final Consolidation.Diffs diffOf = i -> diffs[i];
  private final Consolidation.Sink gather = (first, sum) -> {
    outVals[gathered] = vals[first];
    outDiffs[gathered] = sum;
    gathered++;
  };
}
