package io.cairn.connectors.kafka;

/**
 * An unrecoverable problem of a Kafka source. The message names the source, the topic and, where
 * it applies, the partition and offset; it never contains a secret or a record's content.
 */
public class KafkaSourceException extends RuntimeException {
  public KafkaSourceException(String message) {
    super(message);
  }

  public KafkaSourceException(String message, Throwable cause) {
    super(message, cause);
  }
}
