package io.cairn.engine.source;

import java.util.Map;

/**
 * The load a source has put on the system it reads, as cumulative counters since the source was
 * opened. Common names: {@code records}, {@code bytes}, {@code requests}; connectors add their own
 * (Postgres: {@code rows_scanned}, {@code wal_bytes_streamed}, {@code wal_bytes_retained}, ...).
 * Implementations must be safe to read from any thread.
 */
public interface LoadMeter {
  String RECORDS = "records";
  String BYTES = "bytes";
  String REQUESTS = "requests";

  /** A consistent copy of the current counters. */
  Map<String, Long> read();
}
