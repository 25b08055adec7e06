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
 *
 * <p>Output in chunks: on the long-column path, an output of more than {@link
 * ColumnVector.Longs#CHUNKED_ABOVE} entries is written into chunks of {@link
 * ColumnVector.Longs#CHUNK_ROWS} values (tests choose smaller ones), each allocated when the
 * merge reaches it, and the result's columns
 * stay chunked ({@link ColumnVector.Longs#chunked}). A merge of two large batches therefore never
 * allocates one array of its whole size: the JVM zeroes a new array without reaching a safepoint,
 * and an array of tens of millions of longs held every thread at the next safepoint for 10–430 ms
 * (time to safepoint, measured at 100M rows). The loops run in segments within which no input
 * or output index crosses a chunk; an input in one array is one segment. The times and diffs are
 * chunked alike, when the output has them: times when the entries do not share one time, diffs
 * from the first entry whose diff differs from the others'.
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
  private final ColumnVector.Longs[] a;
  private final ColumnVector.Longs[] b;
  /** The number of key and value columns. */
  private final int width;
  /**
   * The output's columns, {@code [column][chunk]}, chunks of {@code 1 << outShift} values made as
   * the merge reaches them: the key and value columns, then the times ({@code cols[width]}, null
   * when they are all {@link #timeConst}, known at the start: see the constructor), then the diffs
   * ({@code cols[width + 1]}, null while every entry so far has diff {@link #diffConst}).
   */
  private long[][][] cols;
  /** log2 of the values per output chunk; 31 when each output column is one array of {@link #cap}. */
  private final int outShift;
  private long timeConst;
  private long diffConst;
  private final int cap;
  private int k;
  /** False right after a zero sum removed the last entry: the next entry starts a new one. */
  private boolean lastComparable;
  /** The last output entry's key and value columns, time and diff (valid while {@link #lastComparable}). */
  private final long[] lastVals;
  private long lastTime;
  private long lastDiff;

  Merger(Batch older, Batch newer, long since) {
    this(older, newer, since, ColumnVector.Longs.CHUNK_SHIFT, ColumnVector.Longs.CHUNKED_ABOVE);
  }

  /**
   * A merge whose long-column output, when it has more than {@code chunkedAbove} entries, is
   * written in chunks of {@code 1 << chunkShift} values.
   */
  Merger(Batch older, Batch newer, long since, int chunkShift, int chunkedAbove) {
    this.older = older;
    this.newer = newer;
    this.since = since;
    ColumnVector.Longs[] la = older.longVectors();
    ColumnVector.Longs[] lb = newer.longVectors();
    cap = older.size() + newer.size();
    if (la != null && lb != null && la.length == lb.length) {
      a = la;
      b = lb;
      width = la.length;
      outShift = cap <= chunkedAbove ? 31 : chunkShift;
      int chunks = outShift == 31 ? 1 : (int) ((cap + (1L << outShift) - 1) >>> outShift);
      // both inputs of one time each that advance to the same time (a compacted batch and a sealed
      // tick, both at or below since): the output has that one time, and no times column is made.
      // The diffs column is made only at the first diff that differs from the others (an upsert
      // state, a set of distinct rows: never), so a merge of two large compacted batches allocates
      // the key and value columns alone
      boolean oneTime = older.timesOrNull() == null && newer.timesOrNull() == null
          && Math.max(older.constantTime(), since) == Math.max(newer.constantTime(), since);
      cols = new long[width + 2][][];
      for (int c = 0; c < width + (oneTime ? 0 : 1); c++) {
        cols[c] = new long[chunks][];
      }
      timeConst = oneTime ? Math.max(older.constantTime(), since) : 0;
      lastVals = new long[width];
      out = null;
    } else {
      a = null;
      b = null;
      width = 0;
      outShift = 31;
      lastVals = null;
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
    fuel = a == null ? workRows(fuel) : width == 2 ? workTwoLongs(fuel) : workLongs(fuel);
    if (i >= older.size() && j >= newer.size() && result == null) {
      Description d = new Description(
          older.description().lower(),
          Math.max(older.description().upper(), newer.description().upper()),
          Math.max(since, Math.max(older.description().since(), newer.description().since())));
      if (a != null) {
        result = outShift == 31
            ? Batch.ofLongColumns(older.keySchema(), older.valSchema(), d, firstChunks(width), firstChunk(width), timeConst,
                firstChunk(width + 1), diffConst, k)
            : chunkedResult(d);
        cols = null;
      } else {
        result = out.build(d);
      }
    }
    return fuel;
  }

  /** Output column {@code c}'s one array (allocated, for an empty output, here), or null for a constant one. */
  private long[] firstChunk(int c) {
    if (cols[c] == null) {
      return null;
    }
    return cols[c][0] != null ? cols[c][0] : new long[0];
  }

  private long[][] firstChunks(int n) {
    long[][] out = new long[n][];
    for (int c = 0; c < n; c++) {
      out[c] = firstChunk(c);
    }
    return out;
  }

  /**
   * The batch of the chunked output's {@code k} entries: the chunks they reach, the last one copied
   * to its used length when more than an eighth of it is unused (a copy of at most one chunk).
   */
  private Batch chunkedResult(Description d) {
    int used = (int) ((k + (1L << outShift) - 1) >>> outShift);
    ColumnVector.Longs[] out = new ColumnVector.Longs[width + 2];
    int kc = older.keySchema().size();
    for (int c = 0; c < width + 2; c++) {
      if (cols[c] == null) {
        continue;
      }
      long[][] chunks = java.util.Arrays.copyOf(cols[c], used);
      if (used > 0) {
        int inLast = k - ((used - 1) << outShift);
        long[] last = chunks[used - 1];
        if (last.length - inLast >= last.length / 8) {
          chunks[used - 1] = java.util.Arrays.copyOf(last, inLast);
        }
      }
      io.cairn.engine.row.Type type = c >= width ? io.cairn.engine.row.Type.BIGINT
          : c < kc ? older.keySchema().type(c) : older.valSchema().type(c - kc);
      out[c] = ColumnVector.Longs.chunked(type, chunks, outShift, k);
    }
    return Batch.ofLongVectors(older.keySchema(), older.valSchema(), d, java.util.Arrays.copyOf(out, width), out[width], timeConst,
        out[width + 1], diffConst, k);
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

  /**
   * Points {@code into[c]} at the chunk that holds entry {@code x} (an entry that exists) of each key
   * and value column of {@code from}, {@code into[width]} at that of its times and {@code
   * into[width + 1]} of its diffs (null when constant); returns the number of entries from {@code x}
   * to the end of that chunk or of the batch, whichever is first.
   */
  private long inputChunk(Batch from, ColumnVector.Longs[] columns, int x, long[][] into) {
    int shift = columns[0].chunkShift();
    for (int c = 0; c < width + 2; c++) {
      ColumnVector.Longs col = c < width ? columns[c] : c == width ? from.timesOrNull() : from.diffsOrNull();
      if (col == null) {
        into[c] = null;
        continue;
      }
      if (col.chunkShift() != shift) {
        throw new IllegalStateException("Cannot merge " + from + ": its columns are chunked differently (2^" + shift + " and 2^"
            + col.chunkShift() + ")");
      }
      into[c] = col.chunks()[x >>> shift];
    }
    return Math.min(from.size(), chunkBase(x, shift) + (1L << shift)) - x;
  }

  /** The first entry of the chunk of a column chunked by {@code shift} that holds entry {@code x}. */
  private static int chunkBase(int x, int shift) {
    return shift == 31 ? 0 : (x >>> shift) << shift;
  }

  /**
   * Points {@code into[c]} at the chunk of output column c that entry {@link #k} is written to
   * (allocating it when the merge first reaches it; null for a constant times or diffs column), and
   * returns the room from {@code k} to the chunk's end.
   */
  private long outputChunk(long[][] into) {
    int ck = k >>> outShift;
    for (int c = 0; c < width + 2; c++) {
      into[c] = cols[c] == null ? null : chunk(c, ck);
    }
    return (long) chunkBase(k, outShift) + chunkLength(ck) - k;
  }

  /** Chunk {@code ck} of output column {@code c}, allocated when first asked for. */
  private long[] chunk(int c, int ck) {
    long[] chunk = cols[c][ck];
    if (chunk == null) {
      chunk = new long[chunkLength(ck)];
      cols[c][ck] = chunk;
    }
    return chunk;
  }

  private int chunkLength(int ck) {
    return outShift == 31 ? cap : (int) Math.min(1 << outShift, cap - ((long) ck << outShift));
  }

  /** Sets entry {@code x} of output column {@code c}. */
  private void set(int c, int x, long value) {
    chunk(c, x >>> outShift)[outShift == 31 ? x : x & ((1 << outShift) - 1)] = value;
  }

  /**
   * Makes the diffs column when an entry's diff first differs: entries {@code [0, n)} all had
   * {@code same}. Returns the chunk that entry {@code n} is in.
   */
  private long[] diffsColumn(int n, long same) {
    cols[width + 1] = new long[cols[0].length][];
    for (int ck = 0; n > 0 && ck <= (n - 1) >>> outShift; ck++) {
      long[] chunk = chunk(width + 1, ck);
      long base = outShift == 31 ? 0 : (long) ck << outShift;
      java.util.Arrays.fill(chunk, 0, (int) Math.min(chunk.length, n - base), same);
    }
    return chunk(width + 1, n >>> outShift);
  }

  private long workLongs(long fuel) {
    int n = older.size();
    int m = newer.size();
    long ot0 = older.constantTime();
    long od0 = older.constantDiff();
    long nt0 = newer.constantTime();
    long nd0 = newer.constantDiff();
    long[][] ac = new long[width + 2][];
    long[][] bc = new long[width + 2][];
    long[][] oc = new long[width + 2][];
    int aShift = a[0].chunkShift();
    int bShift = b[0].chunkShift();
    while (fuel > 0 && (i < n || j < m)) {
      // a segment: no index leaves its chunk
      long seg = fuel;
      if (i < n) {
        seg = Math.min(seg, inputChunk(older, a, i, ac));
      }
      if (j < m) {
        seg = Math.min(seg, inputChunk(newer, b, j, bc));
      }
      seg = Math.min(seg, outputChunk(oc));
      int aBase = chunkBase(i, aShift);
      int bBase = chunkBase(j, bShift);
      int oBase = chunkBase(k, outShift);
      long[] ot = ac[width];
      long[] od = ac[width + 1];
      long[] nt = bc[width];
      long[] nd = bc[width + 1];
      long done = 0;
      while (done < seg && (i < n || j < m)) {
        done++;
        boolean takeOlder;
        if (j >= m) {
          takeOlder = true;
        } else if (i >= n) {
          takeOlder = false;
        } else {
          int c = Long.compare(ac[0][i - aBase], bc[0][j - bBase]); // the first column decides almost every comparison
          for (int col = 1; col < width && c == 0; col++) {
            c = Long.compare(ac[col][i - aBase], bc[col][j - bBase]);
          }
          if (c == 0) {
            c = Long.compare(Math.max(ot == null ? ot0 : ot[i - aBase], since), Math.max(nt == null ? nt0 : nt[j - bBase], since));
          }
          takeOlder = c <= 0;
        }
        boolean popped;
        if (takeOlder) {
          popped = append(ac, i - aBase, oc, oBase, Math.max(ot == null ? ot0 : ot[i - aBase], since), od == null ? od0 : od[i - aBase]);
          i++;
        } else {
          popped = append(bc, j - bBase, oc, oBase, Math.max(nt == null ? nt0 : nt[j - bBase], since), nd == null ? nd0 : nd[j - bBase]);
          j++;
        }
        if (popped && k < oBase) {
          break; // the output went back into the previous chunk
        }
      }
      fuel -= done;
    }
    return fuel;
  }

  /**
   * Appends entry {@code x} of the input chunks {@code from} to the output chunks {@code oc} (whose
   * first entry is {@code oBase}), consolidating it into the last entry when equal; true when that
   * made a zero sum and removed the last entry.
   */
  private boolean append(long[][] from, int x, long[][] oc, int oBase, long time, long diff) {
    if (k > 0 && lastComparable && lastTime == time && sameAsLast(from, x)) {
      long sum = lastDiff + diff;
      if (sum == 0) {
        k--;
        lastComparable = false;
        return true;
      }
      lastDiff = sum;
      if (oc[width + 1] == null && sum != diffConst) {
        oc[width + 1] = diffsColumn(k, diffConst);
      }
      if (oc[width + 1] != null) {
        set(width + 1, k - 1, sum);
      }
      return false;
    }
    if (diff == 0) {
      return false;
    }
    for (int col = 0; col < width; col++) {
      long v = from[col][x];
      oc[col][k - oBase] = v;
      lastVals[col] = v;
    }
    if (oc[width] != null) {
      oc[width][k - oBase] = time;
    }
    if (oc[width + 1] == null) {
      if (k == 0) {
        diffConst = diff;
      } else if (diff != diffConst) {
        oc[width + 1] = diffsColumn(k, diffConst);
      }
    }
    if (oc[width + 1] != null) {
      oc[width + 1][k - oBase] = diff;
    }
    k++;
    lastComparable = true;
    lastTime = time;
    lastDiff = diff;
    return false;
  }

  private boolean sameAsLast(long[][] from, int x) {
    for (int col = 0; col < width; col++) {
      if (lastVals[col] != from[col][x]) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@link #workLongs} for two columns (a key and a value, or a two-column key: the common shape),
   * with the columns in locals and the consolidation test inlined; same result.
   */
  private long workTwoLongs(long fuel) {
    int n = older.size();
    int m = newer.size();
    long ot0 = older.constantTime();
    long od0 = older.constantDiff();
    long nt0 = newer.constantTime();
    long nd0 = newer.constantDiff();
    long[][] ac = new long[4][];
    long[][] bc = new long[4][];
    long[][] oc = new long[4][];
    int aShift = a[0].chunkShift();
    int bShift = b[0].chunkShift();
    long s = since;
    int i = this.i;
    int j = this.j;
    int k = this.k;
    long dc = diffConst;
    boolean last = lastComparable;
    long lx0 = lastVals[0];
    long lx1 = lastVals[1];
    long lt = lastTime;
    long ld = lastDiff;
    while (fuel > 0 && (i < n || j < m)) {
      // a segment: no index leaves its chunk
      long seg = fuel;
      if (i < n) {
        seg = Math.min(seg, inputChunk(older, a, i, ac));
      }
      if (j < m) {
        seg = Math.min(seg, inputChunk(newer, b, j, bc));
      }
      this.k = k;
      seg = Math.min(seg, outputChunk(oc));
      int aBase = chunkBase(i, aShift);
      int bBase = chunkBase(j, bShift);
      int oBase = chunkBase(k, outShift);
      long[] a0 = ac[0];
      long[] a1 = ac[1];
      long[] ot = ac[2];
      long[] od = ac[3];
      long[] b0 = bc[0];
      long[] b1 = bc[1];
      long[] nt = bc[2];
      long[] nd = bc[3];
      long[] c0 = oc[0];
      long[] c1 = oc[1];
      long[] ts = oc[2];
      long[] ds = oc[3];
      long done = 0;
      while (done < seg && (i < n || j < m)) {
        done++;
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
          int c = Long.compare(a0[i - aBase], b0[j - bBase]);
          if (c == 0) {
            c = Long.compare(a1[i - aBase], b1[j - bBase]);
            if (c == 0) {
              c = Long.compare(Math.max(ot == null ? ot0 : ot[i - aBase], s), Math.max(nt == null ? nt0 : nt[j - bBase], s));
            }
          }
          takeOlder = c <= 0;
        }
        if (takeOlder) {
          x0 = a0[i - aBase];
          x1 = a1[i - aBase];
          t = Math.max(ot == null ? ot0 : ot[i - aBase], s);
          d = od == null ? od0 : od[i - aBase];
          i++;
        } else {
          x0 = b0[j - bBase];
          x1 = b1[j - bBase];
          t = Math.max(nt == null ? nt0 : nt[j - bBase], s);
          d = nd == null ? nd0 : nd[j - bBase];
          j++;
        }
        if (k > 0 && last && lx0 == x0 && lx1 == x1 && lt == t) {
          long sum = ld + d;
          if (sum == 0) {
            k--;
            last = false;
            if (k < oBase) {
              break; // the output went back into the previous chunk
            }
          } else {
            ld = sum;
            if (ds == null && sum != dc) {
              ds = diffsColumn(k, dc);
            }
            if (ds != null) {
              set(3, k - 1, sum);
            }
          }
        } else if (d != 0) {
          c0[k - oBase] = x0;
          c1[k - oBase] = x1;
          if (ts != null) {
            ts[k - oBase] = t;
          }
          if (ds == null) {
            if (k == 0) {
              dc = d;
            } else if (d != dc) {
              ds = diffsColumn(k, dc);
            }
          }
          if (ds != null) {
            ds[k - oBase] = d;
          }
          k++;
          last = true;
          lx0 = x0;
          lx1 = x1;
          lt = t;
          ld = d;
        }
      }
      fuel -= done;
    }
    this.i = i;
    this.j = j;
    this.k = k;
    diffConst = dc;
    lastComparable = last;
    lastVals[0] = lx0;
    lastVals[1] = lx1;
    lastTime = lt;
    lastDiff = ld;
    return fuel;
  }
}
