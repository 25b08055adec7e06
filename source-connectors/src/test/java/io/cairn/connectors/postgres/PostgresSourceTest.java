package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.connectors.postgres.PgFixture.Oracle;
import io.cairn.engine.row.Row;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The Postgres source against a real PostgreSQL 15, checked against a naive oracle and SELECT *. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 7 s
class PostgresSourceTest {
  private static final String TABLE = "public.items";

  private static void createItems(PgFixture pg, int rows) {
    pg.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text, qty int, price numeric(10,2), active boolean, "
            + "updated timestamptz, doc text, due date DEFAULT date '2026-06-01')",
        "ALTER TABLE items REPLICA IDENTITY FULL",
        "INSERT INTO items SELECT g, 'item ' || g, g % 7, g * 1.25, g % 2 = 0, "
            + "timestamptz '2026-01-01 00:00:00.123456+00' + g * interval '1 minute', NULL, date '1969-12-01' + g * 97 FROM generate_series(1, " + rows + ") g");
  }

  /** A text value too large and random to stay inline: stored out of line in TOAST. */
  private static String bigText(Random random) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 12_000; i++) {
      sb.append((char) ('a' + random.nextInt(26)));
    }
    return sb.toString();
  }

  /** Samples the slot's confirmed_flush_lsn in the background and remembers the largest value seen. */
  private static final class SlotWatcher implements AutoCloseable {
    final AtomicLong max = new AtomicLong(-1);
    final AtomicBoolean stop = new AtomicBoolean();
    final Thread thread;

    SlotWatcher(PgFixture pg, String slot) {
      thread = new Thread(() -> {
        try (var c = pg.server.connect(pg.database); var ps = c.prepareStatement(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = ?")) {
          ps.setString(1, slot);
          while (!stop.get()) {
            try (var rs = ps.executeQuery()) {
              if (rs.next() && rs.getString(1) != null) {
                long v = DebeziumOffsets.parseLsn(rs.getString(1));
                max.accumulateAndGet(v, Math::max);
              }
            }
            Thread.sleep(20);
          }
        } catch (Exception e) {
          if (!stop.get()) {
            throw new IllegalStateException(e);
          }
        }
      }, "slot-watcher");
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(5000);
    }
  }

  @Test
  void initialLoadStreamStopChangeResumeEqualsTableWithoutRescanAndConfirmsOnlyCommittedLsns() throws Exception {
    try (PgFixture pg = new PgFixture("resume")) {
      createItems(pg, 300);
      String slot = "cairn_resume_items";
      SourceDefinition def = pg.definition("resume_items", TABLE, Map.of("slot", slot));
      Oracle oracle = new Oracle();
      Random random = new Random(42);
      SourceOffsets committed;
      SourceOffsets stoppedAt;
      long slotCreatedAt;

      try (SlotWatcher watcher = new SlotWatcher(pg, slot)) {
        // 1. first start: initial load, then streaming
        Source source = pg.open(def);
        try {
          assertThat(source.primaryKey()).containsExactly("id");
          assertThat(source.schema().toString())
              .isEqualTo("id BIGINT, name TEXT, qty BIGINT, price NUMERIC, active BOOLEAN, updated TIMESTAMP, doc TEXT, due DATE");
          assertThat(source.schema().column(3).sqlType()).as("numeric(10,2) keeps its precision and scale").isEqualTo("NUMERIC(10, 2)");
          source.seek(SourceOffsets.EMPTY);
          pg.syncWithTable(source, oracle, TABLE);
          assertThat(oracle.rows).hasSize(300);
          slotCreatedAt = pg.confirmedFlushLsn(slot);

          // 2. stream inserts, updates (one leaves a TOASTed value unchanged), deletes
          pg.exec("INSERT INTO items SELECT g, 'new ' || g, 1, 2.5, true, now(), NULL FROM generate_series(301, 350) g",
              "UPDATE items SET doc = '" + bigText(random) + "' WHERE id = 5",
              "UPDATE items SET qty = qty + 100 WHERE id <= 20",
              "DELETE FROM items WHERE id BETWEEN 30 AND 39",
              "UPDATE items SET name = NULL, price = NULL, due = NULL WHERE id = 301");
          pg.syncWithTable(source, oracle, TABLE);
          assertThat(oracle.rows.get(Row.of(5L)).getText(6)).hasSize(12_000);
          assertThat(oracle.deletes).isEqualTo(10);

          // nothing confirmed before a snapshot committed, although Debezium streamed and heartbeated
          PgFixture.sleep(800);
          assertThat(pg.confirmedFlushLsn(slot)).isEqualTo(slotCreatedAt);

          // 3. a snapshot commits at the current position: the slot may now advance to it, and does
          committed = source.position();
          long committedLsn = DebeziumOffsets.confirmLsn(committed);
          assertThat(committedLsn).isGreaterThan(slotCreatedAt);
          source.onSnapshotCommitted(committed);
          PgFixture.pollUntil(source, oracle, Duration.ofSeconds(20), () -> pg.confirmedFlushLsn(slot) == committedLsn,
              "confirmed_flush_lsn to reach the committed LSN");

          // 4. more changes, delivered but never in a committed snapshot
          for (int i = 0; i < 5; i++) {
            pg.exec("UPDATE items SET qty = qty + 1 WHERE id % 5 = " + i, "INSERT INTO items VALUES (" + (400 + i)
                + ", 'x', 0, 0, false, now(), NULL)");
          }
          pg.syncWithTable(source, oracle, TABLE);
          stoppedAt = source.position();
          assertThat(DebeziumOffsets.confirmLsn(stoppedAt)).isGreaterThan(committedLsn);
          PgFixture.sleep(600);
        } finally {
          source.close();
        }
        PgFixture.sleep(300);
        assertThat(watcher.max.get()).as("confirmed_flush_lsn never passes the last committed snapshot's LSN")
            .isEqualTo(DebeziumOffsets.confirmLsn(committed));
      }
      long meterCheck = pg.confirmedFlushLsn(slot);
      assertThat(meterCheck).isEqualTo(DebeziumOffsets.confirmLsn(committed));

      // 5. change rows while the source is down
      pg.exec("INSERT INTO items SELECT g, 'down ' || g, 3, 9.75, false, now(), NULL FROM generate_series(500, 520) g",
          "UPDATE items SET name = 'changed while down', doc = '" + bigText(random) + "' WHERE id = 7",
          "DELETE FROM items WHERE id IN (1, 2, 3, 301)");
      long seqBefore = pg.seqTupRead("items");

      // 6. resume from the recorded position: no table scan, the oracle catches up with the table
      try (SlotWatcher watcher = new SlotWatcher(pg, slot)) {
        Source source = pg.open(def);
        try {
          source.seek(stoppedAt);
          // no SELECT * until the scan counters are read: the test's own scans would count
          PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.containsKey(Row.of(520L))
              && !oracle.rows.containsKey(Row.of(301L)) && source.caughtUp(), "the changes made while down");
          assertThat(pg.seqTupRead("items")).as("seq_tup_read delta on resume").isEqualTo(seqBefore);
          source.poll(oracle, 1000, Duration.ofMillis(10));
          assertThat(source.meter().read()).containsEntry(PostgresLoadMeter.ROWS_SCANNED, 0L)
              .containsEntry(PostgresLoadMeter.INITIAL_LOADS, 0L);
          pg.syncWithTable(source, oracle, TABLE);
          assertThat(pg.confirmedFlushLsn(slot)).isEqualTo(DebeziumOffsets.confirmLsn(committed));
          SourceOffsets resumedCommitted = source.position();
          source.onSnapshotCommitted(resumedCommitted);
          long lsn = DebeziumOffsets.confirmLsn(resumedCommitted);
          PgFixture.pollUntil(source, oracle, Duration.ofSeconds(20), () -> pg.confirmedFlushLsn(slot) == lsn,
              "confirmed_flush_lsn to reach the LSN committed after resume");
        } finally {
          source.close();
        }
        assertThat(watcher.max.get()).isLessThanOrEqualTo(pg.confirmedFlushLsn(slot));
      }
    }
  }

  /**
   * Caught up is decided by a watermark that comes back through the source's own stream: not while
   * a backlog waits unpolled, yes once it is applied, and still yes after WAL written for another
   * table (which moves no offset of this source; the old criterion needed pg_stat_replication).
   */
  @Test
  void caughtUpFollowsTheWatermarkThroughTheStream() {
    try (PgFixture pg = new PgFixture("wmark")) {
      createItems(pg, 50);
      pg.exec("CREATE TABLE other (id BIGINT PRIMARY KEY, v TEXT)");
      Source source = pg.open(pg.definition("wmark", TABLE, Map.of("watermark-interval-ms", "200")));
      try {
        source.seek(SourceOffsets.EMPTY);
        Oracle oracle = new Oracle();
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.size() == 50 && source.caughtUp(),
            "the initial load and a first watermark");
        pg.exec("INSERT INTO items SELECT g, 'late', 0, 0, true, now(), NULL FROM generate_series(1001, 3000) g");
        PgFixture.sleep(3000); // not polled: the backlog fills the queue, newer watermarks wait behind it
        assertThat(source.caughtUp()).as("caught up with 2000 changes not yet polled").isFalse();
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.size() == 2050 && source.caughtUp(),
            "the backlog");
        pg.exec("INSERT INTO other SELECT g, md5(g::text) FROM generate_series(1, 20000) g");
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(30), source::caughtUp, "caught up after another table's WAL");
        assertThat(oracle.rows).isEqualTo(pg.table(TABLE, source.schema()));
      } finally {
        source.close();
      }
    }
  }

  /**
   * A restart right after a snapshot, with nothing committed on the table since: the resumed source
   * must report caught up promptly, every time, also when the recorded position is the previous
   * resume's and when only other tables' WAL was written meanwhile. Debezium looks for its resume
   * position among transactions; with non-transactional watermarks it could wait here until the
   * table changed (seen hanging the load-on-source benchmark and a CI run).
   */
  @Test
  void resumeWithNothingNewerIsCaughtUpEveryTime() {
    try (PgFixture pg = new PgFixture("idle")) {
      createItems(pg, 20);
      pg.exec("CREATE TABLE other (id BIGINT PRIMARY KEY, v TEXT)");
      SourceDefinition def = pg.definition("idle_items", TABLE, Map.of("slot", "cairn_idle_items"));
      Oracle oracle = new Oracle();
      SourceOffsets position = loadAndCommit(pg, def, oracle);
      for (int round = 0; round < 8; round++) {
        if (round % 3 == 2) {
          pg.exec("INSERT INTO other VALUES (" + round + ", 'not this source''s table')");
        }
        Source source = pg.open(def);
        long started = System.nanoTime();
        try {
          source.seek(position);
          int r = round;
          PgFixture.pollUntil(source, oracle, Duration.ofSeconds(20), source::caughtUp,
              "caught up on resume " + r + " with nothing newer on the table");
          long ms = (System.nanoTime() - started) / 1_000_000;
          System.out.printf("resume %d: caught up %d ms after open%n", round, ms);
          assertThat(ms).as("resume %d: ms from open to caught up", round).isLessThan(10_000);
          assertThat(oracle.rows).isEqualTo(pg.table(TABLE, source.schema()));
          if (round % 2 == 1) {
            // changes streamed before the next snapshot: the recorded position is then a data
            // transaction's, not only watermarks'
            pg.exec("UPDATE items SET qty = qty + 1 WHERE id <= " + (round + 2),
                "INSERT INTO items VALUES (" + (100 + round) + ", 'r', 0, 0, false, now(), NULL)");
            pg.syncWithTable(source, oracle, TABLE);
          }
          position = source.position();
          source.onSnapshotCommitted(position);
        } finally {
          source.close();
        }
      }
    }
  }

  @Test
  void initialLoadIsMeteredAndStreamingCountsRecordsBytesAndWal() {
    try (PgFixture pg = new PgFixture("meter")) {
      createItems(pg, 300);
      Source source = pg.open(pg.definition("meter_items", TABLE, Map.of()));
      try {
        source.seek(SourceOffsets.EMPTY);
        Oracle oracle = new Oracle();
        // no SELECT * here: this test's own scans would count as rows scanned
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.size() == 300 && source.caughtUp(),
            "the initial load");
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(10),
            () -> source.meter().read().get(PostgresLoadMeter.ROWS_SCANNED) >= 300, "rows_scanned to show the initial load");
        PgFixture.sleep(1200);
        source.poll(oracle, 1000, Duration.ofMillis(10));
        assertThat(source.meter().read().get(PostgresLoadMeter.ROWS_SCANNED)).as("rows scanned by the initial load").isEqualTo(300);
        pg.exec("UPDATE items SET doc = (SELECT string_agg(md5(random()::text || i), '') FROM generate_series(1, 63) i "
            + "WHERE items.id > 0) WHERE id <= 100");
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(30),
            () -> oracle.upserts == 400 && source.caughtUp(), "100 updates");
        PgFixture.sleep(500);
        Map<String, Long> m = source.meter().read();
        assertThat(m.get("records")).isEqualTo(400);
        assertThat(m.get("bytes")).isGreaterThan(100L * 2000);
        assertThat(m.get("requests")).isGreaterThan(3);
        assertThat(m.get(PostgresLoadMeter.INITIAL_LOADS)).isEqualTo(1);
        assertThat(m.get(PostgresLoadMeter.WAL_BYTES_STREAMED)).isGreaterThan(100L * 1000);
        assertThat(m.get(PostgresLoadMeter.WAL_BYTES_RETAINED)).isGreaterThan(100L * 1000);
        assertThat(oracle.rows).isEqualTo(pg.table(TABLE, source.schema()));
      } finally {
        source.close();
      }
    }
  }

  @Test
  void resumeFromAPositionInsideATransactionLosesNothing() {
    try (PgFixture pg = new PgFixture("midtx")) {
      createItems(pg, 100);
      SourceDefinition def = pg.definition("midtx", TABLE, Map.of("slot", "cairn_midtx"));
      Oracle oracle = new Oracle();
      SourceOffsets mid;
      Source source = pg.open(def);
      try {
        source.seek(SourceOffsets.EMPTY);
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.size() == 100 && source.caughtUp(),
            "the initial load");
        // one transaction of 300 changes; stop after 120 of them
        pg.exec("BEGIN", "UPDATE items SET qty = qty + 1000", "INSERT INTO items SELECT g, 'tx', 0, 0, true, now(), NULL "
            + "FROM generate_series(101, 200) g", "DELETE FROM items WHERE id <= 100 AND id % 2 = 0", "COMMIT");
        long before = oracle.upserts + oracle.deletes;
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (oracle.upserts + oracle.deletes - before < 120) {
          source.poll(oracle, 40, Duration.ofMillis(50));
          assertThat(System.nanoTime()).as("time to receive part of the transaction").isLessThan(deadline);
        }
        mid = source.position();
        assertThat(oracle.upserts + oracle.deletes - before).as("stopped inside the transaction").isBetween(120L, 159L);
      } finally {
        source.close();
      }
      pg.exec("UPDATE items SET name = 'after' WHERE id = 101");
      Source resumed = pg.open(def);
      try {
        resumed.seek(mid);
        pg.syncWithTable(resumed, oracle, TABLE);
      } finally {
        resumed.close();
      }
    }
  }

  private static SourceOffsets runAndStop(PgFixture pg, SourceDefinition def, Oracle oracle) {
    Source source = pg.open(def);
    try {
      source.seek(SourceOffsets.EMPTY);
      pg.syncWithTable(source, oracle, TABLE);
      pg.exec("UPDATE items SET qty = -1 WHERE id = 1");
      pg.syncWithTable(source, oracle, TABLE);
      return source.position();
    } finally {
      source.close();
    }
  }

  @Test
  void missingSlotFailsUnderPolicyFail() {
    try (PgFixture pg = new PgFixture("slotfail")) {
      createItems(pg, 20);
      String slot = "cairn_slotfail";
      SourceDefinition def = pg.definition("slotfail", TABLE, Map.of("slot", slot));
      SourceOffsets pos = runAndStop(pg, def, new Oracle());
      pg.exec("SELECT pg_drop_replication_slot('" + slot + "')");
      Source source = pg.open(def);
      try {
        assertThatThrownBy(() -> source.seek(pos))
            .isInstanceOfSatisfying(io.cairn.engine.source.SourceException.class,
                e -> assertThat(e.retriable()).as("a lost slot is not worth a restart").isFalse())
            .hasMessageContaining("Cannot resume source 'slotfail'")
            .hasMessageContaining("replication slot '" + slot + "' does not exist")
            .hasMessageContaining(pg.database)
            .hasMessageContaining("slot-lost = 'reload'")
            .hasMessageNotContaining(pg.server.password());
      } finally {
        source.close();
      }
    }
  }

  @Test
  void missingPublicationFailsUnderPolicyFail() {
    try (PgFixture pg = new PgFixture("pubfail")) {
      createItems(pg, 20);
      SourceDefinition def = pg.definition("pubfail", TABLE, Map.of("slot", "cairn_pubfail", "publication", "pub_items"));
      SourceOffsets pos = runAndStop(pg, def, new Oracle());
      pg.exec("DROP PUBLICATION pub_items");
      Source source = pg.open(def);
      try {
        assertThatThrownBy(() -> source.seek(pos)).isInstanceOfSatisfying(io.cairn.engine.source.SourceException.class,
                e -> assertThat(e.retriable()).as("a lost slot is not worth a restart").isFalse())
            .hasMessageContaining("publication 'pub_items'").hasMessageContaining("does not exist or no longer publishes");
      } finally {
        source.close();
      }
    }
  }

  @Test
  void missingSlotReloadsUnderPolicyReload() {
    try (PgFixture pg = new PgFixture("slotreload")) {
      createItems(pg, 50);
      String slot = "cairn_slotreload";
      SourceDefinition def = pg.definition("slotreload", TABLE, Map.of("slot", slot, "slot-lost", "reload"));
      Oracle oracle = new Oracle();
      SourceOffsets pos = runAndStop(pg, def, oracle);
      pg.exec("SELECT pg_drop_replication_slot('" + slot + "')",
          "INSERT INTO items SELECT g, 'while lost', 1, 1, true, now(), NULL FROM generate_series(51, 60) g",
          "UPDATE items SET name = 'updated while lost' WHERE id <= 10",
          "DELETE FROM items WHERE id IN (20, 21)"); // a reload must retract these (SourceOutput.reset)
      Source source = pg.open(def);
      try {
        source.seek(pos);
        pg.syncWithTable(source, oracle, TABLE);
        assertThat(source.meter().read()).containsEntry(PostgresLoadMeter.INITIAL_LOADS, 1L);
        assertThat(pg.queryLong("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + slot + "'")).isEqualTo(1);
        pg.exec("DELETE FROM items WHERE id = 60");
        pg.syncWithTable(source, oracle, TABLE);
      } finally {
        source.close();
      }
    }
  }

  @Test
  void slotInvalidatedByMaxSlotWalKeepSizeIsReportedThenReloaded() {
    // a private server: shrinking max_slot_wal_keep_size would invalidate other tests' slots
    try (PostgresServer server = PostgresServer.start(); PgFixture pg = new PgFixture(server, "lost")) {
      createItems(pg, 30);
      String slot = "cairn_lost";
      SourceDefinition failing = pg.definition("lost", TABLE, Map.of("slot", slot));
      Oracle oracle = new Oracle();
      SourceOffsets pos = runAndStop(pg, failing, oracle);
      pg.exec("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'", "SELECT pg_reload_conf()",
          "CREATE TABLE filler (id int, body text)",
          "INSERT INTO filler SELECT g, md5(g::text) FROM generate_series(1, 20000) g",
          "UPDATE items SET name = 'while lost' WHERE id = 3",
          "SELECT pg_switch_wal()", "CHECKPOINT",
          "INSERT INTO filler SELECT g, md5(g::text) FROM generate_series(1, 20000) g",
          "SELECT pg_switch_wal()", "CHECKPOINT");
      assertThat(pg.queryString("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + slot + "'")).isEqualTo("lost");
      Source source = pg.open(failing);
      try {
        assertThatThrownBy(() -> source.seek(pos)).isInstanceOfSatisfying(io.cairn.engine.source.SourceException.class,
                e -> assertThat(e.retriable()).as("a lost slot is not worth a restart").isFalse())
            .hasMessageContaining("replication slot '" + slot + "'")
            .hasMessageContaining("was invalidated (wal_status = lost")
            .hasMessageContaining("max_slot_wal_keep_size");
      } finally {
        source.close();
      }
      pg.exec("ALTER SYSTEM RESET max_slot_wal_keep_size", "SELECT pg_reload_conf()");
      Source reloading = pg.open(pg.definition("lost", TABLE, Map.of("slot", slot, "slot-lost", "reload")));
      try {
        reloading.seek(pos);
        pg.syncWithTable(reloading, oracle, TABLE);
        assertThat(reloading.meter().read()).containsEntry(PostgresLoadMeter.INITIAL_LOADS, 1L);
      } finally {
        reloading.close();
      }
    }
  }

  /**
   * A first start of {@code def}: the initial load into {@code oracle}, caught up, and its position
   * committed as a snapshot's would be; the source is closed. Returns that position.
   */
  private static SourceOffsets loadAndCommit(PgFixture pg, SourceDefinition def, Oracle oracle) {
    Source first = pg.open(def);
    try {
      first.seek(SourceOffsets.EMPTY);
      pg.syncWithTable(first, oracle, TABLE);
      PgFixture.pollUntil(first, oracle, Duration.ofSeconds(30), first::caughtUp, "caught up after the initial load");
      SourceOffsets position = first.position();
      first.onSnapshotCommitted(position);
      return position;
    } finally {
      first.close();
    }
  }

  /**
   * Debezium's own start-time connection check (login, roles) is skipped ({@link
   * PrecheckedPostgresConnector}): a user who lost the REPLICATION role must still get an error that
   * says so, from the stream's start, on resume.
   */
  @Test
  void aResumeWithoutTheReplicationRoleFailsNamingIt() {
    try (PgFixture pg = new PgFixture("norepl")) {
      createItems(pg, 5);
      SourceDefinition def = pg.definition("norepl", TABLE, Map.of("slot", "cairn_norepl"));
      SourceOffsets position = loadAndCommit(pg, def, new Oracle());
      // a role that may log in and read the table, but not replicate (the slot and publication exist)
      pg.exec("CREATE ROLE reader LOGIN NOREPLICATION PASSWORD '" + pg.server.password() + "'",
          "GRANT SELECT ON " + TABLE + " TO reader");
      Source source = pg.open(pg.definition("norepl", TABLE, Map.of("slot", "cairn_norepl", "user", "reader")));
      try {
        source.seek(position);
        Oracle oracle = new Oracle();
        assertThatThrownBy(() -> PgFixture.pollUntil(source, oracle, Duration.ofSeconds(30), () -> false, "a failure"))
            .hasMessageContaining("norepl")
            .hasMessageContaining("must be superuser or replication role");
      } finally {
        source.close();
      }
    }
  }

  @Test
  void badPasswordGivesAClearErrorWithoutTheSecret() {
    try (PgFixture pg = new PgFixture("badpw")) {
      createItems(pg, 1);
      String wrong = "wrong-" + java.util.UUID.randomUUID();
      SourceDefinition def = pg.definition("badpw", TABLE, Map.of());
      assertThatThrownBy(() -> new PostgresConnector().open(def, ref -> wrong))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("Cannot open source 'badpw'")
          .hasMessageContaining("authentication failed for user 'cairn'")
          .hasMessageContaining(PgFixture.SECRET_REF)
          .hasMessageNotContaining(wrong)
          .hasMessageNotContaining(pg.server.password());
    }
  }

  @Test
  void defaultReplicaIdentityIsRefusedOrSetOnRequest() {
    try (PgFixture pg = new PgFixture("ident")) {
      pg.exec("CREATE TABLE plain (id int PRIMARY KEY, body text)");
      assertThatThrownBy(() -> pg.open(pg.definition("ident", "plain", Map.of())))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("REPLICA IDENTITY DEFAULT")
          .hasMessageContaining("replica-identity");
      Source source = pg.open(pg.definition("ident", "plain", Map.of("replica-identity", "set-full")));
      source.close();
      assertThat(pg.queryString("SELECT relreplident::text FROM pg_class WHERE relname = 'plain'")).isEqualTo("f");
    }
  }

  @Test
  void unknownTableAndMissingKeyAreClearErrors() {
    try (PgFixture pg = new PgFixture("nokey")) {
      pg.exec("CREATE TABLE nokey (a int, b text)", "ALTER TABLE nokey REPLICA IDENTITY FULL");
      assertThatThrownBy(() -> pg.open(pg.definition("nokey", "public.nothere", Map.of())))
          .hasMessageContaining("table public.nothere does not exist");
      assertThatThrownBy(() -> pg.open(pg.definition("nokey", "nokey", Map.of())))
          .hasMessageContaining("has no primary key");
    }
  }

  @Test
  void pollRespectsMaxRecordsTheQueueIsBoundedAndCloseStopsTheThreads() {
    try (PgFixture pg = new PgFixture("backpressure")) {
      createItems(pg, 2000);
      List<Thread> before = new ArrayList<>(Thread.getAllStackTraces().keySet());
      PostgresSource source = (PostgresSource) pg.open(pg.definition("bp", TABLE, Map.of("queue-capacity", "16")));
      Oracle oracle = new Oracle();
      try {
        source.seek(SourceOffsets.EMPTY);
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(30), () -> oracle.rows.size() >= 16, "first rows");
        PgFixture.sleep(300);
        assertThat(source.queued()).as("records buffered while nobody polls").isLessThanOrEqualTo(16);
        int n = source.poll(oracle, 5, Duration.ofMillis(100));
        assertThat(n).as("poll respects maxRecords").isEqualTo(5);
      } finally {
        source.close();
      }
      PgFixture.sleep(200);
      assertThat(Thread.getAllStackTraces().keySet().stream()
          .filter(t -> !before.contains(t) && t.isAlive() && t.getName().startsWith("cairn-pg")))
          .as("source threads after close").isEmpty();
      assertThatThrownBy(() -> source.poll(oracle, 1, Duration.ZERO)).hasMessageContaining("closed");
      assertThat(pg.queryLong("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'cairn-bp%' "
          + "OR (datname = current_database() AND backend_type = 'walsender')")).as("server sessions left open").isZero();
    }
  }
}
