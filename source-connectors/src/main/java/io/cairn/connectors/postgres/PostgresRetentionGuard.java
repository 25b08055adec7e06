package io.cairn.connectors.postgres;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * Warns when a restart could find its WAL gone. A cairn source confirms an LSN to its replication
 * slot only once a snapshot holding it has committed, so the slot retains about one snapshot
 * interval of WAL (plus the time to take and upload a snapshot). Postgres invalidates a slot whose
 * retained WAL exceeds {@code max_slot_wal_keep_size} ({@code -1}: unlimited — then the risk is a full
 * disk instead).
 */
public final class PostgresRetentionGuard {
  /** Margin applied to the expected retention (snapshots are late, WAL rates are bursty). */
  public static final double SAFETY_FACTOR = 2.0;

  private PostgresRetentionGuard() {}

  /**
   * A warning, or empty when {@code maxSlotWalKeepSizeBytes} comfortably holds {@code
   * walBytesPerSecond × snapshotInterval × }{@value #SAFETY_FACTOR}.
   *
   * @param maxSlotWalKeepSizeBytes the server's limit in bytes, negative for unlimited
   */
  public static Optional<String> check(long maxSlotWalKeepSizeBytes, Duration snapshotInterval, double walBytesPerSecond) {
    if (snapshotInterval.isNegative() || snapshotInterval.isZero()) {
      throw new IllegalArgumentException("Cannot check WAL retention: snapshot interval " + snapshotInterval + " is not positive");
    }
    if (walBytesPerSecond < 0 || Double.isNaN(walBytesPerSecond)) {
      throw new IllegalArgumentException("Cannot check WAL retention: WAL rate " + walBytesPerSecond + " B/s is negative");
    }
    double expected = walBytesPerSecond * snapshotInterval.toMillis() / 1000.0;
    if (maxSlotWalKeepSizeBytes < 0) {
      return Optional.empty(); // unlimited: the WAL stays (the disk is what fills up)
    }
    if (expected * SAFETY_FACTOR > maxSlotWalKeepSizeBytes) {
      return Optional.of(String.format(Locale.ROOT,
          "WAL retention risk: at %.1f MiB/s of WAL, one snapshot interval (%s) retains about %.1f MiB in the replication slot, "
              + "but max_slot_wal_keep_size is %.1f MiB (want at least %.0fx the expected retention). Postgres will invalidate "
              + "the slot and a restart from the last snapshot will find its WAL gone. Raise max_slot_wal_keep_size or snapshot more often.",
          walBytesPerSecond / (1 << 20), snapshotInterval, expected / (1 << 20), maxSlotWalKeepSizeBytes / (double) (1 << 20),
          SAFETY_FACTOR));
    }
    return Optional.empty();
  }

  /** {@link #check(long, Duration, double)} with the limit read from the server over {@code connection}. */
  public static Optional<String> check(Connection connection, Duration snapshotInterval, double walBytesPerSecond) {
    return check(maxSlotWalKeepSizeBytes(connection), snapshotInterval, walBytesPerSecond);
  }

