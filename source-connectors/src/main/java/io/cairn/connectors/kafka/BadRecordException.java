package io.cairn.connectors.kafka;

/**
 * A record that cannot be turned into rows (invalid JSON, a value of the wrong type, no usable
 * key). The message says what was wrong without the record's content; the source adds where
 * (topic/partition/offset) and applies its bad-record policy.
 */
final class BadRecordException extends RuntimeException {
  BadRecordException(String reason) {
    super(reason, null, false, false);
  }

  BadRecordException(String reason, Throwable cause) {
    super(reason, cause, false, false);
  }
}
