package io.cairn.benchmarks.peer;

import java.util.List;
import java.util.Objects;

/**
 * A kill and restore of the peer: the running instance is closed with a zero timeout, its local
 * state directory optionally wiped, and a new instance with the same {@code application.id} started.
 *
 * @param wipedLocalState whether the local state directory was deleted (a lost node / new host)
 * @param restoreMillis from the new instance's {@code start()} until it is {@code RUNNING}, no store
 *     is restoring, and the group's committed offsets are at the end of the input and repartition
 *     topics
 * @param restoredRecords records restored into the stores, as reported by the
 *     {@code StateRestoreListener} ({@code onRestoreEnd} totals)
 * @param restoreConsumerRecords records fetched by the restore consumers
 *     ({@code records-consumed-total})
 * @param restoreConsumerBytes bytes fetched by the restore consumers ({@code bytes-consumed-total}):
 *     the Kafka bytes read to restore state
 * @param mainConsumerRecords records fetched by the main consumers of the new instance until ready
 *     (input or repartition records not yet committed at the kill)
 * @param mainConsumerBytes bytes fetched by the main consumers of the new instance until ready
 * @param changelogsAtKill the changelog topics when the old instance had stopped
 * @param cpuMillis CPU time of the new instance's threads until ready (see
 *     {@link ThroughputMeasurement#cpuMillis()})
 */
public record RestoreMeasurement(
    boolean wipedLocalState,
    long restoreMillis,
    long restoredRecords,
    long restoreConsumerRecords,
    long restoreConsumerBytes,
    long mainConsumerRecords,
    long mainConsumerBytes,
    List<ChangelogTopic> changelogsAtKill,
    long cpuMillis) {

  public RestoreMeasurement {
    changelogsAtKill = List.copyOf(Objects.requireNonNull(changelogsAtKill, "changelogsAtKill"));
  }

  /** Bytes read from Kafka by the new instance until ready: restore plus main consumers. */
  public long totalBytesRead() {
    return restoreConsumerBytes + mainConsumerBytes;
  }

  /** Records in the changelog topics at the kill (end minus start offsets). */
  public long changelogRecords() {
    return changelogsAtKill.stream().mapToLong(ChangelogTopic::records).sum();
  }
}
