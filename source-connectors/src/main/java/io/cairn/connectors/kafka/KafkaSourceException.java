package io.cairn.connectors.kafka;

import io.cairn.engine.source.SourceException;

/**
 * A problem of a Kafka source. The message names the source, the topic and, where it applies, the
 * partition and offset; it never contains a secret or a record's content. Retriable (a broker
 * that went away, a timeout) unless made with {@code retriable = false} (a bad record under
 * {@code bad-records = 'fail'}, offsets no longer in the topic).
 */
public class KafkaSourceException extends SourceException {
  public KafkaSourceException(String message) {
    super(message, true);
  }

  public KafkaSourceException(String message, Throwable cause) {
    super(message, cause, true);
  }

  public KafkaSourceException(String message, boolean retriable) {
    super(message, retriable);
  }

  public KafkaSourceException(String message, Throwable cause, boolean retriable) {
    super(message, cause, retriable);
  }

  public KafkaSourceException(String message, Throwable cause, boolean retriable, boolean atRecord) {
    super(message, cause, retriable, atRecord);
  }
}
