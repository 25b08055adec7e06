package io.cairn.engine.row;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * A stable sort that can be stopped: runs of {@value #RUN} elements are sorted with the JDK's
 * sort, then merged pairwise, bottom-up, with {@code check} called before each run and every
 * {@value #RUN} merged elements. A check that throws leaves the list unchanged (the work happens
 * on a copy). Used for reads of large views, which a cancel or a statement timeout must be able
 * to stop within milliseconds.
 */
public final class CheckedSort {
  static final int RUN = 8192;

  private CheckedSort() {}

  /** Sorts {@code list} by {@code cmp} (null: natural order), calling {@code check} as described above. */
  @SuppressWarnings("unchecked")
  public static <T> void sort(List<T> list, Comparator<? super T> cmp, Runnable check) {
    int n = list.size();
    if (n <= RUN) {
      check.run();
      list.sort(cmp);
      return;
    }
    Comparator<Object> c = cmp == null ? (a, b) -> ((Comparable<Object>) a).compareTo(b) : (Comparator<Object>) cmp;
    Object[] a = list.toArray();
    for (int from = 0; from < n; from += RUN) {
      check.run();
      Arrays.sort(a, from, Math.min(n, from + RUN), c);
    }
    Object[] b = new Object[n];
    for (int width = RUN; width < n; width *= 2) {
      for (int lo = 0; lo < n; lo += 2 * width) {
        int mid = Math.min(n, lo + width);
        int hi = Math.min(n, lo + 2 * width);
        int i = lo;
        int j = mid;
        for (int k = lo; k < hi; k++) {
          if (((k - lo) & (RUN - 1)) == 0) {
            check.run();
          }
          b[k] = i < mid && (j >= hi || c.compare(a[i], a[j]) <= 0) ? a[i++] : a[j++];
        }
      }
      Object[] t = a;
      a = b;
      b = t;
    }
    for (int k = 0; k < n; k++) {
      list.set(k, (T) a[k]);
    }
  }
}
