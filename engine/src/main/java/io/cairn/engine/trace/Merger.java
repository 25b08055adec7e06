package io.cairn.engine.trace;

/**
 * Merges an older and a newer batch into one, a bounded amount of work at a time ({@link
 * #work(long)}), advancing times to {@code since} (logical compaction) and consolidating as it
 * goes. The inputs stay readable in the spine until the merge completes, so reads never wait for
 * a merge and a tick never pays for a whole large merge.
 *
 * <p>When every key and value column of both inputs is BIGINT/TIMESTAMP without NULLs (ids,
 * counts, sums: the common case) the merge works on the {@code long[]} columns directly;
 * otherwise it goes through {@link Batch.SortedBuilder}. Both produce the same batch.
 */
final class Merger {
  private final Batch older;
  private final Batch newer;
  private final long since;
  private final Batch.SortedBuilder out;
  private int i;
  private int j;
  private Batch result;

  // long-column path
  private final long[][] a;
  private final long[][] b;
  private long[][] cols;
  /** The output's times, or null when they are all {@link #timeConst} (known at the start: see the constructor). */
  private long[] times;
  private long timeConst;
  /** The output's diffs, or null while every entry so far has diff {@link #diffConst}: allocated at the first other diff. */
  private long[] diffs;
  private long diffConst;
  private final int cap;
  private int k;
  /** False right after a zero sum removed the last entry: the next entry starts a new one. */
  private boolean lastComparable;

  Merger(Batch older, Batch newer, long since) {
    this.older = older;
    this.newer = newer;
    this.since = since;
    long[][] la = older.longColumns();
    long[][] lb = newer.longColumns();
    cap = older.size() + newer.size();
    if (la != null && lb != null && la.length == lb.length) {
      a = la;
      b = lb;
      cols = new long[la.length][cap];
      // both inputs of one time each that advance to the same time (a compacted batch and a sealed
      // tick, both at or below since): the output has that one time, and no times column is made.
      // The diffs column is made only at the first diff that differs from the others (an upsert
      // state, a set of distinct rows: never), so a merge of two large compacted batches allocates
      // the key and value columns alone
      boolean oneTime = older.timesOrNull() == null && newer.timesOrNull() == null
          && Math.max(older.constantTime(), since) == Math.max(newer.constantTime(), since);
      times = oneTime ? null : new long[cap];
      timeConst = oneTime ? Math.max(older.constantTime(), since) : 0;
      diffs = null;
      out = null;
    } else {
      a = null;
      b = null;
      out = new Batch.SortedBuilder(older.keySchema(), older.valSchema(), cap);
    }
  }

  Batch older() {
    return older;
  }

  Batch newer() {
    return newer;
  }

  boolean isDone() {
    return result != null;
  }

  Batch result() {
    return result;
  }

  /** Does up to {@code fuel} entries of work; returns the fuel left over. */
  long work(long fuel) {
    fuel = a == null ? workRows(fuel) : a.length == 2 ? workTwoLongs(fuel) : workLongs(fuel);
    if (i >= older.size() && j >= newer.size() && result == null) {
      Description d = new Description(
          older.description().lower(),
          Math.max(older.description().upper(), newer.description().upper()),
          Math.max(since, Math.max(older.description().since(), newer.description().since())));
      if (a != null) {
        result = Batch.ofLongColumns(older.keySchema(), older.valSchema(), d, cols, times, timeConst, diffs, diffConst, k);
        cols = null;
        times = null;
        diffs = null;
      } else {
        result = out.build(d);
      }
    }
    return fuel;
  }

  private long workRows(long fuel) {
    int n = older.size();
    int m = newer.size();
    while (fuel > 0 && (i < n || j < m)) {
      if (j >= m) {
        out.addFrom(older, i, Math.max(older.time(i), since), older.diff(i));
        i++;
      } else if (i >= n) {
        out.addFrom(newer, j, Math.max(newer.time(j), since), newer.diff(j));
        j++;
      } else {
        int c = older.compareKeyVal(i, newer, j);
        if (c == 0) {
          c = Long.compare(Math.max(older.time(i), since), Math.max(newer.time(j), since));
        }
        if (c <= 0) {
          out.addFrom(older, i, Math.max(older.time(i), since), older.diff(i));
          i++;
        } else {
          out.addFrom(newer, j, Math.max(newer.time(j), since), newer.diff(j));
          j++;
        }
      }
      fuel--;
    }
    return fuel;
  }

  private long workLongs(long fuel) {
    int n = older.size();
    int m = newer.size();
    long[] ot = older.timesOrNull();
    long[] od = older.diffsOrNull();
    long[] nt = newer.timesOrNull();
    long[] nd = newer.diffsOrNull();
    long ot0 = older.constantTime();
    long od0 = older.constantDiff();
    long nt0 = newer.constantTime();
    long nd0 = newer.constantDiff();
    long[] a0 = a[0];
    long[] b0 = b[0];
    int width = a.length;
    while (fuel > 0 && (i < n || j < m)) {
      boolean takeOlder;
      if (j >= m) {
        takeOlder = true;
      } else if (i >= n) {
        takeOlder = false;
      } else {
        int c = Long.compare(a0[i], b0[j]); // the first column decides almost every comparison
        for (int col = 1; col < width && c == 0; col++) {
          c = Long.compare(a[col][i], b[col][j]);
        }
        if (c == 0) {
          c = Long.compare(Math.max(ot == null ? ot0 : ot[i], since), Math.max(nt == null ? nt0 : nt[j], since));
        }
        takeOlder = c <= 0;
      }
      if (takeOlder) {
        append(a, i, Math.max(ot == null ? ot0 : ot[i], since), od == null ? od0 : od[i]);
        i++;
      } else {
        append(b, j, Math.max(nt == null ? nt0 : nt[j], since), nd == null ? nd0 : nd[j]);
        j++;
      }
      fuel--;
    }
    return fuel;
  }

