package io.cairn.engine.trace;

/**
 * Merges an older and a newer batch into one, a bounded amount of work at a time ({@link
 * #work(long)}), advancing times to {@code since} (logical compaction) and consolidating as it
 * goes. The inputs stay readable in the spine until the merge completes, so reads never wait for
 * a merge and a tick never pays for a whole large merge.
 */
final class Merger {
  private final Batch older;
  private final Batch newer;
  private final long since;
  private final Batch.SortedBuilder out;
  private int i;
  private int j;
  private Batch result;

  Merger(Batch older, Batch newer, long since) {
    this.older = older;
    this.newer = newer;
    this.since = since;
    this.out = new Batch.SortedBuilder(older.keySchema(), older.valSchema(), older.size() + newer.size());
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
    if (i >= n && j >= m && result == null) {
      result =
          out.build(
              new Description(
                  older.description().lower(),
                  Math.max(older.description().upper(), newer.description().upper()),
                  Math.max(since, Math.max(older.description().since(), newer.description().since()))));
    }
    return fuel;
  }
}
