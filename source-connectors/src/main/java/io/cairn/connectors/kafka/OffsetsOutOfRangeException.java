package io.cairn.connectors.kafka;

/**
 * The records a source must replay are no longer in the topic: the recorded offset of a partition
 * lies before the partition's log start offset (retention or deleteRecords removed
 * {@code [recordedOffset, logStartOffset)}), or beyond its end (the topic was re-created).
 */
public final class OffsetsOutOfRangeException extends KafkaSourceException {
  private final String topic;
  private final int partition;
  private final long recordedOffset;
  private final long logStartOffset;
  private final long logEndOffset;

  public OffsetsOutOfRangeException(
      String message, String topic, int partition, long recordedOffset, long logStartOffset, long logEndOffset) {
    super(message, false);
    this.topic = topic;
    this.partition = partition;
    this.recordedOffset = recordedOffset;
    this.logStartOffset = logStartOffset;
    this.logEndOffset = logEndOffset;
  }

  public String topic() {
    return topic;
  }

  public int partition() {
    return partition;
  }

  /** The offset the source had to resume from. */
  public long recordedOffset() {
    return recordedOffset;
  }

  /** The partition's first available offset when the problem was found. */
  public long logStartOffset() {
    return logStartOffset;
  }

  /** The partition's end offset when the problem was found (-1 when unknown). */
  public long logEndOffset() {
    return logEndOffset;
  }
}
