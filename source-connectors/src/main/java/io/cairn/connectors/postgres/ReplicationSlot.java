package io.cairn.connectors.postgres;

import io.cairn.engine.source.SourceOffsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logical replication slot and the publication of one {@link PostgresSource}: every statement
 * about them, the decisions taken on them at start and at close, and the bookkeeping of the LSN a
 * committed snapshot allows the slot to confirm.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li><b>Owns.</b> The SQL on {@code pg_replication_slots}, {@code pg_publication} and {@code
 *       pg_publication_tables} (read the slot, drop it, check, create or extend the publication),
 *       the waits for a previous walsender to let go of the slot, the checks that decide whether
 *       streaming can resume at given offsets, and the confirmation target. It does not own the
 *       connection: its statements run on the {@link PostgresCatalog}'s connection, which the
 *       source opens and closes. Debezium, not this class, creates the slot (at the initial load)
 *       and sends the confirmations ({@code lsn.flush.mode=connector}, {@code
 *       slot.drop.on.stop=false}).
 *   <li><b>Threads.</b> The statements ({@link #awaitInactive}, {@link #prepareForInitialLoad},
 *       {@link #resumeProblem}) run on the thread that seeks or closes the source; the source seeks
 *       before its monitor thread starts and closes after stopping it, and holds the catalog's
 *       monitor at close, so the shared connection has one user at a time. The confirmation state
 *       is volatile: {@link #confirmUpTo} is called by the thread that owns the source (when a
 *       snapshot has committed), {@link #observe} by the monitor thread, {@link #confirmationDue}
 *       by Debezium's thread (its offset commit policy).
 *   <li><b>The slot is never dropped under a walsender.</b> A slot still held by a process after
 *       the wait fails the start ("in use by process …"); it is dropped only on a fresh start (a
 *       first start, a restart inside an unfinished initial load, {@code slot-lost=reload}).
 *   <li><b>A resume only checks.</b> {@link #resumeProblem} changes nothing on the server: a
 *       missing, invalidated, foreign or over-confirmed slot, or a publication that no longer
 *       publishes the table, is reported for the source's {@code slot-lost} policy to decide.
 *   <li><b>Confirmation.</b> The target only rises, and only to the LSN of a committed snapshot.
 *       A confirmation (an offset commit of Debezium's) is due only while the target is above the
 *       slot's {@code confirmed_flush_lsn} last observed by the monitor, and at most once per
 *       200 ms.
 *   <li><b>Log lines</b> are written under {@link PostgresSource}'s logger: they describe the
 *       source, and operators and log configurations know them by that name.
 * </ul>
 */
final class ReplicationSlot {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresSource.class);
  /** The least time between two confirmations requested of Debezium. */
  private static final long CONFIRM_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** The replication slot as {@code pg_replication_slots} shows it. */
  record SlotInfo(String database, String plugin, long restartLsn, long confirmedFlushLsn, String walStatus, Integer activePid) {
    boolean lost() {
      return "lost".equals(walStatus);
    }
  }

  private final Connection conn;
  private final PostgresSourceConfig config;
  private final PostgresLoadMeter meter;

  private volatile long confirmTarget = -1;
  private volatile long observedConfirmed = -1;
  private volatile long lastCommitRequestNanos;

  /** Statements run on {@code conn} (the catalog's); each counts as a request in {@code meter}. */
  ReplicationSlot(Connection conn, PostgresSourceConfig config, PostgresLoadMeter meter) {
    this.conn = conn;
    this.config = config;
    this.meter = meter;
  }

  // ---- start and close

  /**
   * The slot, after waiting up to {@code wait} for a previous session's walsender to let go of it (a
   * source closed just before may still hold it for a moment); null when there is no slot. Still
   * held after {@code wait} (or on interruption, which stays set): returned with its {@code
   * activePid}.
   */
  SlotInfo awaitInactive(Duration wait) throws SQLException {
    long deadline = System.nanoTime() + wait.toNanos();
    SlotInfo slot = slot();
    while (slot != null && slot.activePid() != null && System.nanoTime() < deadline) {
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
      slot = slot();
    }
    return slot;
  }

  /**
   * Readies the server for an initial load: drops a leftover slot of the same name (Debezium then
   * creates a fresh one) and makes the publication publish the table.
   *
   * @param why why the load starts over (in the log line of a drop)
   * @throws IllegalStateException when a process still holds the slot after 10 s
   */
  void prepareForInitialLoad(String why) throws SQLException {
    SlotInfo slot = awaitInactive(Duration.ofSeconds(10));
    if (slot != null) {
      if (slot.activePid() != null) {
        throw new IllegalStateException("Cannot start source '" + config.sourceName() + "': replication slot '"
            + config.slot() + "' is in use by process " + slot.activePid() + " at " + config.where());
      }
      LOG.warn("Source '{}' ({}): dropping existing replication slot '{}' to start a fresh initial load",
          config.sourceName(), why, config.slot());
      dropSlot();
    }
    ensurePublication();
  }

  /**
   * Why streaming cannot resume at {@code offsets}, or null when it can: the slot exists, belongs
   * to the source's database, is not invalidated and was not confirmed past the resume LSN, and the
   * publication still publishes the table. Changes nothing on the server.
   *
   * @throws IllegalStateException when a process still holds the slot after 10 s
   */
  String resumeProblem(SourceOffsets offsets) throws SQLException {
    long commitLsn = DebeziumOffsets.confirmLsn(offsets);
    long resumeAt = commitLsn >= 0 ? commitLsn : offsets.getLong(DebeziumOffsets.LSN, -1);
    String at = " (resume position LSN " + DebeziumOffsets.formatLsn(resumeAt) + ")";
    SlotInfo slot = awaitInactive(Duration.ofSeconds(10));
    if (slot == null) {
      return "replication slot '" + config.slot() + "' does not exist at " + config.where() + at;
    }
    if (!config.database().equals(slot.database())) {
      return "replication slot '" + config.slot() + "' belongs to database '" + slot.database() + "', not '" + config.database() + "'";
    }
    if (slot.lost()) {
      return "replication slot '" + config.slot() + "' at " + config.where() + " was invalidated (wal_status = lost: the WAL it "
          + "needed was removed, see max_slot_wal_keep_size)" + at;
    }
    if (slot.activePid() != null) {
      throw new IllegalStateException("Cannot resume source '" + config.sourceName() + "': replication slot '"
          + config.slot() + "' is in use by process " + slot.activePid() + " at " + config.where());
    }
    if (resumeAt >= 0 && slot.confirmedFlushLsn() > resumeAt) {
      return "replication slot '" + config.slot() + "' at " + config.where() + " was confirmed up to LSN "
          + DebeziumOffsets.formatLsn(slot.confirmedFlushLsn()) + ", past the resume position LSN "
          + DebeziumOffsets.formatLsn(resumeAt) + ", so the WAL in between is gone";
    }
    if (!publicationCoversTable()) {
      return "publication '" + config.publication() + "' at " + config.where() + " does not exist or no longer publishes "
          + config.qualifiedTable() + at;
    }
    return null;
  }

  // ---- LSN confirmation

  /** The LSN the last committed snapshot allows the slot to confirm (-1: none yet). */
  long confirmTarget() {
    return confirmTarget;
  }

  /**
   * Raises the confirmation target to {@code lsn}, the LSN of a committed snapshot (the caller has
   * checked that it is above {@link #confirmTarget()} and served the snapshot's offsets to
   * Debezium first).
   */
  void confirmUpTo(long lsn) {
    confirmTarget = lsn;
    meter.add(PostgresLoadMeter.LSN_CONFIRMATIONS, 1);
    LOG.debug("Source '{}': snapshot committed, confirming LSN {} to slot '{}'", config.sourceName(),
        DebeziumOffsets.formatLsn(lsn), config.slot());
  }

  /**
   * Records what a statistics probe read of the slot: its retained WAL (from {@code restart_lsn}
   * to {@code headLsn}) and its {@code confirmed_flush_lsn}, in the load meter and for {@link
   * #confirmationDue}.
   */
  void observe(SlotInfo slot, long headLsn) {
    meter.set(PostgresLoadMeter.WAL_BYTES_RETAINED, Math.max(0, headLsn - slot.restartLsn()));
    meter.set(PostgresLoadMeter.CONFIRMED_FLUSH_LSN, slot.confirmedFlushLsn());
    observedConfirmed = slot.confirmedFlushLsn();
  }

  /**
   * Whether Debezium should commit offsets now, which makes it confirm the LSN of the offsets it
   * reads back: only while the target is above the observed {@code confirmed_flush_lsn}, and not
   * within 200 ms of the last time this answered true.
   */
  boolean confirmationDue() {
    if (confirmTarget <= observedConfirmed) {
      return false;
    }
    long now = System.nanoTime();
    if (now - lastCommitRequestNanos < CONFIRM_INTERVAL_NANOS) {
      return false;
    }
    lastCommitRequestNanos = now;
    return true;
  }

  // ---- statements

  /** The slot as the server shows it, or null when there is none. */
  private SlotInfo slot() throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT database, plugin, restart_lsn::text, confirmed_flush_lsn::text, wal_status, active_pid "
            + "FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, config.slot());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        int pid = rs.getInt(6);
        Integer active = rs.wasNull() ? null : pid;
        return new SlotInfo(rs.getString(1), rs.getString(2), DebeziumOffsets.parseLsn(rs.getString(3)),
            DebeziumOffsets.parseLsn(rs.getString(4)), rs.getString(5), active);
      }
    }
  }

  private void dropSlot() throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ?")) {
      ps.setString(1, config.slot());
      ps.execute();
    }
  }

  /** Whether the publication exists and publishes the table. */
  private boolean publicationCoversTable() throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement(
        "SELECT count(*) FROM pg_publication_tables WHERE pubname = ? AND schemaname = ? AND tablename = ?")) {
      ps.setString(1, config.publication());
      ps.setString(2, config.schemaName());
      ps.setString(3, config.tableName());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  private boolean publicationExists() throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (PreparedStatement ps = conn.prepareStatement("SELECT count(*) FROM pg_publication WHERE pubname = ?")) {
      ps.setString(1, config.publication());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) > 0;
      }
    }
  }

  /** Creates the publication for the table, or adds the table to an existing one. */
  private void ensurePublication() throws SQLException {
    if (publicationCoversTable()) {
      return;
    }
    if (publicationExists()) {
      execute("ALTER PUBLICATION \"" + config.publication() + "\" ADD TABLE " + config.quotedTable());
    } else {
      execute("CREATE PUBLICATION \"" + config.publication() + "\" FOR TABLE " + config.quotedTable());
    }
  }

  private void execute(String sql) throws SQLException {
    meter.add(PostgresLoadMeter.REQUESTS, 1);
    try (Statement st = conn.createStatement()) {
      st.execute(sql);
    }
  }
}
