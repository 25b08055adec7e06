package io.cairn.connectors.postgres;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The SQL a {@link PostgresSource} issues itself about its table and the server's statistics, over
 * one plain JDBC connection. The statements about the replication slot and the publication are in
 * {@link ReplicationSlot}, on the same connection. Every statement counts as a request in the load
 * meter.
 */
final class PostgresCatalog {
  /** What the table looks like. */
  record TableInfo(Schema schema, List<String> primaryKey, char replicaIdentity, long estimatedRows, long totalBytes) {}

  /** One statistics probe. */
  record Probe(long headLsn, long flushHeadLsn, ReplicationSlot.SlotInfo slot, long sentLsn, Integer senderPid, long tableReads) {}

  private final Connection conn;
  private final PostgresLoadMeter meter;
  private final PostgresSourceConfig config;

  PostgresCatalog(Connection conn, PostgresSourceConfig config, PostgresLoadMeter meter) {
    this.conn = conn;
    this.config = config;
    this.meter = meter;
  }

  Connection connection() {
    return conn;
  }

  TableInfo table() throws SQLException {
    List<Column> cols = new ArrayList<>();
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT a.attname, t.typname, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            + "WHERE a.attrelid = (quote_ident(?) || '.' || quote_ident(?))::regclass AND a.attnum > 0 AND NOT a.attisdropped "
            + "ORDER BY a.attnum")) {
      ps.setString(1, config.schemaName());
      ps.setString(2, config.tableName());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          cols.add(column(rs.getString(1), rs.getString(2), rs.getInt(3)));
        }
      }
    } catch (SQLException e) {
      if ("42P01".equals(e.getSQLState()) || "3F000".equals(e.getSQLState())) {
        throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': table " + config.qualifiedTable()
            + " does not exist in database " + config.database() + " at " + config.host() + ":" + config.port());
      }
      throw e;
    }
    List<String> pk = new ArrayList<>();
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true "
            + "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            + "WHERE i.indrelid = (quote_ident(?) || '.' || quote_ident(?))::regclass AND i.indisprimary ORDER BY k.ord")) {
      ps.setString(1, config.schemaName());
      ps.setString(2, config.tableName());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pk.add(rs.getString(1).toLowerCase(Locale.ROOT));
        }
      }
    }
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT c.relreplident, c.reltuples::bigint, pg_total_relation_size(c.oid) FROM pg_class c "
            + "WHERE c.oid = (quote_ident(?) || '.' || quote_ident(?))::regclass")) {
      ps.setString(1, config.schemaName());
      ps.setString(2, config.tableName());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new TableInfo(new Schema(cols), pk, rs.getString(1).charAt(0), Math.max(0, rs.getLong(2)), rs.getLong(3));
      }
    }
  }

  /**
   * The column of a table's attribute: a {@code numeric(p, s)} keeps its precision and scale
   * ({@code atttypmod} is {@code (p << 16 | s) + 4}) when cairn's NUMERIC holds them (scale 0 to 18,
   * precision up to 38); a wider one is a NUMERIC without them, its values kept in canonical form.
   */
  static Column column(String name, String pgType, int typmod) {
    Type type = typeOf(pgType);
    if (type == Type.NUMERIC && typmod >= 4) {
      int precision = ((typmod - 4) >> 16) & 0xffff;
      int scale = (((typmod - 4) & 0x7ff) ^ 1024) - 1024; // 11 bits, signed (PostgreSQL 15 allows a negative scale)
      if (scale >= 0 && scale <= io.cairn.engine.row.Numeric.MAX_SCALE && precision >= scale && precision <= 38 && precision > 0) {
        return Column.numeric(name, precision, scale);
      }
    }
    return Column.of(name, type);
  }

  static Type typeOf(String pgType) {
    return switch (pgType) {
      case "int2", "int4", "int8", "oid" -> Type.BIGINT;
      case "float4", "float8" -> Type.DOUBLE;
      case "numeric" -> Type.NUMERIC;
      case "bool" -> Type.BOOLEAN;
      case "timestamp", "timestamptz" -> Type.TIMESTAMP;
      case "date" -> Type.DATE;
      case "interval" -> Type.INTERVAL;
      default -> Type.TEXT;
    };
  }

  void setReplicaIdentityFull() throws SQLException {
    execute("ALTER TABLE " + config.quotedTable() + " REPLICA IDENTITY FULL");
  }

  Probe probe() throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT pg_current_wal_lsn()::text, pg_current_wal_flush_lsn()::text, s.database, s.plugin, s.restart_lsn::text, "
            + "s.confirmed_flush_lsn::text, s.wal_status, s.active_pid, r.sent_lsn::text, "
            + "(SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables "
            + " WHERE relid = (quote_ident(?) || '.' || quote_ident(?))::regclass) "
            + "FROM (SELECT 1) one LEFT JOIN pg_replication_slots s ON s.slot_name = ? "
            + "LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid")) {
      ps.setString(1, config.schemaName());
      ps.setString(2, config.tableName());
      ps.setString(3, config.slot());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        ReplicationSlot.SlotInfo slot = null;
        if (rs.getString(3) != null) {
          int pid = rs.getInt(8);
          Integer active = rs.wasNull() ? null : pid;
          slot = new ReplicationSlot.SlotInfo(rs.getString(3), rs.getString(4), DebeziumOffsets.parseLsn(rs.getString(5)),
              DebeziumOffsets.parseLsn(rs.getString(6)), rs.getString(7), active);
        }
        return new Probe(DebeziumOffsets.parseLsn(rs.getString(1)), DebeziumOffsets.parseLsn(rs.getString(2)), slot,
            DebeziumOffsets.parseLsn(rs.getString(9)), slot == null ? null : slot.activePid(), rs.getLong(10));
      }
    }
  }

  /**
   * Writes a transactional logical decoding message into the WAL of the slot's database (its own
   * committed transaction) and returns its LSN. Any role may call {@code pg_logical_emit_message};
   * it needs no grant. Transactional, because a resuming Debezium looks for its resume position
   * among transactions: with nothing else committed after the snapshot's LSN, a non-transactional
   * message left it waiting in {@code searchWalPosition} until the table next changed.
   */
  long emitMessage(String prefix, String content) throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement("SELECT pg_logical_emit_message(true, ?, ?)::text")) {
      ps.setString(1, prefix);
      ps.setString(2, content);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return DebeziumOffsets.parseLsn(rs.getString(1));
      }
    }
  }

  private void execute(String sql) throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (Statement st = conn.createStatement()) {
      st.execute(sql);
    }
  }
}
