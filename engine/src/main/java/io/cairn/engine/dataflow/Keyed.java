package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Input updates paired with their keys, sorted by key (stable: arrival order kept within a key). */
record Keyed(Row key, Row row, long diff) {
  static final Comparator<Keyed> BY_KEY = Comparator.comparing(Keyed::key);

  static List<Keyed> sort(Rows rows, int[] keyCols, boolean skipNullKeys) {
    List<Keyed> out = new ArrayList<>(rows.size());
    for (int i = 0; i < rows.size(); i++) {
      Row r = rows.row(i);
      Row k = r.select(keyCols);
      if (skipNullKeys && hasNull(k)) {
        continue;
      }
      out.add(new Keyed(k, r, rows.diff(i)));
    }
    out.sort(BY_KEY);
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
