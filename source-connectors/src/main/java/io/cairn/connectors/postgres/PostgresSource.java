package io.cairn.connectors.postgres;

import io.cairn.connectors.postgres.PostgresSourceConfig.ReplicaIdentityPolicy;
import io.cairn.connectors.postgres.PostgresSourceConfig.SlotLostPolicy;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Postgres table read through Debezium's embedded engine (pgoutput logical decoding).
 *
 * <h2>Design and invariants</h2>
 *
 * <ul>
 *   <li><b>Owns</b> the streaming: the Debezium engine and its thread, the queue between it and
 *       {@link #poll}, the conversion of change events to rows, the position, the caught-up
 *       watermarks, the read-rate limit and the load meter's probes. The replication slot and the
 *       publication (checking, dropping, the publication's creation, the confirmation target) are
 *       {@link ReplicationSlot}'s; the table's metadata and the statistics probe are {@link
 *       PostgresCatalog}'s. Both use the one JDBC connection this class opens in its constructor
 *       and closes in {@link #close}.
 *   <li><b>Threads.</b> The engine calls {@link #seek}, {@link #poll}, {@link #position()}, {@link
 *       #caughtUp()} and {@link #onSnapshotCommitted} on the thread that owns the source. Debezium
 *       runs on its own daemon thread and hands change events to {@link #poll} through a bounded
 *       queue ({@code queue-capacity}); when the engine does not poll, Debezium blocks, and so does
 *       the replication stream (backpressure). A second daemon thread (the monitor) probes the
 *       server every {@code stats-interval-ms} for the load meter and the slot's confirmed
 *       position, and writes the caught-up watermarks ({@link #caughtUp()}). The JDBC connection
 *       has one user at a time: {@link #seek} uses it before the monitor starts; the monitor and
 *       {@link #close} (after stopping the monitor) hold the catalog's monitor while they use it.
 *       State shared between threads is volatile or atomic.
 *   <li><b>Offsets live in the engine.</b> {@link #position()} is Debezium's offset map of the last
 *       delivered event (or heartbeat). Debezium's offset store is {@link EngineOffsetStore}:
 *       while Debezium's task starts it serves the offsets given to {@link #seek}; afterwards it
 *       serves only offsets handed to {@link #onSnapshotCommitted}. Debezium writes are ignored.
 *   <li><b>LSN confirmation only after a snapshot commits.</b> Debezium's Postgres task confirms
 *       ({@code flush}) to the replication slot the LSN of the offsets it reads back from its
 *       offset store, and it does so only when an offset commit happens. The offset commit policy
 *       ({@link ReplicationSlot#confirmationDue()}) commits only while a confirmation is pending (a
 *       committed snapshot's LSN above the slot's {@code confirmed_flush_lsn}); Debezium
 *       heartbeats ({@code heartbeat-interval-ms}) keep commits possible on an idle table. So
 *       {@code confirmed_flush_lsn} never passes the {@code lsn_commit} (else {@code lsn_proc}) of
 *       the last {@code onSnapshotCommitted} offsets, also not when the source is closed.
 *       <p><b>Cost:</b> the slot retains all WAL written since the last committed snapshot — about
 *       one snapshot interval (a day by default) plus snapshot upload time, for every write in the
 *       database cluster, not only this table's. {@link PostgresRetentionGuard} compares that with
 *       {@code max_slot_wal_keep_size}; {@code wal_bytes_retained} in the meter shows it live.
 *   <li><b>First start / resume.</b> {@code seek(EMPTY)} drops a leftover slot of the same name,
 *       ensures the publication publishes the table ({@link
 *       ReplicationSlot#prepareForInitialLoad}), and lets Debezium create the slot and do the
 *       initial load ({@code snapshot.mode=initial}) before streaming. {@code seek(p)} checks that
 *       the slot exists, is valid, belongs to the database and has not been confirmed past {@code
 *       p}, and that the publication still publishes the table ({@link
 *       ReplicationSlot#resumeProblem}); then streams from {@code p} with {@code
 *       snapshot.mode=no_data} (no table scan). Offsets taken in the middle of an initial
 *       load restart the load from scratch.
 *   <li><b>Slot or publication lost.</b> Policy {@code slot-lost=fail} (default) throws, naming the
 *       slot, the database and the resume LSN. {@code reload} drops what is left of the slot and
 *       re-does the initial load; the warning states its cost (estimated rows and table size).
 *       A reload (and a restart inside an unfinished initial load) first resets the source's
 *       rows ({@link SourceOutput#reset()}), so rows deleted while the slot was missing leave the
 *       views; a slot invalidated while streaming fails the source, and the policy applies at the
 *       next recovery.
 *   <li><b>TOAST.</b> pgoutput sends an "unchanged TOAST" marker for a large value an UPDATE did
 *       not change, unless the table's replica identity is FULL; Debezium then fills it from the
 *       old row. cairn requires REPLICA IDENTITY FULL ({@code replica-identity=require-full},
 *       checked at open), or sets it ({@code set-full}), or accepts any identity ({@code any}), in
 *       which case a marker that still reaches the source fails it with a clear message rather
 *       than storing a placeholder as data. FULL also gives complete {@code before} rows.
 *   <li><b>Delivery.</b> Events become {@code upsert(key, row)} (insert, update, initial-load
 *       read) and {@code upsert(key, null)} (delete). TRUNCATE retracts every row of the
 *       source ({@link SourceOutput#reset()}), as a reload does. On resume Debezium may re-deliver events of the last
 *       transaction before the position; upserts by key make that harmless.
 *   <li><b>Errors.</b> Debezium's retries are off ({@code errors.max.retries=0}): an error stops
 *       the engine and the next {@link #poll} throws it with the source, slot and server named.
 *       The password (a secret) never appears in a message or a log line. A server restart is
 *       handled without a person: the engine's one WARN line says the source restarts; this class
 *       adds one WARN when the monitor's probes start failing (DEBUG while they keep failing), and
 *       Debezium's own ERROR lines for the same failure are silenced in the shipped logging
 *       configuration ({@code dist conf/logback.xml}).
 *   <li><b>Caught up</b> changes only when the position changes relative to the server: heartbeats
 *       and watermarks waiting in the queue are not undelivered changes ({@link #caughtUp()}).
 * </ul>
 */
final class PostgresSource implements Source {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresSource.class);
  static final String UNAVAILABLE = "__debezium_unavailable_value";
  private static final long MICROS_PER_DAY = 86_400_000_000L;

  private sealed interface Item permits Change, Truncate, Heartbeat, Watermark, Failure {}

  /** A change; {@code scanned}: a row read by cairn's own initial load (or reload) query, counted as {@code rows_scanned}. */
  private record Change(Row key, Row row, Map<String, ?> offsets, long bytes, boolean scanned) implements Item {}

  private record Heartbeat(Map<String, ?> offsets) implements Item {}

  /** TRUNCATE of the table: every row of the source is retracted (as after a reload). */
  private record Truncate(Map<String, ?> offsets) implements Item {}

  private record Failure(RuntimeException error) implements Item {}

  /** This source's caught-up watermark number {@code seq} came through the stream (see {@link #caughtUp()}). */
  private record Watermark(long seq) implements Item {}

  private final PostgresSourceConfig config;
  private final String password;
  private final PostgresLoadMeter meter = new PostgresLoadMeter();
  private final Schema schema;
  private final List<String> primaryKey;
  private final int[] keyIndices;
  private final PostgresCatalog catalog;
  private final ReplicationSlot slot;
  private final BlockingQueue<Item> queue;
  /**
   * Changes and TRUNCATEs in {@link #queue} (heartbeats and watermarks not counted): raised before
   * one is queued, lowered when {@link #poll} takes it. Only these make the source behind.
   */
  private final java.util.concurrent.atomic.AtomicInteger queuedChanges = new java.util.concurrent.atomic.AtomicInteger();
  private final String storeId = UUID.randomUUID().toString();
  private final EngineOffsetStore.Channel channel;
  private final String heartbeatTopicPrefix;

  private volatile boolean closed;
  private volatile boolean warnedNoSentLsn;
  /** The monitor's probes are failing (logged once at WARN when they start failing, at DEBUG after). */
  private boolean probesFailing;
  private volatile RuntimeException failure;
  private boolean seeked;
  private SourceOffsets position = SourceOffsets.EMPTY;
  private Map<String, ?> lastOffsets;
  private volatile boolean loadDone;
  private DebeziumEngine<RecordChangeEvent<SourceRecord>> engine;
  private ExecutorService engineThread;
  private ScheduledExecutorService monitor;
  private final AtomicBoolean taskStarted = new AtomicBoolean();
  /**
   * Resuming on an existing slot: a watermark written now is in the slot's stream, after the resume
   * position, so the first one need not wait for Debezium's task to start (150–280 ms): the
   * round trip of the first watermark overlaps the start.
   */
  private volatile boolean slotStreams;

  /** The Debezium offsets of the last committed snapshot, served to Debezium once its task has started. */
  private volatile Map<String, Object> confirmedOffsets;

  // probes
  private Integer lastSenderPid;
  private long lastSentLsn = -1;

  // caught-up watermarks
  static final String WATERMARK_PREFIX = "cairn.watermark";
  /** A watermark still in flight this long after it was written no longer counts as caught up. */
  private static final long WATERMARK_LAG_NANOS = TimeUnit.SECONDS.toNanos(2);
  /** Asked within this long: the monitor keeps writing watermarks. */
  private static final long WATERMARK_ASKED_NANOS = TimeUnit.SECONDS.toNanos(5);
  /** {@code <slot>:<random per instance>:}: an old run's watermarks replayed from the resume LSN never match. */
  private final String watermarkTag;
  private volatile long watermarkEmitted;
  private volatile long watermarkEmittedNanos;
  private volatile long watermarkSeen;
  private volatile long caughtUpAskedNanos;

  // read-rate limit
  private volatile double rateLimit;
  private double tokens;
  private long tokensNanos = System.nanoTime();

  PostgresSource(PostgresSourceConfig config, String password, Schema declaredSchema, List<String> declaredKey) {
    this.config = config;
    this.password = password;
    this.queue = new ArrayBlockingQueue<>(config.queueCapacity());
    this.heartbeatTopicPrefix = "__debezium-heartbeat." + topicPrefix();
    this.watermarkTag = config.slot() + ":" + UUID.randomUUID() + ":";
    Connection conn = connect();
    this.catalog = new PostgresCatalog(conn, config, meter);
    this.slot = new ReplicationSlot(conn, config, meter);
    try {
      PostgresCatalog.TableInfo table = catalog.table();
      this.schema = declaredSchema.size() == 0 ? table.schema() : declaredSchema;
      for (int i = 0; i < schema.size(); i++) {
        if (table.schema().indexOf(schema.column(i).name()) < 0) {
          throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': declared column '"
              + schema.column(i).name() + "' is not a column of table " + config.qualifiedTable() + " (its columns: "
              + table.schema() + ")");
        }
      }
      this.primaryKey = declaredKey.isEmpty() ? table.primaryKey() : declaredKey;
      if (primaryKey.isEmpty()) {
        throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': table "
            + config.qualifiedTable() + " has no primary key; declare PRIMARY KEY (...) on the source");
      }
      keyIndices = new int[primaryKey.size()];
      for (int i = 0; i < keyIndices.length; i++) {
        keyIndices[i] = schema.indexOf(primaryKey.get(i));
        if (keyIndices[i] < 0) {
          throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': primary-key column '"
              + primaryKey.get(i) + "' is not in the source's schema (" + schema + ")");
        }
      }
      applyReplicaIdentityPolicy(table);
    } catch (SQLException e) {
      closeQuietly(conn);
      throw new IllegalStateException("Cannot open source '" + config.sourceName() + "': reading table "
          + config.qualifiedTable() + " at " + config.where() + " failed: " + scrub(e.getMessage()));
    } catch (RuntimeException e) {
      closeQuietly(conn);
      throw e;
    }
    this.channel = EngineOffsetStore.register(storeId);
  }

  private void applyReplicaIdentityPolicy(PostgresCatalog.TableInfo table) throws SQLException {
    if (table.replicaIdentity() == 'f' || config.replicaIdentity() == ReplicaIdentityPolicy.ANY) {
      return;
    }
    if (config.replicaIdentity() == ReplicaIdentityPolicy.SET_FULL) {
      LOG.info("Source '{}': setting REPLICA IDENTITY FULL on {}", config.sourceName(), config.qualifiedTable());
      catalog.setReplicaIdentityFull();
      return;
    }
    throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': table " + config.qualifiedTable()
        + " has REPLICA IDENTITY " + replicaIdentityName(table.replicaIdentity())
        + "; cairn needs FULL so that unchanged TOAST values and deleted rows arrive complete. Run "
        + "'ALTER TABLE " + config.qualifiedTable() + " REPLICA IDENTITY FULL', or set option replica-identity to "
        + "'set-full' (cairn runs it) or 'any' (an unchanged TOAST value then fails the source)");
  }

  private static String replicaIdentityName(char c) {
    return switch (c) {
      case 'd' -> "DEFAULT";
      case 'n' -> "NOTHING";
      case 'i' -> "USING INDEX";
      case 'f' -> "FULL";
      default -> String.valueOf(c);
    };
  }

  private Connection connect() {
    try {
      Properties p = new Properties();
      p.setProperty("user", config.user());
      p.setProperty("password", password);
      p.setProperty("ApplicationName", "cairn-" + config.sourceName());
      p.setProperty("connectTimeout", "10");
      Connection c = DriverManager.getConnection(config.jdbcUrl(), p);
      meter.add(LoadMeter.REQUESTS, 1);
      return c;
    } catch (SQLException e) {
      String why = "28P01".equals(e.getSQLState()) || "28000".equals(e.getSQLState())
          ? "authentication failed for user '" + config.user() + "' (check the secret '" + config.passwordRef() + "')"
          : scrub(e.getMessage());
      throw new IllegalStateException("Cannot open source '" + config.sourceName() + "': cannot connect to Postgres at "
          + config.where() + ": " + why + " [SQLState " + e.getSQLState() + "]");
    }
  }

  private String topicPrefix() {
    return "cairn_" + config.sourceName().replaceAll("[^A-Za-z0-9_]", "_");
  }

  /** Removes the password from {@code text} should a driver or Debezium ever echo it. */
  String scrub(String text) {
    if (text == null) {
      return "";
    }
    return password.isEmpty() ? text : text.replace(password, "****");
  }

  @Override
  public Schema schema() {
    return schema;
  }

  @Override
  public List<String> primaryKey() {
    return primaryKey;
  }

  @Override
  public synchronized void seek(SourceOffsets offsets) {
    checkOpen();
    if (seeked) {
      throw new IllegalStateException("Cannot seek source '" + config.sourceName() + "': seek was already called");
    }
    seeked = true;
    String snapshotMode;
    try {
      if (offsets.isEmpty()) {
        freshStart("first start");
        snapshotMode = "initial";
        position = SourceOffsets.EMPTY;
      } else if (DebeziumOffsets.initialLoadIncomplete(offsets)) {
        freshStart("the recorded position is inside an unfinished initial load");
        resetOnFirstPoll = true;
        snapshotMode = "initial";
        position = SourceOffsets.EMPTY;
      } else {
        String problem = slot.resumeProblem(offsets);
        if (problem == null) {
          SourceOffsets start = DebeziumOffsets.forStreaming(offsets);
          channel.serve(DebeziumOffsets.toDebezium(start));
          snapshotMode = "no_data";
          position = offsets;
          loadDone = true;
          slotStreams = true;
          LOG.info("Source '{}': resuming from LSN {} on slot '{}' without a table scan", config.sourceName(),
              DebeziumOffsets.formatLsn(DebeziumOffsets.resumeLsn(offsets)), config.slot());
        } else if (config.slotLost() == SlotLostPolicy.FAIL) {
          throw io.cairn.engine.source.SourceException.fatal("Cannot resume source '" + config.sourceName() + "': " + problem
              + ". The changes made since then cannot be replayed. Set option slot-lost = 'reload' to re-do the initial load "
              + "of " + config.qualifiedTable() + ", or recover from an older state.");
        } else {
          PostgresCatalog.TableInfo t = catalog.table();
          LOG.warn("Source '{}': {}. Policy slot-lost=reload: re-doing the initial load of {} (about {} rows, {} MiB read "
                  + "from the table; the source's rows are reset first, so rows deleted meanwhile leave the views)", config.sourceName(), problem,
              config.qualifiedTable(), t.estimatedRows(), t.totalBytes() >> 20);
          freshStart("slot lost");
          resetOnFirstPoll = true;
          snapshotMode = "initial";
          position = SourceOffsets.EMPTY;
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("Cannot seek source '" + config.sourceName() + "' at " + config.where() + ": "
          + scrub(e.getMessage()));
    }
    startEngine(snapshotMode);
    startMonitor();
  }

  private void freshStart(String why) throws SQLException {
    slot.prepareForInitialLoad(why);
    channel.serve(null);
    meter.add(PostgresLoadMeter.INITIAL_LOADS, 1);
    LOG.info("Source '{}': initial load of {} ({}), then streaming from slot '{}'", config.sourceName(),
        config.qualifiedTable(), why, config.slot());
  }

  private Properties engineProperties(String snapshotMode) {
    Properties p = new Properties();
    p.setProperty("name", "cairn-" + config.sourceName());
    p.setProperty("connector.class", PrecheckedPostgresConnector.class.getName());
    p.setProperty("offset.storage", EngineOffsetStore.class.getName());
    p.setProperty(EngineOffsetStore.ID_PROPERTY, storeId);
    p.setProperty("offset.flush.interval.ms", "0");
    p.setProperty("offset.flush.timeout.ms", "10000");
    p.setProperty("database.hostname", config.host());
    p.setProperty("database.port", Integer.toString(config.port()));
    p.setProperty("database.user", config.user());
    p.setProperty("database.password", password);
    p.setProperty("database.dbname", config.database());
    p.setProperty("database.applicationName", "cairn-" + config.sourceName());
    p.setProperty("topic.prefix", topicPrefix());
    p.setProperty("plugin.name", "pgoutput");
    p.setProperty("slot.name", config.slot());
    p.setProperty("publication.name", config.publication());
    p.setProperty("publication.autocreate.mode", "disabled");
    p.setProperty("table.include.list", config.schemaName() + "\\." + config.tableName());
    p.setProperty("snapshot.mode", snapshotMode);
    p.setProperty("lsn.flush.mode", "connector");
    p.setProperty("heartbeat.interval.ms", Long.toString(config.heartbeatInterval().toMillis()));
    p.setProperty("message.prefix.include.list", WATERMARK_PREFIX.replace(".", "\\."));
    p.setProperty("tombstones.on.delete", "false");
    p.setProperty("skipped.operations", "none");
    p.setProperty("decimal.handling.mode", "string"); // exact: a NUMERIC column keeps every digit; DOUBLE and BIGINT parse it
    p.setProperty("interval.handling.mode", "string"); // exact: ISO 8601 with months, days and time apart (numeric would fold them)
    p.setProperty("time.precision.mode", "adaptive_time_microseconds");
    p.setProperty("errors.max.retries", "0");
    p.setProperty("poll.interval.ms", "20");
    p.setProperty("max.batch.size", Integer.toString(Math.max(1, Math.min(2048, config.queueCapacity()))));
    p.setProperty("max.queue.size", Integer.toString(Math.max(2, Math.min(8192, config.queueCapacity() * 2))));
    p.setProperty("slot.drop.on.stop", "false");
    p.setProperty("unavailable.value.placeholder", UNAVAILABLE);
    p.setProperty("converter.schemas.enable", "false");
    return p;
  }

  private void startEngine(String snapshotMode) {
    try {
      engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
          .using(engineProperties(snapshotMode))
          .using((recordsSinceLastCommit, sinceLastCommit) -> slot.confirmationDue())
          .using(new DebeziumEngine.ConnectorCallback() {
            @Override
            public void taskStarted() {
              // Debezium has read its start position; from now on serve only committed snapshots' offsets.
              taskStarted.set(true);
              channel.serve(confirmedOffsets);
              ScheduledExecutorService m = monitor;
              if (m != null && !m.isShutdown()) {
                // the first watermark now, not at the next probe (up to stats-interval-ms away): a
                // recovery with little to read waits for this watermark and nothing else
                try {
                  m.execute(PostgresSource.this::probe);
                } catch (java.util.concurrent.RejectedExecutionException closing) {
                  // the source is closing
                }
              }
            }
          })
          .using(this::completed)
          .notifying(this::handleBatch)
          .build();
    } catch (RuntimeException e) {
      // no thread was started yet, and engine.close() after a failed build throws: nothing to stop
      throw new IllegalStateException("Cannot start source '" + config.sourceName() + "': Debezium engine: "
          + scrub(String.valueOf(e.getMessage())));
    }
    meter.add(LoadMeter.REQUESTS, 1);
    engineThread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "cairn-pg-" + config.sourceName());
      t.setDaemon(true);
      return t;
    });
    engineThread.execute(engine);
  }

  private void completed(boolean success, String message, Throwable error) {
    if (closed || (success && error == null)) {
      return;
    }
    RuntimeException e = translate(message, error);
    failure = e;
    queue.offer(new Failure(e));
    // the next poll throws it and the engine logs the one WARN (restart) or ERROR (failed) line
    LOG.debug("Source '{}': Debezium engine stopped: {}", config.sourceName(), e.getMessage());
  }

  private RuntimeException translate(String message, Throwable error) {
    StringBuilder why = new StringBuilder(message == null ? "" : message);
    for (Throwable t = error; t != null && t.getCause() != t; t = t.getCause()) {
      if (t.getMessage() != null && why.indexOf(t.getMessage()) < 0) {
        why.append(why.length() == 0 ? "" : ": ").append(t.getMessage());
      }
      if (t.getCause() == null) {
        break;
      }
    }
    String text = scrub(why.toString());
    String hint = "";
    if (text.contains("password authentication failed")) {
      hint = " (authentication failed for user '" + config.user() + "'; check the secret '" + config.passwordRef() + "')";
    } else if (text.contains("replication slot") || text.contains("can no longer get changes")) {
      hint = " (replication slot '" + config.slot() + "'; policy slot-lost=" + config.slotLost().name().toLowerCase(java.util.Locale.ROOT)
          + " applies at the next recovery)";
    }
    return new IllegalStateException("Cannot stream source '" + config.sourceName() + "' from slot '" + config.slot()
        + "' at " + config.where() + ": " + text + hint);
  }

  private void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
      DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) throws InterruptedException {
    for (RecordChangeEvent<SourceRecord> event : records) {
      SourceRecord r = event.record();
      Item item;
      try {
        item = toItem(r);
      } catch (RuntimeException e) {
        // the same change arrives again after a restart: not retriable
        Failure f = new Failure(new io.cairn.engine.source.SourceException("Cannot decode a change of source '"
            + config.sourceName() + "' (table " + config.qualifiedTable() + ", offsets " + r.sourceOffset() + "): "
            + e.getMessage(), e, false));
        failure = f.error();
        put(f);
        throw f.error();
      }
      if (item != null) {
        put(item);
      }
      committer.markProcessed(event);
    }
    committer.markBatchFinished();
  }

  private void put(Item item) throws InterruptedException {
    boolean change = item instanceof Change || item instanceof Truncate;
    if (change) {
      queuedChanges.incrementAndGet();
    }
    while (!queue.offer(item, 100, TimeUnit.MILLISECONDS)) {
      if (closed) {
        if (change) {
          queuedChanges.decrementAndGet();
        }
        throw new InterruptedException("source closed");
      }
    }
  }

  private Item toItem(SourceRecord r) {
    if (r.topic() != null && r.topic().startsWith(heartbeatTopicPrefix)) {
      return new Heartbeat(r.sourceOffset());
    }
    if (!(r.value() instanceof Struct value)) {
      return null; // tombstone
    }
    String op = value.getString("op");
    if (op == null) {
      return null;
    }
    return switch (op) {
      case "c", "r", "u" -> {
        Row row = toRow(value.getStruct("after"), op);
        yield new Change(row.select(keyIndices), row, r.sourceOffset(), estimateBytes(row), op.equals("r"));
      }
      case "d" -> {
        Struct before = value.getStruct("before");
        if (before == null) {
          throw new IllegalStateException("DELETE without the old row's key (replica identity NOTHING?)");
        }
        Row key = toKey(before);
        yield new Change(key, null, r.sourceOffset(), estimateBytes(key), false);
      }
      case "t" -> new Truncate(r.sourceOffset());
      case "m" -> watermark(value.getStruct("message"));
      default -> null;
    };
  }

  /** This instance's watermark, or null for any other logical decoding message (another run's, another app's). */
  private Watermark watermark(Struct message) {
    if (message == null || !WATERMARK_PREFIX.equals(message.getString("prefix"))) {
      return null;
    }
    Object c = message.get("content");
    String content = c instanceof byte[] b ? new String(b, java.nio.charset.StandardCharsets.UTF_8)
        : c instanceof ByteBuffer bb ? java.nio.charset.StandardCharsets.UTF_8.decode(bb.duplicate()).toString() : String.valueOf(c);
    if (!content.startsWith(watermarkTag)) {
      return null;
    }
    try {
      return new Watermark(Long.parseLong(content.substring(watermarkTag.length())));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private Row toRow(Struct s, String op) {
    if (s == null) {
      throw new IllegalStateException("event '" + op + "' has no 'after' row");
    }
    Object[] values = new Object[schema.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = valueOf(s, schema.column(i).name(), schema.type(i));
    }
    return Row.wrap(values);
  }

  private Row toKey(Struct s) {
    Object[] values = new Object[keyIndices.length];
    for (int i = 0; i < values.length; i++) {
      int c = keyIndices[i];
      values[i] = valueOf(s, schema.column(c).name(), schema.type(c));
    }
    return Row.wrap(values);
  }

  private Object valueOf(Struct s, String column, Type type) {
    Field f = s.schema().field(column);
    if (f == null) {
      throw new IllegalStateException("column '" + column + "' is missing from the change event");
    }
    // not s.get(f): Connect's Struct.get answers a NULL with the column's default, so a nullable
    // column with a DEFAULT set to NULL would arrive as its default (found by PostgresSourceTest)
    Object v = s.getWithoutDefault(f.name());
    if (v == null) {
      return null;
    }
    if (v instanceof String str && str.equals(UNAVAILABLE)
        || v instanceof byte[] b && new String(b, StandardCharsets.UTF_8).equals(UNAVAILABLE)
        || v instanceof ByteBuffer bb && StandardCharsets.UTF_8.decode(bb.duplicate()).toString().equals(UNAVAILABLE)) {
      throw new IllegalStateException("column '" + column + "' arrived as an unchanged TOAST value; set REPLICA IDENTITY FULL on "
          + config.qualifiedTable() + " (option replica-identity = 'set-full' does it)");
    }
    String logical = f.schema().name();
    try {
      return switch (type) {
        case BIGINT -> v instanceof String n ? new java.math.BigDecimal(n).longValueExact() : ((Number) v).longValue();
        case DOUBLE -> v instanceof String n ? Double.parseDouble(n) : ((Number) v).doubleValue();
        case NUMERIC -> numeric(v);
        case INTERVAL -> io.cairn.engine.row.Interval.parse(v.toString()); // Debezium's ISO 8601 (interval.handling.mode string)
        case BOOLEAN -> (Boolean) v;
        case TIMESTAMP -> timestampMicros(v, logical);
        case DATE -> Math.floorDiv(timestampMicros(v, logical), MICROS_PER_DAY); // io.debezium.time.Date: days already
        case TEXT -> text(v);
        case NULL -> null;
      };
    } catch (ArithmeticException e) {
      throw new IllegalStateException("column '" + column + "' is declared " + type + " but the value " + v + " does not fit it: " + e.getMessage());
    } catch (ClassCastException | DateTimeParseException | IllegalArgumentException e) {
      throw new IllegalStateException("column '" + column + "' is declared " + type + " but the value is a "
          + v.getClass().getSimpleName() + (logical == null ? "" : " (" + logical + ")"));
    }
  }

  /** A Postgres numeric (Debezium's string) as a NUMERIC; NaN and infinities have no NUMERIC. */
  private static java.math.BigDecimal numeric(Object v) {
    if (v instanceof java.math.BigDecimal b) {
      return io.cairn.engine.row.Numeric.of(b);
    }
    String s = v.toString();
    if (s.equals("NaN") || s.endsWith("Infinity")) {
      throw new ArithmeticException("NUMERIC holds no " + s + " (declare the column DOUBLE to keep it)");
    }
    return io.cairn.engine.row.Numeric.parse(s);
  }

  private static long timestampMicros(Object v, String logical) {
    if (logical != null) {
      switch (logical) {
        case "io.debezium.time.MicroTimestamp":
          return ((Number) v).longValue();
        case "io.debezium.time.Timestamp":
          return ((Number) v).longValue() * 1000;
        case "io.debezium.time.NanoTimestamp":
          return Math.floorDiv(((Number) v).longValue(), 1000);
        case "io.debezium.time.Date":
          return ((Number) v).longValue() * MICROS_PER_DAY;
        case "io.debezium.time.ZonedTimestamp": {
          OffsetDateTime t = OffsetDateTime.parse((String) v);
          return t.toEpochSecond() * 1_000_000L + t.getNano() / 1000;
        }
        default:
          break;
      }
    }
    if (v instanceof java.util.Date d) {
      return d.getTime() * 1000;
    }
    return ((Number) v).longValue();
  }

  private static String text(Object v) {
    if (v instanceof String s) {
      return s;
    }
    if (v instanceof byte[] b) {
      return Base64.getEncoder().encodeToString(b);
    }
    if (v instanceof ByteBuffer bb) {
      ByteBuffer d = bb.duplicate();
      byte[] b = new byte[d.remaining()];
      d.get(b);
      return Base64.getEncoder().encodeToString(b);
    }
    return String.valueOf(v);
  }

  private static long estimateBytes(Row row) {
    long n = 0;
    for (int i = 0; i < row.size(); i++) {
      Object v = row.get(i);
      if (v instanceof String s) {
        n += s.length();
      } else if (v instanceof Boolean) {
        n += 1;
      } else if (v != null) {
        n += 8;
      }
    }
    return n;
  }

  /** Set when the initial load starts over: the first poll resets the source's rows. */
  private boolean resetOnFirstPoll;

  @Override
  public int poll(SourceOutput out, int maxRecords, Duration timeout) {
    checkOpen();
    if (!seeked) {
      throw new IllegalStateException("Cannot poll source '" + config.sourceName() + "': seek() was not called");
    }
    if (resetOnFirstPoll) {
      out.reset(); // the initial load starts over: retract what the engine holds for this table
      resetOnFirstPoll = false;
    }
    int limit = applyRateLimit(maxRecords);
    int delivered = 0;
    try {
      Item item = queue.poll(Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
      while (item != null) {
        if (item instanceof Change || item instanceof Truncate) {
          queuedChanges.decrementAndGet();
        }
        if (item instanceof Change c) {
          if (c.row() == null) {
            out.upsert(c.key(), null);
          } else {
            out.upsert(c.key(), c.row());
          }
          delivered++;
          meter.add(LoadMeter.RECORDS, 1);
          meter.add(LoadMeter.BYTES, c.bytes());
          if (c.scanned()) {
            meter.add(PostgresLoadMeter.ROWS_SCANNED, 1);
          }
          advance(c.offsets());
        } else if (item instanceof Truncate t) {
          LOG.info("Source '{}': TRUNCATE of {}: retracting every row", config.sourceName(), config.qualifiedTable());
          out.reset();
          delivered++;
          meter.add(LoadMeter.RECORDS, 1);
          advance(t.offsets());
        } else if (item instanceof Heartbeat h) {
          advance(h.offsets());
        } else if (item instanceof Watermark w) {
          // everything the server had written before the watermark has passed through poll: no offsets move
          watermarkSeen = Math.max(watermarkSeen, w.seq());
        } else if (item instanceof Failure f) {
          throw f.error();
        }
        item = delivered < limit ? queue.poll() : null;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (delivered == 0 && failure != null && queue.isEmpty()) {
      throw failure;
    }
    if (rateLimit > 0) {
      tokens -= delivered;
    }
    return delivered;
  }

  private int applyRateLimit(int maxRecords) {
    double rate = rateLimit;
    if (rate <= 0) {
      return maxRecords;
    }
    long now = System.nanoTime();
    tokens = Math.min(rate, tokens + (now - tokensNanos) / 1e9 * rate);
    tokensNanos = now;
    return (int) Math.max(0, Math.min(maxRecords, Math.floor(tokens)));
  }

  private void advance(Map<String, ?> offsets) {
    if (offsets == null) {
      return;
    }
    lastOffsets = offsets;
    if (!loadDone && (offsets.get(DebeziumOffsets.SNAPSHOT) == null
        || Boolean.TRUE.equals(offsets.get(DebeziumOffsets.LAST_SNAPSHOT_RECORD)))) {
      loadDone = true;
      LOG.info("Source '{}': initial load delivered, streaming", config.sourceName());
    }
  }

  @Override
  public SourceOffsets position() {
    Map<String, ?> o = lastOffsets;
    if (o != null) {
      position = DebeziumOffsets.toSource(o);
      lastOffsets = null;
    }
    return position;
  }

  /**
   * Caught up when the stream has delivered, and {@link #poll} has handed on, everything up to a
   * watermark written after the question was first asked. A watermark is a transactional
   * logical decoding message ({@code pg_logical_emit_message}, prefix {@value #WATERMARK_PREFIX})
   * that the monitor thread writes into this database's WAL; its LSN is at or above {@code
   * pg_current_wal_lsn()} at the time it was written, and the server streams WAL in order. So this
   * decides from the LSNs the connector itself received, needs no statistics grant, and stays true
   * on an idle table (where the offsets of the last change never move). While the question keeps
   * being asked a new watermark is written every {@code watermark-interval-ms}; the answer stays
   * true while the newest one is less than 2 s in flight. Heartbeats and watermarks waiting for
   * the next poll do not count as undelivered: the answer changes only when the source's position
   * changes relative to the server (a change arrives or is delivered, a watermark is overdue).
   */
  @Override
  public boolean caughtUp() {
    // heartbeats and watermarks waiting in the queue carry no change: only a queued change makes
    // the source behind (else the answer flapped to false whenever one waited for the next poll)
    if (!seeked || closed || !loadDone || failure != null || queuedChanges.get() > 0) {
      return false;
    }
    caughtUpAskedNanos = System.nanoTime();
    long seen = watermarkSeen;
    if (seen == 0) {
      return false;
    }
    return seen >= watermarkEmitted || System.nanoTime() - watermarkEmittedNanos < WATERMARK_LAG_NANOS;
  }

  /** Writes the next watermark when one is due (monitor thread). */
  private void maybeEmitWatermark() throws SQLException {
    if (!loadDone || failure != null || !(taskStarted.get() || slotStreams)) {
      return;
    }
    long now = System.nanoTime();
    long emitted = watermarkEmitted;
    boolean asked = now - caughtUpAskedNanos < WATERMARK_ASKED_NANOS;
    boolean due;
    if (emitted == 0) {
      due = true; // the first one right after the stream starts: recovery's wait for caught-up ends early
    } else if (watermarkSeen >= emitted) {
      due = asked && now - watermarkEmittedNanos >= config.watermarkInterval().toNanos();
    } else {
      due = asked && now - watermarkEmittedNanos >= Math.max(config.watermarkInterval().toNanos(), TimeUnit.SECONDS.toNanos(30));
    }
    if (!due) {
      return;
    }
    long seq = emitted + 1;
    watermarkEmittedNanos = now;
    long lsn;
    synchronized (catalog) {
      lsn = catalog.emitMessage(WATERMARK_PREFIX, watermarkTag + seq);
    }
    watermarkEmitted = seq;
    LOG.debug("Source '{}': caught-up watermark {} written at LSN {}", config.sourceName(), seq, DebeziumOffsets.formatLsn(lsn));
  }

  @Override
  public void onSnapshotCommitted(SourceOffsets offsets) {
    long lsn = DebeziumOffsets.confirmLsn(offsets);
    if (lsn < 0 || lsn <= slot.confirmTarget()) {
      return;
    }
    Map<String, Object> dbz = DebeziumOffsets.toDebezium(DebeziumOffsets.forStreaming(offsets));
    confirmedOffsets = dbz;
    if (taskStarted.get()) {
      channel.serve(dbz);
    }
    slot.confirmUpTo(lsn);
  }

  /** Records waiting in the queue (tests). */
  int queued() {
    return queue.size();
  }

  /** The LSN the last committed snapshot allows the slot to confirm (-1: none yet). */
  long confirmTarget() {
    return slot.confirmTarget();
  }

  @Override
  public void setReadRateLimit(double recordsPerSecond) {
    if (recordsPerSecond < 0 || Double.isNaN(recordsPerSecond)) {
      throw new IllegalArgumentException("Cannot limit source '" + config.sourceName() + "': rate " + recordsPerSecond + " is negative");
    }
    rateLimit = recordsPerSecond;
  }

  @Override
  public LoadMeter meter() {
    return meter;
  }

  private void startMonitor() {
    monitor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "cairn-pg-monitor-" + config.sourceName());
      t.setDaemon(true);
      return t;
    });
    long ms = config.statsInterval().toMillis();
    monitor.scheduleWithFixedDelay(this::probe, 0, ms, TimeUnit.MILLISECONDS);
  }

  private void probe() {
    if (closed) {
      return;
    }
    try {
      PostgresCatalog.Probe p;
      synchronized (catalog) {
        p = catalog.probe();
      }
      if (p.senderPid() != null && p.sentLsn() < 0 && !warnedNoSentLsn) {
        warnedNoSentLsn = true;
        LOG.info("Source '{}': cannot read pg_stat_replication.sent_lsn of its own replication session, so the load "
            + "meter's wal_bytes_streamed stays 0 (GRANT pg_read_all_stats TO {} shows it; nothing else needs it)",
            config.sourceName(), config.user());
      }
      if (p.senderPid() != null && p.sentLsn() >= 0) {
        if (p.senderPid().equals(lastSenderPid) && lastSentLsn >= 0) {
          meter.add(PostgresLoadMeter.WAL_BYTES_STREAMED, Math.max(0, p.sentLsn() - lastSentLsn));
        }
        lastSenderPid = p.senderPid();
        lastSentLsn = p.sentLsn();
      }
      if (p.slot() != null) {
        slot.observe(p.slot(), p.headLsn());
      }
      LOG.debug("Source '{}': probe head {} flush {} sent {} confirmed {}", config.sourceName(),
          DebeziumOffsets.formatLsn(p.headLsn()), DebeziumOffsets.formatLsn(p.flushHeadLsn()),
          DebeziumOffsets.formatLsn(p.sentLsn()), p.slot() == null ? "none" : DebeziumOffsets.formatLsn(p.slot().confirmedFlushLsn()));
      maybeEmitWatermark();
      if (probesFailing) {
        probesFailing = false;
        LOG.info("Source '{}': reading statistics from {} again", config.sourceName(), config.where());
      }
    } catch (SQLException | RuntimeException e) {
      if (closed) {
        return;
      }
      if (!probesFailing) {
        // one line per outage (a server restart fails every probe until the source is restarted)
        probesFailing = true;
        LOG.warn("Source '{}': cannot read statistics from {}: {}; the load meter and caught-up watermarks pause, the "
            + "source keeps streaming, and a lost server connection restarts it", config.sourceName(), config.where(),
            scrub(e.getMessage()));
      } else {
        LOG.debug("Source '{}': cannot read statistics from {}: {}", config.sourceName(), config.where(), scrub(e.getMessage()));
      }
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("Cannot use source '" + config.sourceName() + "': it is closed");
    }
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (engine != null) {
      try {
        engine.close();
      } catch (Exception e) {
        LOG.debug("Source '{}': closing the Debezium engine: {}", config.sourceName(), scrub(e.getMessage()));
      }
    }
    if (engineThread != null) {
      engineThread.shutdown();
      try {
        if (!engineThread.awaitTermination(30, TimeUnit.SECONDS)) {
          LOG.warn("Source '{}': Debezium thread did not stop within 30 s; interrupting it", config.sourceName());
          engineThread.shutdownNow();
        }
      } catch (InterruptedException e) {
        engineThread.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    if (monitor != null) {
      monitor.shutdownNow();
      try {
        monitor.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    EngineOffsetStore.unregister(storeId);
    if (engine != null) {
      try {
        synchronized (catalog) {
          slot.awaitInactive(Duration.ofSeconds(5)); // let the server end the replication session
        }
      } catch (SQLException e) {
        LOG.debug("Source '{}': checking the slot at close: {}", config.sourceName(), scrub(e.getMessage()));
      }
    }
    closeQuietly(catalog.connection());
    queue.clear();
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException ignored) {
      // closing
    }
  }
}
