package io.cairn.snapshotter;

import java.util.List;

/**
 * What one garbage collection did.
 *
 * @param kept manifests retained
 * @param deletedManifests manifests deleted (expired by retention, or invalid and superseded)
 * @param deletedFiles batch files deleted (unreferenced and older than the grace period)
 * @param bytesFreed bytes of the deleted batch files
 * @param keptUnreferencedFiles unreferenced batch files kept because they are younger than the grace period or pinned
 * @param invalid manifests found invalid, with the reason
 */
public record GcResult(
    List<String> kept, List<String> deletedManifests, List<String> deletedFiles, long bytesFreed, int keptUnreferencedFiles,
    List<RecoveryChoice.Rejected> invalid) {
  public GcResult {
    kept = List.copyOf(kept);
    deletedManifests = List.copyOf(deletedManifests);
    deletedFiles = List.copyOf(deletedFiles);
    invalid = List.copyOf(invalid);
  }
}
