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
