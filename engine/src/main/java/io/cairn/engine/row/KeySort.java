package io.cairn.engine.row;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Stable sorts of rows by key that avoid comparator chains over boxed values where they can.
 *
 * <p>The result is always a permutation: {@code perm[i]} is the index of the i-th smallest key,
 * and equal keys keep their input order (stable), as {@link java.util.List#sort} would. When every
 * key is one non-null BIGINT (ids, customer numbers, categories: the common case), the keys are
 * unboxed once into a {@code long[]} and sorted by a least-significant-digit radix sort over the
 * bits that vary between the keys only, in digits of a width chosen for the number of keys
 * ({@link #digitBits}); otherwise the permutation is
 * sorted by {@link Row#compareTo}. Both orders are the same: {@link Row#compareTo} orders BIGINT
 * numerically.
 */
public final class KeySort {
  private static final int MAX_DIGIT_BITS = 16;
  /** Below this size a comparison sort is as fast and allocates less. */
  private static final int RADIX_MIN = 256;

  private KeySort() {}

  /** A stable permutation ordering {@code keys[0..n)} ascending. */
  public static int[] byKey(Row[] keys, int n) {
    long[] longs = n >= RADIX_MIN ? singleLongs(keys, n) : null;
    if (longs != null) {
      return radix(longs, n);
    }
    Integer[] boxed = new Integer[n];
    for (int i = 0; i < n; i++) {
      boxed[i] = i;
    }
    Arrays.sort(boxed, Comparator.comparing(i -> keys[i]));
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) {
      perm[i] = boxed[i];
    }
    return perm;
  }

  /**
   * The keys as sign-flipped longs (so that unsigned order is signed order), or null unless every
   * key is exactly one non-null {@link Long}.
   */
  private static long[] singleLongs(Row[] keys, int n) {
    long[] out = new long[n];
    for (int i = 0; i < n; i++) {
      Row k = keys[i];
      if (k.size() != 1 || !(k.get(0) instanceof Long v)) {
        return null;
      }
      out[i] = v ^ Long.MIN_VALUE;
    }
    return out;
  }

  /** LSD radix sort of indices by {@code keys} (unsigned), stable. */
  private static int[] radix(long[] keys, int n) {
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) {
      perm[i] = i;
    }
    int[] sorted = radixPasses(keys, true, perm, new int[n], n);
    return sorted;
  }

  /**
   * Stably re-orders {@code perm[0..n)} by {@code values[perm[i]]}: signed order, or unsigned
   * order when {@code flipped} (values already XOR-ed with the sign bit). Used for one column
   * after another, last column first, it sorts lexicographically (LSD). Input already in order
   * (an operator's output often is: it walks its keys in order) costs one scan and is returned as
   * it is. Returns the array that holds the result: {@code perm} or {@code tmp} (both have length
   * {@code >= n}).
   */
  public static int[] radixPasses(long[] values, boolean flipped, int[] perm, int[] tmp, int n) {
    long flip = flipped ? 0 : Long.MIN_VALUE;
    long or = 0;
    long and = -1L;
    long prev = 0;
    boolean sorted = true;
    for (int i = 0; i < n; i++) {
      long v = values[perm[i]] ^ flip;
      or |= v;
      and &= v;
      sorted &= Long.compareUnsigned(prev, v) <= 0;
      prev = v;
    }
    long varying = or ^ and; // bits that differ between some values: only those are sorted on
    if (varying == 0 || sorted) {
      return perm; // already in order (an operator's output often is: it walks keys in order)
    }
    int lo = Long.numberOfTrailingZeros(varying);
    int bits = 64 - Long.numberOfLeadingZeros(varying) - lo;
    int digit = digitBits(bits, n);
    int mask = (1 << digit) - 1;
    int[] count = new int[(1 << digit) + 1];
    for (int shift = lo; shift < lo + bits; shift += digit) {
      if (shift != lo) {
        Arrays.fill(count, 0);
      }
      for (int i = 0; i < n; i++) {
        count[(int) (((values[perm[i]] ^ flip) >>> shift) & mask) + 1]++;
      }
      for (int d = 0; d < mask + 1; d++) {
        count[d + 1] += count[d];
      }
      for (int i = 0; i < n; i++) {
        int p = perm[i];
        tmp[count[(int) (((values[p] ^ flip) >>> shift) & mask)]++] = p;
      }
      int[] swap = perm;
      perm = tmp;
      tmp = swap;
    }
    return perm;
  }

  /**
   * The digit width for sorting {@code n} values on {@code bits} varying bits: the one with the
   * least estimated work, passes × (two sweeps over the values + one over the counts), at most
   * {@value #MAX_DIGIT_BITS} bits. A few thousand keys get small digits (a 65,536-entry count
   * array would cost more than the keys); a large tick gets wide ones (fewer passes).
   */
  static int digitBits(int bits, int n) {
    int best = 1;
    long bestCost = Long.MAX_VALUE;
    for (int d = 4; d <= MAX_DIGIT_BITS; d++) {
      long passes = (bits + d - 1) / d;
      long cost = passes * (2L * n + (1L << d));
      if (cost < bestCost) {
        bestCost = cost;
        best = d;
      }
    }
    return Math.min(best, Math.max(bits, 1));
  }
}
