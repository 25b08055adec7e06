package io.cairn.benchmarks.peer;

/** Where the Kafka Streams peer keeps its state stores. Both are backed by changelog topics. */
public enum StoreType {
  /**
   * RocksDB on the local state directory (Kafka Streams' default). With the local state kept
   * across a restart, only the changelog tail after the local checkpoint is restored.
   */
  ROCKSDB,
  /** In-memory stores: every start restores them entirely from their changelog topics. */
  IN_MEMORY
}
