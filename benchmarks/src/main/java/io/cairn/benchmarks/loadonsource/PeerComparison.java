package io.cairn.benchmarks.loadonsource;

import io.cairn.benchmarks.peer.PeerResult;
import java.util.Objects;

/**
 * cairn beside Kafka Streams on the same topic and the same keyed aggregation (orders per customer).
 *
 * @param inputRecords records in the topic
 * @param cairnThroughputRecordsPerSecond cairn ingesting the topic from its beginning (fresh node, catch-up time)
 * @param cairnIngestMillis that catch-up's wall time
 * @param cairnSnapshotMillis the snapshot taken at the end of the input
 * @param cairnRecoveryMillis cairn restarted from that snapshot: load + catch-up
 * @param cairnRecoveryKafkaBytes Kafka bytes cairn read while recovering
 * @param cairnRecoveryStoreBytes object-store bytes cairn read while recovering (the snapshot)
 * @param cairnMatchesOracle cairn's view equals the oracle after recovery
 * @param peer the Kafka Streams measurements
 * @param peerMatchesOracle the peer's aggregate equals the oracle after its restore
 */
public record PeerComparison(
    long inputRecords,
    double cairnThroughputRecordsPerSecond,
    long cairnIngestMillis,
    long cairnSnapshotMillis,
    long cairnRecoveryMillis,
    long cairnRecoveryKafkaBytes,
    long cairnRecoveryStoreBytes,
    boolean cairnMatchesOracle,
    PeerResult peer,
    boolean peerMatchesOracle) {

  public PeerComparison {
    Objects.requireNonNull(peer, "peer");
  }

  /** Peer restore time / cairn recovery time (target ≥ 5). */
  public double recoverySpeedup() {
    return peer.restore().restoreMillis() / (double) Math.max(1, cairnRecoveryMillis);
  }

  /** cairn records/s / peer records/s (target ≥ 10, issue 13). */
  public double throughputRatio() {
    return cairnThroughputRecordsPerSecond / Math.max(1e-9, peer.throughput().recordsPerSecond());
  }
}
