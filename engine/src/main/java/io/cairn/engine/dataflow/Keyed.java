package io.cairn.engine.dataflow;

import io.cairn.engine.row.KeySort;
import io.cairn.engine.row.Row;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Input updates paired with their keys, sorted by key (stable: arrival order kept within a key). */
record Keyed(Row key, Row row, long diff) {
  static final Comparator<Keyed> BY_KEY = Comparator.comparing(Keyed::key);

  static List<Keyed> sort(Rows rows, int[] keyCols, boolean skipNullKeys) {
    Keyed[] all = new Keyed[rows.size()];
    Row[] keys = new Row[rows.size()];
    int n = 0;
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.row(i);
      Row k = r.select(keyCols);
      if (skipNullKeys && hasNull(k)) {
        continue;
      }
      keys[n] = k;
      all[n++] = new Keyed(k, r, rows.diff(i));
    }
    int[] perm = KeySort.byKey(keys, n);
    List<Keyed> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(all[perm[i]]);
    }
    return out;
  }

  static boolean hasNull(Row key) {
    for (int i = 0; i < key.size(); i++) {
      if (key.isNull(i)) {
        return true;
      }
    }
    return false;
  }
}
