package io.cairn.engine.dataflow;

import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Consolidation;
import io.cairn.engine.trace.Spine;
import java.util.Arrays;

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
   * zero sums ({@link Consolidation}): afterwards entries {@code [0, size())} are the live values,
   * in value order.
   */
  void consolidate() {
    int n = size;
    if (n <= 1) {
      size = n == 1 && diffs[0] == 0 ? 0 : n;
      return;
    }
    if (perm.length < n || outBatches.length < n) {
      perm = new int[batches.length];
      outBatches = new Batch[batches.length];
      outIndex = new int[batches.length];
      outDiffs = new long[batches.length];
    }
    Consolidation.sortInto(perm, n, byVal);
    gathered = 0;
    Consolidation.scan(perm, n, byVal, diffOf, gather);
    Batch[] b = batches;
    int[] i = index;
    long[] d = diffs;
    batches = outBatches;
    index = outIndex;
    diffs = outDiffs;
    outBatches = b;
    outIndex = i;
    outDiffs = d;
    Arrays.fill(outBatches, 0, n, null); // no stale reference keeps a merged-away batch alive
    size = gathered;
  }

  // consolidation scratch: the order, and the arrays the live entries are gathered into (swapped with the entries')
  private int[] perm = new int[0];
  private Batch[] outBatches = new Batch[0];
  private int[] outIndex = new int[0];
  private long[] outDiffs = new long[0];
  private int gathered;
  private final Consolidation.Order byVal = (x, y) -> batches[x].compareKeyVal(index[x], batches[y], index[y]);
  private final Consolidation.Diffs diffOf = x -> diffs[x];
  private final Consolidation.Sink gather = (first, sum) -> {
    outBatches[gathered] = batches[first];
    outIndex[gathered] = index[first];
    outDiffs[gathered] = sum;
    gathered++;
  };
}
