package io.cairn.benchmarks.loadonsource;

import java.util.Objects;

/**
 * One recovery strategy, measured: the snapshot it starts from (none for a full replay), what the
 * recovery cost in time, source load and object-store requests, and what the workload says it
 * should have read.
 *
 * @param name strategy name ({@code full-replay}, {@code daily}, {@code hourly}, {@code right-after},
 *     or {@code snapshot-hNN} for the extra points of the curve)
 * @param snapshotHour simulated hour of the snapshot (-1: none)
 * @param hoursSinceSnapshot simulated hours between the snapshot and the crash (-1: none)
 * @param recoveryMillis wall time until the views equal the oracle: Node.recover (load the snapshot and
 *     catch up) plus any ticking still needed after it returned
 * @param nodeRecoverMillis Node.recover's own wall time (its report's total)
 * @param loadMillis reading and loading the snapshot
 * @param catchUpMillis ticking until every source caught up and the views equal the oracle
 * @param catchUpReadingMillis of Node.recover's catch-up, the ticks' time reading the sources (its report's split)
 * @param catchUpComputingMillis of Node.recover's catch-up, the ticks' time computing after reading
 * @param rowsLoaded updates loaded from the snapshot
 * @param kafkaRecords Kafka records read during recovery (the source's load meter, opened by the recovery)
 * @param kafkaBytes key+value bytes of those records
 * @param kafkaBytesFetched bytes fetched by the consumer (wire, incl. batch overhead)
 * @param kafkaFetchRequests fetch requests sent
 * @param expectedKafkaRecords records in the topic after the snapshot's offsets (the whole topic for a full replay)
 * @param expectedKafkaBytes key+value bytes of those records
 * @param pgRecords Postgres rows delivered during recovery (initial load rows + streamed changes)
 * @param pgRowsScanned rows the server scanned in the table (initial load), -1 without Postgres
 * @param pgWalBytesStreamed transaction data the slot decoded and sent during the recovery (growth of
 *     {@code pg_stat_replication_slots.total_bytes}; the source meter's {@code wal_bytes_streamed} is
 *     sampled once a second and misses most of a short recovery), -1 without Postgres
 * @param pgWalBytesNeeded WAL written between the snapshot and the crash: what the slot must retain for
 *     this strategy (0 for a full replay, which does a new initial load), -1 without Postgres
 * @param expectedPgChanges row changes made after the snapshot (the table's rows for a full replay)
 * @param storeGetRequests S3 GET/HEAD-class requests of the recovery
 * @param storeListAndPutRequests S3 PUT/LIST-class requests of the recovery
 * @param storeBytesRead bytes read from the object store
 * @param storeCostUsd estimated S3 cost of the recovery's requests and transfer
 * @param snapshotBytes size of the snapshot's batch files (0: none)
 * @param snapshotFiles batch files of the snapshot
 * @param snapshotUploadMillis time to upload and commit the snapshot (into an empty store)
 * @param snapshotPauseMicros time the engine was held to capture the state
 * @param snapshotPutRequests S3 PUT-class requests to write the snapshot
 * @param snapshotCostUsd estimated S3 cost of writing the snapshot
 * @param viewsMatchOracle whether every view equals the naive oracle after recovery
 * @param standby for a standby strategy ({@code warm-standby}, {@code hot-standby}), what it read
 *     while standing by and how its takeover went; null otherwise. For those strategies the
 *     recovery figures above are the takeover's: {@code recoveryMillis} from the start of the
 *     owner's clean close until the standby's views equal the oracle, the source figures what the
 *     takeover read, the store figures the standby's whole life (its load while standing by and
 *     the takeover)
 */
public record StrategyResult(
    String name,
    int snapshotHour,
    double hoursSinceSnapshot,
    long recoveryMillis,
    long nodeRecoverMillis,
    long loadMillis,
    long catchUpMillis,
    long catchUpReadingMillis,
    long catchUpComputingMillis,
    long rowsLoaded,
    long kafkaRecords,
    long kafkaBytes,
    long kafkaBytesFetched,
    long kafkaFetchRequests,
    long expectedKafkaRecords,
    long expectedKafkaBytes,
    long pgRecords,
    long pgRowsScanned,
    long pgWalBytesStreamed,
    long pgWalBytesNeeded,
    long expectedPgChanges,
    long storeGetRequests,
    long storeListAndPutRequests,
    long storeBytesRead,
    double storeCostUsd,
    long snapshotBytes,
    int snapshotFiles,
    long snapshotUploadMillis,
    long snapshotPauseMicros,
    long snapshotPutRequests,
    double snapshotCostUsd,
    boolean viewsMatchOracle,
    StandbyFigures standby) {

  public StrategyResult {
    Objects.requireNonNull(name, "name");
  }

  /** Whether this is a standby strategy (an owner and a standby in a group, the standby taking over). */
  @com.fasterxml.jackson.annotation.JsonIgnore // else it hides the standby component in results.json
  public boolean isStandby() {
    return standby != null;
  }

  public boolean fullReplay() {
    return snapshotHour < 0;
  }

  /** Kafka bytes read / bytes after the snapshot's offsets (1.00 = only what follows the snapshot). */
  public double kafkaByteRatio() {
    return expectedKafkaBytes == 0 ? (kafkaBytes == 0 ? 1.0 : Double.POSITIVE_INFINITY) : (double) kafkaBytes / expectedKafkaBytes;
  }
}
