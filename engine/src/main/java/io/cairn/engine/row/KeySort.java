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
    int[] ranked = n >= RADIX_MIN ? byRank(keys, n) : null;
    if (ranked != null) {
      return ranked;
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
   * A stable permutation through the distinct keys, or null when more than half of the keys are
   * distinct (a comparison sort of all of them is then as cheap). Text keys (customers, names,
   * categories) repeat within a tick: each key is looked up once in a hash table (a {@link Row}
   * caches its hash), only the d distinct keys are sorted by {@link Row#compareTo} (d log d
   * comparisons instead of n log n, each of which walks two strings), and the keys are then
   * radix-sorted by their distinct key's rank. Distinct keys that compare equal share a rank
   * ({@link Row#equals} agrees with {@code compareTo}, so they do not occur; the rule keeps the
   * result the comparison sort's even if they did).
   */
  static int[] byRank(Row[] keys, int n) {
    java.util.HashMap<Row, Integer> ids = new java.util.HashMap<>(Math.min(n, 1 << 16));
    java.util.ArrayList<Row> distinct = new java.util.ArrayList<>();
    long[] id = new long[n];
    int limit = n / 2;
    for (int i = 0; i < n; i++) {
      Row k = keys[i];
      Integer x = ids.get(k);
      if (x == null) {
        if (distinct.size() == limit) {
          return null;
        }
        x = distinct.size();
        ids.put(k, x);
        distinct.add(k);
      }
      id[i] = x;
    }
    int d = distinct.size();
    Integer[] order = new Integer[d];
    for (int i = 0; i < d; i++) {
      order[i] = i;
    }
    Arrays.sort(order, Comparator.comparing(distinct::get));
    long[] rank = new long[d];
    for (int r = 0, i = 0; i < d; i++) {
      if (i > 0 && distinct.get(order[i - 1]).compareTo(distinct.get(order[i])) != 0) {
        r++;
      }
      rank[order[i]] = r;
    }
    for (int i = 0; i < n; i++) {
      id[i] = rank[(int) id[i]];
    }
    return radix(id, n); // ranks are non-negative: unsigned order is their order
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
