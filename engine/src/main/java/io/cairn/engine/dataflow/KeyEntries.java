package io.cairn.engine.dataflow;

import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Spine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The trace entries stored under one key, gathered as (batch, index, diff) by a {@link
 * Spine.Reader} and consolidated by value on the batches' columns, without building a row: an
 * operator materialises only the values that are live. Scratch for one shard's tick: not
 * thread-safe, {@link #clear} before the next key.
 */
final class KeyEntries implements Spine.EntrySink {
  private Batch[] batches = new Batch[8];
  private int[] index = new int[8];
  private long[] diffs = new long[8];
  private int size;

  @Override
  public void entry(Batch batch, int i) {
    if (size == batches.length) {
      batches = Arrays.copyOf(batches, size * 2);
      index = Arrays.copyOf(index, size * 2);
      diffs = Arrays.copyOf(diffs, size * 2);
    }
    batches[size] = batch;
    index[size] = i;
    diffs[size] = batch.diff(i);
    size++;
  }

  void clear() {
    size = 0;
  }

  int size() {
    return size;
  }

  Batch batch(int k) {
    return batches[k];
  }

  int index(int k) {
    return index[k];
  }

  long diff(int k) {
    return diffs[k];
  }

  /**
   * Sorts the entries by value (their keys are equal), sums the diffs of equal values and drops
   * zero sums: afterwards entries {@code [0, size())} are the live values, in value order.
   */
  void consolidate() {
    int n = size;
    if (n <= 1) {
      size = n == 1 && diffs[0] == 0 ? 0 : n;
      return;
    }
    if (n <= 32) {
      for (int x = 1; x < n; x++) { // a key has few entries: insertion sort
        Batch b = batches[x];
        int i = index[x];
        long d = diffs[x];
        int y = x - 1;
        while (y >= 0 && batches[y].compareKeyVal(index[y], b, i) > 0) {
          batches[y + 1] = batches[y];
          index[y + 1] = index[y];
          diffs[y + 1] = diffs[y];
          y--;
        }
        batches[y + 1] = b;
        index[y + 1] = i;
        diffs[y + 1] = d;
      }
    } else {
      List<Integer> order = new ArrayList<>(n);
      for (int x = 0; x < n; x++) {
        order.add(x);
      }
      Batch[] b0 = batches;
      int[] i0 = index;
      order.sort((x, y) -> b0[x].compareKeyVal(i0[x], b0[y], i0[y]));
      Batch[] nb = new Batch[batches.length];
      int[] ni = new int[index.length];
      long[] nd = new long[diffs.length];
      for (int x = 0; x < n; x++) {
        nb[x] = batches[order.get(x)];
        ni[x] = index[order.get(x)];
        nd[x] = diffs[order.get(x)];
      }
      batches = nb;
      index = ni;
      diffs = nd;
    }
    int k = 0;
    for (int x = 0; x < n; ) {
      long sum = diffs[x];
      int y = x + 1;
      while (y < n && batches[x].compareKeyVal(index[x], batches[y], index[y]) == 0) {
        sum += diffs[y];
        y++;
      }
      if (sum != 0) {
        batches[k] = batches[x];
        index[k] = index[x];
        diffs[k] = sum;
        k++;
      }
      x = y;
    }
    size = k;
  }
}
