package io.cairn.snapshotter;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one view as of a snapshot to a Parquet file, reading only the snapshot format: the
 * manifest's view metadata and the view's arrangement, its files verified as at recovery. No
 * engine runs.
 */
public final class ViewExporter {
  private static final Logger LOG = LoggerFactory.getLogger(ViewExporter.class);

  private ViewExporter() {}

  /**
   * Writes view {@code view} as of snapshot {@code snapshotId} (null: the newest that reads) of
   * {@code store} to {@code to} as one Parquet file whose columns are the view's, in the view's
   * order, plus {@code _time} (the snapshot's tick) and {@code _diff} (the row's multiplicity: 1
   * unless the view holds duplicate rows). The file appears whole or not at all (written beside
   * it, then moved).
   *
   * @return a one-line summary
   * @throws IllegalArgumentException when there is no such snapshot or view
   */
  public static String export(ObjectStore store, SnapshotReader reader, String view, String snapshotId, Path to) {
    Manifest m = null;
    for (ManifestInfo i : reader.list()) {
      if (snapshotId != null && !i.snapshotId().equals(snapshotId)) {
        continue;
      }
      try {
        m = reader.read(i);
        break;
      } catch (CorruptSnapshotException e) {
        if (snapshotId != null) {
          throw e;
        }
        LOG.warn("Skipping snapshot {}: {}", i.key(), e.getMessage());
      }
    }
    if (m == null) {
      throw new IllegalArgumentException(snapshotId == null ? "Cannot export: no snapshot in " + store.describe()
          : "Cannot export: no snapshot with id " + snapshotId + " in " + store.describe() + " (cairn snapshots list shows them)");
    }
    Manifest snap = m;
    Manifest.ViewEntry v = m.view(view).orElseThrow(() -> new IllegalArgumentException(snap.views().isEmpty()
        ? "Cannot export view '" + view + "': snapshot " + snap.snapshotId() + " has no view metadata (written in manifest format "
            + snap.formatVersion() + " by an older cairn); take a new snapshot with `cairn snapshot`"
        : "Cannot export view '" + view + "': snapshot " + snap.snapshotId() + " has no such view (its views: "
            + snap.views().stream().map(Manifest.ViewEntry::name).toList() + ")"));
    Manifest only = new Manifest(m.formatVersion(), m.snapshotId(), m.tick(), m.createdAt(), m.catalogPosition(), m.shards(),
        m.offsets(), m.arrangements().stream().filter(a -> a.name().equals(v.arrangement())).toList(), m.catalogHash(), m.epoch(),
        m.views());
    EngineState st = reader.load(only);
    Schema cols = Schema.parse(v.columns());
    Map<Row, Long> counts = new HashMap<>();
    for (ArrangementState a : st.arrangements()) {
      int[] fromKey = new int[cols.size()];
      int[] fromVal = new int[cols.size()];
      for (int c = 0; c < cols.size(); c++) {
        fromKey[c] = a.keySchema().indexOf(cols.column(c).name());
        fromVal[c] = a.valSchema().indexOf(cols.column(c).name());
        if (fromKey[c] < 0 && fromVal[c] < 0) {
          throw new IllegalStateException("Cannot export view '" + view + "': column '" + cols.column(c).name()
              + "' is not in arrangement " + v.arrangement());
        }
      }
      for (Batch b : a.batches()) {
        for (int i = 0; i < b.size(); i++) {
          Object[] row = new Object[cols.size()];
          for (int c = 0; c < row.length; c++) {
            row[c] = fromKey[c] >= 0 ? b.keyColumn(fromKey[c]).get(i) : b.valColumn(fromVal[c]).get(i);
          }
          counts.merge(Row.wrap(row), b.diff(i), Long::sum);
        }
      }
    }
    List<Update> rows = new ArrayList<>();
    long total = 0;
    for (Map.Entry<Row, Long> e : counts.entrySet()) {
      if (e.getValue() < 0) {
        throw new IllegalStateException("Cannot export view '" + view + "': row " + e.getKey() + " has multiplicity " + e.getValue()
            + " in snapshot " + m.snapshotId());
      }
      if (e.getValue() > 0) {
        rows.add(new Update(e.getKey(), Row.EMPTY, m.tick(), e.getValue()));
        total += e.getValue();
      }
    }
    Batch out = Batch.fromUpdates(cols, Schema.of(), rows, new Description(m.tick(), m.tick() + 1, m.tick()));
    Path tmp = to.resolveSibling(to.getFileName() + ".part");
    try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(tmp))) {
      ParquetBatchFiles.write(view, 0, out, os);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot export view '" + view + "' to " + to + ": " + e.getMessage(), e);
    }
    try {
      Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot export view '" + view + "' to " + to + ": " + e.getMessage(), e);
    }
    return String.format(Locale.ROOT, "exported view %s as of snapshot %s (tick %d): %,d rows (%,d distinct) to %s%n", view,
        m.snapshotId(), m.tick(), total, rows.size(), to);
  }
}
