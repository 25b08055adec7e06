package io.cairn.connectors.postgres;

import io.cairn.engine.source.SourceOffsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Converts between Debezium's Postgres offset map ({@code lsn}, {@code lsn_proc}, {@code lsn_commit},
 * {@code txId}, {@code ts_usec}, {@code messageType}, initial-load flags) and {@link SourceOffsets}
 * (strings). Numbers are written in decimal; LSNs stay the 64-bit integers Debezium uses ({@link
 * #formatLsn} renders one as Postgres writes it, {@code 0/16B3748}).
 */
final class DebeziumOffsets {
  static final String LSN = "lsn";
  static final String LSN_PROC = "lsn_proc";
  static final String LSN_COMMIT = "lsn_commit";
  static final String SNAPSHOT = "snapshot";
  static final String LAST_SNAPSHOT_RECORD = "last_snapshot_record";
  static final String SNAPSHOT_COMPLETED = "snapshot_completed";

  private static final Set<String> LONG_KEYS = Set.of(LSN, LSN_PROC, LSN_COMMIT, "txId", "ts_usec", "xmin", "origin_lsn");
  private static final Set<String> BOOLEAN_KEYS = Set.of(LAST_SNAPSHOT_RECORD, SNAPSHOT_COMPLETED);
  private static final Set<String> STRING_KEYS = Set.of(SNAPSHOT, "messageType", "origin");

  private DebeziumOffsets() {}

  static SourceOffsets toSource(Map<String, ?> debezium) {
    Map<String, String> out = new HashMap<>();
    debezium.forEach((k, v) -> {
      if (v != null) {
        out.put(k, String.valueOf(v));
      }
    });
    return new SourceOffsets(out);
  }

  static Map<String, Object> toDebezium(SourceOffsets offsets) {
    Map<String, Object> out = new LinkedHashMap<>();
    offsets.values().forEach((k, v) -> out.put(k, parse(k, v)));
    return out;
  }

  private static Object parse(String key, String v) {
    try {
      if (LONG_KEYS.contains(key)) {
        return Long.parseLong(v);
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Cannot read Postgres source offsets: '" + key + "' = '" + v + "' is not a number");
    }
    if (BOOLEAN_KEYS.contains(key)) {
      return Boolean.parseBoolean(v);
    }
    if (STRING_KEYS.contains(key)) {
      return v;
    }
    if (v.matches("-?[0-9]{1,18}")) {
      return Long.parseLong(v);
    }
    if (v.equals("true") || v.equals("false")) {
      return Boolean.parseBoolean(v);
    }
    return v;
  }

  /** Whether these offsets were taken during an initial load that had not delivered its last row. */
  static boolean initialLoadIncomplete(SourceOffsets offsets) {
    return offsets.get(SNAPSHOT) != null
        && !"true".equals(offsets.get(LAST_SNAPSHOT_RECORD))
        && !"true".equals(offsets.get(SNAPSHOT_COMPLETED));
  }

  /** Offsets for a resume in streaming mode: the initial-load flags of a completed load removed. */
  static SourceOffsets forStreaming(SourceOffsets offsets) {
    Map<String, String> m = new HashMap<>(offsets.values());
    m.remove(SNAPSHOT);
    m.remove(LAST_SNAPSHOT_RECORD);
    m.remove(SNAPSHOT_COMPLETED);
    return new SourceOffsets(m);
  }

  /**
   * The LSN that confirming {@code offsets} to the slot flushes: {@code lsn_commit}, else {@code
   * lsn_proc} — the same choice Debezium's Postgres task makes — or -1 when there is none (offsets
   * of an initial load).
   */
  static long confirmLsn(SourceOffsets offsets) {
    long commit = offsets.getLong(LSN_COMMIT, -1);
    return commit >= 0 ? commit : offsets.getLong(LSN_PROC, -1);
  }

  /** The position streaming resumes from: {@code lsn_proc}, else {@code lsn}; -1 when absent. */
  static long resumeLsn(SourceOffsets offsets) {
    long proc = offsets.getLong(LSN_PROC, -1);
    return proc >= 0 ? proc : offsets.getLong(LSN, -1);
  }

  static String formatLsn(long lsn) {
    if (lsn < 0) {
      return "none";
    }
    return Long.toHexString(lsn >>> 32).toUpperCase(java.util.Locale.ROOT) + "/"
        + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase(java.util.Locale.ROOT);
  }

  static long parseLsn(String text) {
    if (text == null) {
      return -1;
    }
    int slash = text.indexOf('/');
    if (slash < 0) {
      throw new IllegalArgumentException("Cannot parse LSN '" + text + "': expected 'X/Y'");
    }
    return (Long.parseLong(text.substring(0, slash), 16) << 32) | Long.parseLong(text.substring(slash + 1), 16);
  }
}
