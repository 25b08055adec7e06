package io.cairn.engine.trace;

/**
 * Consolidation, the one routine that turns a set of updates into a collection: put the entries
 * in order, sum the diffs of each run of equal entries, keep the runs whose sum is not zero.
 * Every consolidation in the engine goes through it: the seal of a tick ({@link UpdateBuffer},
 * over a permutation its typed radix passes found), the values under one key ({@link Values},
 * the operators' {@code KeyEntries}) and a whole trace read back ({@link Spine#forEachLive}).
 * A merge is the one streaming case: it walks two sorted batches a bounded amount at a time, so
 * it sums an entry into an equal previous one as it appends ({@link Batch.SortedBuilder#addFrom},
 * or {@code Merger}'s own loop over {@code long[]} columns), which is this scan done one entry
 * at a time.
 *
 * <p>Entries are addressed by index; the caller says how two compare ({@link Order}), what an
 * entry's diff is, and receives each live run as the index of its first entry and the run's sum
 * ({@link Sink}). Nothing is boxed: the order is an {@code int[]} permutation, sorted by
 * insertion when short (a key has few values) and by a merge sort otherwise, which costs one
 * comparison per run boundary on input made of sorted runs (a trace's batches).
 */
public final class Consolidation {
  /** Below this many entries an insertion sort is used. */
  private static final int INSERTION_MAX = 32;

  private Consolidation() {}

  /** How entries compare: negative, zero (the same update, to be summed) or positive. */
  @FunctionalInterface
  public interface Order {
    int compare(int a, int b);
  }

  /** The diff of an entry. */
  @FunctionalInterface
  public interface Diffs {
    long diff(int i);
  }

  /** Receives one live run: the index of its first entry (in input numbering) and its summed diff (never 0). */
  @FunctionalInterface
  public interface Sink {
    void live(int first, long sum);
  }

  /**
   * Fills {@code perm[0, n)} with a stable permutation of {@code [0, n)} putting the entries in
   * {@code order}, and returns {@code perm} ({@code perm.length >= n}: a caller's reused scratch).
   */
  public static int[] sortInto(int[] perm, int n, Order order) {
    for (int i = 0; i < n; i++) {
      perm[i] = i;
    }
    sortRange(perm, 0, n, order, null);
    return perm;
  }

  /**
   * Stably sorts {@code perm[from, to)} (entry indices) by {@code order}. {@code tmp}, when
   * given, is scratch of at least {@code to} entries; otherwise one is allocated if needed.
   */
  public static void sortRange(int[] perm, int from, int to, Order order, int[] tmp) {
    if (to - from <= INSERTION_MAX) {
      insertion(perm, from, to, order);
      return;
    }
    mergeSort(perm, tmp == null ? new int[to] : tmp, from, to, order);
  }

  private static void insertion(int[] perm, int from, int to, Order order) {
    for (int i = from + 1; i < to; i++) {
      int v = perm[i];
      int j = i - 1;
      while (j >= from && order.compare(perm[j], v) > 0) {
        perm[j + 1] = perm[j];
        j--;
      }
      perm[j + 1] = v;
    }
  }

  private static void mergeSort(int[] perm, int[] tmp, int from, int to, Order order) {
    if (to - from <= INSERTION_MAX) {
      insertion(perm, from, to, order);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(perm, tmp, from, mid, order);
    mergeSort(perm, tmp, mid, to, order);
    if (order.compare(perm[mid - 1], perm[mid]) <= 0) {
      return; // already in order: the common case inside a sorted run
    }
    System.arraycopy(perm, from, tmp, from, mid - from);
    int i = from;
    int j = mid;
    int k = from;
    while (i < mid && j < to) {
      // ties take the left one: stable
      perm[k++] = order.compare(tmp[i], perm[j]) <= 0 ? tmp[i++] : perm[j++];
    }
    while (i < mid) {
      perm[k++] = tmp[i++];
    }
  }

  /**
   * The scan: walks {@code perm[0, n)}, whose entries are in {@code order}, sums the diffs of each
   * run of entries that compare equal and passes every run with a non-zero sum to {@code sink},
   * in order. Returns the number of live runs.
   */
  public static int scan(int[] perm, int n, Order order, Diffs diffs, Sink sink) {
    int live = 0;
    int x = 0;
    while (x < n) {
      int first = perm[x];
      long sum = diffs.diff(first);
      int y = x + 1;
      while (y < n && order.compare(first, perm[y]) == 0) {
        sum += diffs.diff(perm[y]);
        y++;
      }
      if (sum != 0) {
        sink.live(first, sum);
        live++;
      }
      x = y;
    }
    return live;
  }
}
