package io.cairn.snapshotter;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.sink.SinkTrack;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A sink's bookkeeping ⇄ its manifest entry ({@link Manifest.SinkEntry}). */
final class SinkEntries {
  private SinkEntries() {}

  static List<Manifest.SinkEntry> of(List<SinkTrack.State> states) {
    List<Manifest.SinkEntry> out = new ArrayList<>();
    for (SinkTrack.State st : states) {
      List<List<Object>> pending = new ArrayList<>(st.rows().size());
      for (int i = 0; i < st.rows().size(); i++) {
        List<Object> r = new ArrayList<>(st.rows().get(i).size() + 1);
        r.add(st.diffs()[i]);
        for (Object v : st.rows().get(i).toList()) {
          r.add(v instanceof io.cairn.engine.row.Interval iv ? iv.storageText() : v); // an INTERVAL's fields, exactly, as text
        }
        pending.add(r);
      }
      out.add(new Manifest.SinkEntry(st.name(), st.id(), st.lastLabel(), st.positions(), st.schema().toString(), pending));
    }
    return out;
  }

  static List<SinkTrack.State> states(List<Manifest.SinkEntry> entries) {
    List<SinkTrack.State> out = new ArrayList<>();
    for (Manifest.SinkEntry e : entries) {
      Schema schema = Schema.parse(e.columns());
      List<Row> rows = new ArrayList<>(e.pending().size());
      long[] diffs = new long[e.pending().size()];
      for (int i = 0; i < e.pending().size(); i++) {
        List<Object> r = e.pending().get(i);
        if (r.size() != schema.size() + 1 || !(r.get(0) instanceof Number d)) {
          throw new CorruptSnapshotException("Cannot read sink '" + e.name() + "' of the manifest: pending row " + i + " " + r
              + " does not match its columns " + schema);
        }
        diffs[i] = d.longValue();
        Object[] vals = new Object[schema.size()];
        for (int c = 0; c < vals.length; c++) {
          vals[c] = value(schema.type(c), r.get(c + 1), e.name());
        }
        rows.add(Row.wrap(vals));
      }
      out.add(new SinkTrack.State(e.name(), e.id(), e.lastLabel(), e.positions(), schema, rows, Arrays.copyOf(diffs, diffs.length)));
    }
    return out;
  }

  private static Object value(Type t, Object v, String sink) {
    if (v == null) {
      return null;
    }
    return switch (t) {
      case BIGINT, TIMESTAMP, DATE -> ((Number) v).longValue();
      case DOUBLE -> ((Number) v).doubleValue();
      case TEXT -> (String) v;
      case NUMERIC -> io.cairn.engine.row.Numeric.parse(v.toString()); // a JSON number or string, read exactly
      case INTERVAL -> io.cairn.engine.row.Interval.parse((String) v);
      case BOOLEAN -> (Boolean) v;
      case NULL -> throw new CorruptSnapshotException("Cannot read sink '" + sink + "' of the manifest: a value in a NULL column");
    };
  }
}