  /**
   * {@link #workLongs} for two columns (a key and a value, or a two-column key: the common shape),
   * with the columns in locals and the consolidation test inlined; same result.
   */
  private long workTwoLongs(long fuel) {
    int n = older.size();
    int m = newer.size();
    long[] ot = older.timesOrNull();
    long[] od = older.diffsOrNull();
    long[] nt = newer.timesOrNull();
    long[] nd = newer.diffsOrNull();
    long ot0 = older.constantTime();
    long od0 = older.constantDiff();
    long nt0 = newer.constantTime();
    long nd0 = newer.constantDiff();
    long[] a0 = a[0];
    long[] a1 = a[1];
    long[] b0 = b[0];
    long[] b1 = b[1];
    long[] c0 = cols[0];
    long[] c1 = cols[1];
    long[] ts = times;
    long[] ds = diffs;
    long dc = diffConst;
    long s = since;
    int i = this.i;
    int j = this.j;
    int k = this.k;
    boolean last = lastComparable;
    while (fuel > 0 && (i < n || j < m)) {
      long x0;
      long x1;
      long t;
      long d;
      boolean takeOlder;
      if (j >= m) {
        takeOlder = true;
      } else if (i >= n) {
        takeOlder = false;
      } else {
        int c = Long.compare(a0[i], b0[j]);
        if (c == 0) {
          c = Long.compare(a1[i], b1[j]);
          if (c == 0) {
            c = Long.compare(Math.max(ot == null ? ot0 : ot[i], s), Math.max(nt == null ? nt0 : nt[j], s));
          }
        }
        takeOlder = c <= 0;
      }
      if (takeOlder) {
        x0 = a0[i];
        x1 = a1[i];
        t = Math.max(ot == null ? ot0 : ot[i], s);
        d = od == null ? od0 : od[i];
        i++;
      } else {
        x0 = b0[j];
        x1 = b1[j];
        t = Math.max(nt == null ? nt0 : nt[j], s);
        d = nd == null ? nd0 : nd[j];
        j++;
      }
      if (k > 0 && last && c0[k - 1] == x0 && c1[k - 1] == x1 && (ts == null || ts[k - 1] == t)) {
        long sum = (ds == null ? dc : ds[k - 1]) + d;
        if (sum == 0) {
          k--;
          last = false;
        } else if (ds != null) {
          ds[k - 1] = sum;
        } else if (sum != dc) {
          ds = diffsColumn(k, dc);
          ds[k - 1] = sum;
        }
      } else if (d != 0) {
        c0[k] = x0;
        c1[k] = x1;
        if (ts != null) {
          ts[k] = t;
        }
        if (ds != null) {
          ds[k] = d;
        } else if (k == 0) {
          dc = d;
        } else if (d != dc) {
          ds = diffsColumn(k, dc);
          ds[k] = d;
        }
        k++;
        last = true;
      }
      fuel--;
    }
    this.i = i;
    this.j = j;
    this.k = k;
    diffs = ds;
    diffConst = dc;
    lastComparable = last;
    return fuel;
  }

  private void append(long[][] from, int idx, long time, long diff) {
    if (k > 0 && lastComparable && cols[0][k - 1] == from[0][idx] && (times == null || times[k - 1] == time) && sameAsLast(from, idx)) {
      long sum = (diffs == null ? diffConst : diffs[k - 1]) + diff;
      if (sum == 0) {
        k--;
        lastComparable = false;
      } else if (diffs != null) {
        diffs[k - 1] = sum;
      } else if (sum != diffConst) {
        diffs = diffsColumn(k, diffConst);
        diffs[k - 1] = sum;
      }
      return;
    }
    if (diff == 0) {
      return;
    }
    for (int col = 0; col < from.length; col++) {
      cols[col][k] = from[col][idx];
    }
    if (times != null) {
      times[k] = time;
    }
    if (diffs != null) {
      diffs[k] = diff;
    } else if (k == 0) {
      diffConst = diff;
    } else if (diff != diffConst) {
      diffs = diffsColumn(k, diffConst);
      diffs[k] = diff;
    }
    k++;
    lastComparable = true;
  }

  /** The diffs column, made when an entry's diff first differs: entries {@code [0, n)} all had {@code same}. */
  private long[] diffsColumn(int n, long same) {
    long[] d = new long[cap];
    java.util.Arrays.fill(d, 0, n, same);
    return d;
  }

  private boolean sameAsLast(long[][] from, int idx) {
    for (int col = 1; col < from.length; col++) { // column 0 is compared by the caller
      if (cols[col][k - 1] != from[col][idx]) {
        return false;
      }
    }
    return true;
  }
}
