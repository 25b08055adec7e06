package io.cairn.snapshotter;

import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;

/**
 * The figures of one committed snapshot.
 *
 * @param manifestKey the full key of the manifest (the commit point)
 * @param rows the snapshot's row count, {@link Manifest#rows()}: the updates stored in the batch
 *     files its manifest references, which is what loading it yields (may exceed the captured
 *     state's in-memory count when a merged batch is stored as its inputs' files)
 * @param files batch files referenced (empty batches have no file)
 * @param filesNew files uploaded by this snapshot
 * @param filesReused files referenced from an earlier snapshot
 * @param bytesUploaded bytes of the new files plus the manifest
 * @param bytesTotal bytes of every referenced file
 * @param capturePause how long the engine was held to capture the state (as measured by the caller; zero if unknown)
 * @param uploadDuration from the start of the upload to the manifest's commit
 * @param offsets per source, {@code offsets(tick)}: pass to {@code Engine.onSnapshotCommitted}
 */
public record SnapshotResult(
    String snapshotId,
    String manifestKey,
    long tick,
    Instant createdAt,
    long catalogPosition,
    long rows,
    int files,
    int filesNew,
    int filesReused,
    long bytesUploaded,
    long bytesTotal,
    Duration capturePause,
    Duration uploadDuration,
    Map<String, SourceOffsets> offsets) {
  public SnapshotResult {
    Objects.requireNonNull(snapshotId, "snapshotId");
    offsets = Map.copyOf(offsets);
  }
}