  /**
   * Checks the source {@code definition} reads: connects with its own short-lived connection
   * (never the source's), samples the cluster's WAL rate over {@code sample} from {@code
   * pg_current_wal_lsn()}, and compares one snapshot interval of it with {@code
   * max_slot_wal_keep_size}. Needs no privilege beyond the source's own.
   */
  public static Optional<String> check(io.cairn.engine.source.SourceDefinition definition, io.cairn.engine.source.Secrets secrets,
      Duration snapshotInterval, Duration sample) {
    PostgresSourceConfig config = PostgresSourceConfig.from(new PostgresConnector().validate(definition));
    java.util.Properties p = new java.util.Properties();
    p.setProperty("user", config.user());
    p.setProperty("password", secrets.resolve(config.passwordRef()));
    p.setProperty("ApplicationName", "cairn-retention-guard");
    p.setProperty("connectTimeout", "10");
    p.setProperty("socketTimeout", "30");
    try (Connection c = java.sql.DriverManager.getConnection(config.jdbcUrl(), p)) {
      long a = currentLsn(c);
      long t0 = System.nanoTime();
      try {
        Thread.sleep(sample.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      long b = currentLsn(c);
      double rate = Math.max(0, b - a) / ((System.nanoTime() - t0) / 1e9);
      return check(c, snapshotInterval, rate).map(w -> "source '" + config.sourceName() + "': " + w);
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot check WAL retention for source '" + config.sourceName() + "': "
          + e.getMessage() + " [SQLState " + e.getSQLState() + "]");
    }
  }

  /**
   * Reads the server's {@code max_slot_wal_keep_size} and {@code wal_keep_size}, the source's slot
   * ({@code wal_status}, {@code safe_wal_size}) and the WAL rate sampled from {@code
   * pg_current_wal_lsn()} over a third of {@code timeout} (at most 1 s), with a connection of its
   * own whose connect, login and every statement are bounded by {@code timeout}. The slot is
   * confirmed after each snapshot commits, so only the newest snapshot can be resumed from
   * ({@link io.cairn.engine.source.RetentionLimits.Reach#NEWEST_SNAPSHOT}).
   */
  public static io.cairn.engine.source.RetentionLimits probe(io.cairn.engine.source.SourceDefinition definition,
      io.cairn.engine.source.Secrets secrets, Duration timeout) {
    PostgresSourceConfig config = PostgresSourceConfig.from(new PostgresConnector().validate(definition));
    String seconds = Long.toString(Math.max(1, (timeout.toMillis() + 999) / 1000));
    java.util.Properties p = new java.util.Properties();
    p.setProperty("user", config.user());
    p.setProperty("password", secrets.resolve(config.passwordRef()));
    p.setProperty("ApplicationName", "cairn-advise");
    p.setProperty("connectTimeout", seconds);
    p.setProperty("loginTimeout", seconds);
    p.setProperty("socketTimeout", seconds);
    try (Connection c = java.sql.DriverManager.getConnection(config.jdbcUrl(), p)) {
      java.util.Map<String, String> settings = new java.util.LinkedHashMap<>();
      java.util.List<String> notes = new java.util.ArrayList<>();
      long maxKeep = maxSlotWalKeepSizeBytes(c);
      settings.put("max_slot_wal_keep_size", maxKeep < 0 ? "-1" : (maxKeep >> 20) + "MB");
      settings.put("wal_keep_size", setting(c, "wal_keep_size"));
      try (java.sql.PreparedStatement st = c.prepareStatement(
          "SELECT wal_status, safe_wal_size FROM pg_replication_slots WHERE slot_name = ?")) {
        st.setString(1, config.slot());
        try (ResultSet rs = st.executeQuery()) {
          if (rs.next()) {
            String status = rs.getString(1);
            settings.put("slot " + config.slot() + " wal_status", status);
            long safe = rs.getLong(2);
            if (!rs.wasNull()) {
              settings.put("slot " + config.slot() + " safe_wal_size", (safe >> 20) + "MB");
            }
            if ("lost".equals(status) || "unreserved".equals(status)) {
              notes.add("replication slot '" + config.slot() + "' is " + status + ": the WAL a recovery needs is "
                  + ("lost".equals(status) ? "gone" : "about to be removed"));
            }
          } else {
            notes.add("replication slot '" + config.slot() + "' does not exist on " + config.where());
          }
        }
      }
      long sampleMillis = Math.min(1000, Math.max(50, timeout.toMillis() / 3));
      long a = currentLsn(c);
      long t0 = System.nanoTime();
      try {
        Thread.sleep(sampleMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot read WAL retention for source '" + config.sourceName() + "': interrupted");
      }
      long b = currentLsn(c);
      double rate = Math.max(0, b - a) / ((System.nanoTime() - t0) / 1e9);
      settings.put("WAL rate (sampled " + sampleMillis + " ms)", String.format(Locale.ROOT, "%.0f B/s", rate));
      return new io.cairn.engine.source.RetentionLimits(io.cairn.engine.source.RetentionLimits.Reach.NEWEST_SNAPSHOT, null,
          maxKeep, 1, rate, settings, notes);
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot read WAL retention for source '" + config.sourceName() + "' on "
          + config.where() + ": " + e.getMessage() + " [SQLState " + e.getSQLState() + "]");
    }
  }

  private static String setting(Connection c, String name) throws SQLException {
    try (java.sql.PreparedStatement st = c.prepareStatement("SELECT current_setting(?)")) {
      st.setString(1, name);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? rs.getString(1) : "(unknown)";
      }
    }
  }

  private static long currentLsn(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
      rs.next();
      return DebeziumOffsets.parseLsn(rs.getString(1));
    }
  }

  /** The server's {@code max_slot_wal_keep_size} in bytes (-1 for unlimited). */
  public static long maxSlotWalKeepSizeBytes(Connection connection) {
    try (Statement st = connection.createStatement();
        ResultSet rs = st.executeQuery("SELECT setting::bigint, unit FROM pg_settings WHERE name = 'max_slot_wal_keep_size'")) {
      if (!rs.next()) {
        return -1;
      }
      long v = rs.getLong(1);
      if (v < 0) {
        return -1;
      }
      String unit = rs.getString(2);
      return "MB".equals(unit) ? v << 20 : "kB".equals(unit) ? v << 10 : v;
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot read max_slot_wal_keep_size: " + e.getMessage(), e);
    }
  }
}
