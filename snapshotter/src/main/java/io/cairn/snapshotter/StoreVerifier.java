package io.cairn.snapshotter;

import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogIntegrityException;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.objectstore.ObjectStore;
import io.cairn.snapshotter.catalog.CatalogTail;
import io.cairn.snapshotter.catalog.ObjectStoreCatalogLog;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Checks a whole store as written: the catalog's hash chain and its head witness ({@link
 * CatalogTail}), then every snapshot — its manifest, every file it references (size and
 * checksum, {@link SnapshotReader.Verification#FULL}) and the catalog entry it was taken with.
 * Only reads.
 */
public final class StoreVerifier {
  private StoreVerifier() {}

  /** Verifies the catalog of {@code store} and every snapshot {@code reader} lists. */
  public static VerifyReport verify(ObjectStore store, SnapshotReader reader) {
    List<VerifyReport.Line> lines = new ArrayList<>();
    List<CatalogEntry> entries = List.of();
    String catalogProblem = null;
    CatalogLog catalog = new ObjectStoreCatalogLog(store);
    try {
      Optional<CatalogTail.Witness> witness = CatalogTail.highest(store); // before the catalog: see CatalogTail
      entries = catalog.read(CatalogLog.FIRST_POSITION);
      CatalogIntegrityException.verifyChain(entries, "", catalog.describe());
      CatalogTail.checkWitness(witness, entries, catalog.describe());
    } catch (RuntimeException e) {
      catalogProblem = e.getMessage();
    }
    // a catalog that does not read (a gap) is counted by listing: "0 entries" would hide what is there
    long present = catalogProblem == null ? entries.size() : store.list(ObjectStoreCatalogLog.PREFIX).stream()
        .filter(o -> io.cairn.objectstore.NumberedObjects.number(o.key()) >= 0).count();
    lines.add(new VerifyReport.Line("catalog (" + present + " entries)",
        catalogProblem == null ? VerifyReport.Status.OK : VerifyReport.Status.INVALID, catalogProblem == null ? "" : catalogProblem));
    for (ManifestInfo i : reader.list()) {
      List<String> problems;
      try {
        Manifest m = reader.read(i);
        problems = new ArrayList<>(reader.verify(m, SnapshotReader.Verification.FULL));
        if (catalogProblem == null) {
          long p = m.catalogPosition();
          if (p > entries.size()) {
            problems.add("it includes catalog entries up to " + (p - 1) + " but the catalog ends at entry " + (entries.size() - 1));
          } else if (m.catalogHash() != null && !m.catalogHash().equals(p == 0 ? "" : entries.get((int) p - 1).hash())) {
            problems.add("catalog entry " + (p - 1) + " is not the one this snapshot was taken with (changed or replaced)");
          }
        }
      } catch (RuntimeException e) {
        problems = List.of(e.getMessage());
      }
      if (!problems.isEmpty() && store.head(i.key()).isEmpty()) {
        lines.add(new VerifyReport.Line(i.key(), VerifyReport.Status.GONE, "deleted while it was being verified (garbage collection)"));
      } else {
        lines.add(new VerifyReport.Line(i.key(), problems.isEmpty() ? VerifyReport.Status.OK : VerifyReport.Status.INVALID,
            String.join("; ", problems)));
      }
    }
    return new VerifyReport(lines);
  }
}
