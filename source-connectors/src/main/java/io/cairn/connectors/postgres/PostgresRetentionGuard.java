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
