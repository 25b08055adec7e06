package io.cairn.connectors.postgres;

import io.cairn.engine.source.LoadMeter;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load a {@link PostgresSource} puts on its database, cumulative since the source was opened.
 *
 * <ul>
 *   <li>{@code records}, {@code bytes}: rows delivered to the engine and their approximate size
 *       (8 bytes per number/timestamp, 1 per boolean, UTF-8 length of text).
 *   <li>{@code requests}: SQL statements cairn itself issued (checks at open/seek, statistics
 *       probes) plus one per replication session Debezium opened. Debezium's own catalog queries
 *       are not counted.
 *   <li>{@code rows_scanned}: rows cairn's own initial load (and reload) queries read from the
 *       table — counted as they are delivered, so other clients' scans of the table never count
 *       as cairn's load (the table-wide {@code pg_stat_user_tables} counters would).
 *   <li>{@code wal_bytes_streamed}: WAL the server decoded and sent through this source's slot
 *       (growth of {@code pg_stat_replication.sent_lsn}).
 *   <li>{@code wal_bytes_retained}: a gauge, {@code pg_current_wal_lsn() - restart_lsn} of the
 *       slot at the last probe: the WAL kept on the server for this source.
 *   <li>{@code confirmed_flush_lsn}: the slot's confirmed position at the last probe (gauge).
 *   <li>{@code initial_loads}: initial loads started (1 on first start; +1 per reload).
 *   <li>{@code lsn_confirmations}: confirmations requested by committed snapshots.
 * </ul>
 */
final class PostgresLoadMeter implements LoadMeter {
  static final String ROWS_SCANNED = "rows_scanned";
  static final String WAL_BYTES_STREAMED = "wal_bytes_streamed";
  static final String WAL_BYTES_RETAINED = "wal_bytes_retained";
  static final String CONFIRMED_FLUSH_LSN = "confirmed_flush_lsn";
  static final String INITIAL_LOADS = "initial_loads";
  static final String LSN_CONFIRMATIONS = "lsn_confirmations";

  private final Map<String, AtomicLong> counters = new ConcurrentHashMap<>();

  PostgresLoadMeter() {
    for (String k : new String[] {RECORDS, BYTES, REQUESTS, ROWS_SCANNED, WAL_BYTES_STREAMED, WAL_BYTES_RETAINED,
        INITIAL_LOADS, LSN_CONFIRMATIONS}) {
      counters.put(k, new AtomicLong());
    }
  }

  void add(String name, long delta) {
    counters.computeIfAbsent(name, k -> new AtomicLong()).addAndGet(delta);
  }

  void set(String name, long value) {
    counters.computeIfAbsent(name, k -> new AtomicLong()).set(value);
  }

  long get(String name) {
    AtomicLong a = counters.get(name);
    return a == null ? 0 : a.get();
  }

  @Override
  public Map<String, Long> read() {
    Map<String, Long> out = new TreeMap<>();
    counters.forEach((k, v) -> out.put(k, v.get()));
    return out;
  }
}
