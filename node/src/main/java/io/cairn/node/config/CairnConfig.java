package io.cairn.node.config;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The node's configuration, read from {@code cairn.yaml} plus {@code CAIRN_*} environment
 * overrides by {@link ConfigLoader}. Every key has a default, so an empty configuration runs the
 * embedded laptop setup: a local object store in {@code ./cairn-data}, a load-generator source
 * with an example view, daily snapshots.
 *
 * @param storeUri object store for snapshots and the catalog ({@code file:///path},
 *     {@code s3://bucket/prefix?endpoint=...}); key {@code store.uri}
 * @param storeProperties extra store settings (e.g. {@code s3.region}); keys {@code store.properties.*}
 * @param workers worker threads; key {@code engine.workers}
 * @param tickMaxRecords key {@code engine.tick.max-records}
 * @param tickMaxDuration key {@code engine.tick.max-duration}
 * @param snapshotCron Quartz cron; key {@code snapshots.cron} (default daily at 00:00)
 * @param snapshotZone key {@code snapshots.zone}
 * @param keepLast key {@code snapshots.retention.keep-last}
 * @param keepDailyDays key {@code snapshots.retention.keep-daily-days}
 * @param gcGrace key {@code snapshots.retention.gc-grace}
 * @param httpHost key {@code http.host} (127.0.0.1)
 * @param httpPort key {@code http.port} (0 = disabled)
 * @param catchUpRateLimit records/s cap per source while catching up after recovery, 0 = none;
 *     key {@code recovery.catch-up-rate-limit}
 * @param init SQL statements run when the catalog is empty; key {@code init}
 * @param httpMaxBodyBytes the largest HTTP request body accepted (larger: 413); key {@code http.max-body}
 * @param sourceRestart how a source that failed with a retriable error is restarted; keys {@code
 *     sources.restart.initial-backoff}, {@code max-backoff}, {@code multiplier}, {@code jitter},
 *     {@code max-attempts} (0 = no limit)
 * @param pgwireHost the PostgreSQL wire-protocol listener's address; key {@code pgwire.host}
 *     (127.0.0.1; any other than loopback requires the password in {@code CAIRN_PGWIRE_PASSWORD})
 * @param pgwirePort its port; key {@code pgwire.port} (6875, 0 = disabled)
 * @param pgwireMaxConnections most concurrent pgwire sessions; key {@code pgwire.max-connections} (64)
 * @param limits the bounds on what clients can start (statement timeout, HTTP connections and timeouts)
 * @param group the group of nodes this node belongs to ({@link Group#NONE}: none, one process as on a laptop)
 */
public record CairnConfig(
    String storeUri,
    Map<String, String> storeProperties,
    int workers,
    int tickMaxRecords,
    Duration tickMaxDuration,
    String snapshotCron,
    ZoneId snapshotZone,
    int keepLast,
    int keepDailyDays,
    Duration gcGrace,
    String httpHost,
    int httpPort,
    double catchUpRateLimit,
    List<String> init,
    int httpMaxBodyBytes,
    io.cairn.engine.runtime.RestartStrategy sourceRestart,
    String pgwireHost,
    int pgwirePort,
    int pgwireMaxConnections,
    Limits limits,
    Group group) {

  /** The configuration without a group (one node alone). */
  public CairnConfig(String storeUri, Map<String, String> storeProperties, int workers, int tickMaxRecords, Duration tickMaxDuration,
      String snapshotCron, ZoneId snapshotZone, int keepLast, int keepDailyDays, Duration gcGrace, String httpHost, int httpPort,
      double catchUpRateLimit, List<String> init, int httpMaxBodyBytes, io.cairn.engine.runtime.RestartStrategy sourceRestart,
      String pgwireHost, int pgwirePort, int pgwireMaxConnections, Limits limits) {
    this(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast, keepDailyDays,
        gcGrace, httpHost, httpPort, catchUpRateLimit, init, httpMaxBodyBytes, sourceRestart, pgwireHost, pgwirePort,
        pgwireMaxConnections, limits, Group.NONE);
  }

  /**
   * A group of nodes on one store: every member is started with the same store and these settings;
   * the member Kafka's consumer-group protocol assigns the group's coordination partition owns the
   * store, the others stand by and take over when it dies or leaves.
   *
   * @param bootstrapServers the Kafka cluster the group meets on; key {@code group.bootstrap-servers}
   *     (empty: no group)
   * @param name the group; key {@code group.name} (empty: one derived from the store URI, so that
   *     nodes on one store form one group)
   * @param sessionTimeout how long a silent member stays a member; key {@code group.session-timeout}
   *     (6s, the broker's default minimum)
   * @param properties passed to the Kafka clients; keys {@code group.properties.*}
   * @param standbyRefresh how often a standby looks for a newer snapshot to load; key {@code
   *     standby.refresh-interval} (2s)
   * @param hotStandby whether a standby also reads, from each snapshot's offsets, the sources that
   *     allow shared reads (Kafka); key {@code standby.mode}: {@code warm} (the default) or {@code hot}
   */
  public record Group(String bootstrapServers, String name, Duration sessionTimeout, Map<String, String> properties,
      Duration standbyRefresh, boolean hotStandby) {
    /** How often a standby looks for a newer snapshot unless configured. */
    public static final Duration DEFAULT_STANDBY_REFRESH = Duration.ofSeconds(2);

    /** No group. */
    public static final Group NONE = new Group("", "", Duration.ofSeconds(6), Map.of());

    public Group {
      Objects.requireNonNull(bootstrapServers, "bootstrapServers");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(sessionTimeout, "sessionTimeout");
      Objects.requireNonNull(standbyRefresh, "standbyRefresh");
      properties = Map.copyOf(properties);
    }

    /** A group whose standbys look for a newer snapshot every {@link #DEFAULT_STANDBY_REFRESH}. */
    public Group(String bootstrapServers, String name, Duration sessionTimeout, Map<String, String> properties) {
      this(bootstrapServers, name, sessionTimeout, properties, DEFAULT_STANDBY_REFRESH, false);
    }

    /** Whether a group is configured. */
    public boolean enabled() {
      return !bootstrapServers.isBlank();
    }
  }

  /**
   * What a client can make the node do, bounded.
   *
   * @param statementTimeout a statement's time budget unless the session sets {@code statement_timeout};
   *     key {@code sql.statement-timeout} (30s; 0 = none)
   * @param httpMaxConnections HTTP connections open at once; key {@code http.max-connections} (1024)
   * @param httpRequestTimeout from a request's first byte to its last; key {@code http.request-timeout} (10s)
   * @param httpIdleTimeout an HTTP connection with no request in flight closes; key {@code http.idle-timeout} (30s)
   * @param httpSqlThreads HTTP requests running SQL or a snapshot at once; key {@code http.sql-threads} (8)
   * @param httpSqlQueue such requests waiting (more get 503); key {@code http.sql-queue} (64)
   * @param maxConcurrentStatements statements executing at once over HTTP and pgwire together; more
   *     wait their turn within their statement timeout; key {@code sql.max-concurrent-statements}
   *     (0, the default: as many as the machine has cores, at least 2)
   * @param subscribeMaxRows rows a {@code SUBSCRIBE} may leave untaken before it is ended (the
   *     subscriber fell behind); key {@code sql.subscribe-max-rows} (100000)
   * @param sinkMaxPendingRows rows a sink may hold that its destination lacks (a destination away
   *     while the view changes) before the sink fails; key {@code sinks.max-pending-rows} (1000000)
   */
  public record Limits(Duration statementTimeout, int httpMaxConnections, Duration httpRequestTimeout, Duration httpIdleTimeout,
      int httpSqlThreads, int httpSqlQueue, int maxConcurrentStatements, int subscribeMaxRows, long sinkMaxPendingRows) {
    public static final Limits DEFAULTS =
        new Limits(Duration.ofSeconds(30), 1024, Duration.ofSeconds(10), Duration.ofSeconds(30), 8, 64, 0, 100_000, 1_000_000);

    /** {@link #maxConcurrentStatements}, with 0 resolved to the machine's cores (at least 2). */
    public int statementSlots() {
      return maxConcurrentStatements > 0 ? maxConcurrentStatements : Math.max(2, Runtime.getRuntime().availableProcessors());
    }

    public Limits {
      Objects.requireNonNull(statementTimeout, "statementTimeout");
      Objects.requireNonNull(httpRequestTimeout, "httpRequestTimeout");
      Objects.requireNonNull(httpIdleTimeout, "httpIdleTimeout");
    }
  }

  /** The example the embedded default creates on an empty catalog. */
  public static final List<String> DEFAULT_INIT =
      List.of(
          "CREATE SOURCE orders FROM LOAD GENERATOR (keys = 100000, categories = 20, rate = 1000)",
          "CREATE MATERIALIZED VIEW revenue_by_category AS SELECT category, COUNT(*) AS orders, SUM(amount) AS revenue,"
              + " MIN(amount) AS smallest, MAX(amount) AS largest FROM orders GROUP BY category");

  /**
   * Every key's default, the one place they are written: {@link ConfigLoader} starts from these
   * (written back as text, durations in its one form), and the convenience constructors take what
   * they leave out from here. {@code storeUri} is as written ({@code file:./cairn-data}, resolved
   * against the working directory when loaded).
   */
  public static final CairnConfig DEFAULTS = new CairnConfig("file:./cairn-data", Map.of(), 2, 100_000, Duration.ofMillis(200),
      "0 0 0 * * ?", ZoneId.of("UTC"), 7, 30, Duration.ofHours(1), "127.0.0.1", 7077, 0, DEFAULT_INIT, 1 << 20,
      io.cairn.engine.runtime.RestartStrategy.DEFAULT, "127.0.0.1", 6875, 64, Limits.DEFAULTS);

  /** This configuration with {@code l} as its limits. */
  public CairnConfig withLimits(Limits l) {
    return new CairnConfig(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast,
        keepDailyDays, gcGrace, httpHost, httpPort, catchUpRateLimit, init, httpMaxBodyBytes, sourceRestart, pgwireHost, pgwirePort,
        pgwireMaxConnections, l, group);
  }

  /** This configuration in group {@code g}. */
  public CairnConfig withGroup(Group g) {
    return new CairnConfig(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast,
        keepDailyDays, gcGrace, httpHost, httpPort, catchUpRateLimit, init, httpMaxBodyBytes, sourceRestart, pgwireHost, pgwirePort,
        pgwireMaxConnections, limits, g);
  }

  /** A configuration with the default {@link Limits}. */
  public CairnConfig(String storeUri, Map<String, String> storeProperties, int workers, int tickMaxRecords,
      Duration tickMaxDuration, String snapshotCron, ZoneId snapshotZone, int keepLast, int keepDailyDays, Duration gcGrace,
      String httpHost, int httpPort, double catchUpRateLimit, List<String> init, int httpMaxBodyBytes,
      io.cairn.engine.runtime.RestartStrategy sourceRestart, String pgwireHost, int pgwirePort, int pgwireMaxConnections) {
    this(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast,
        keepDailyDays, gcGrace, httpHost, httpPort, catchUpRateLimit, init, httpMaxBodyBytes, sourceRestart, pgwireHost, pgwirePort,
        pgwireMaxConnections, Limits.DEFAULTS);
  }

  /**
   * A configuration with the pgwire listener disabled (port 0, not the default {@code
   * DEFAULTS.pgwirePort()}: programs that embed a node choose their ports), its other pgwire
   * settings the defaults.
   */
  public CairnConfig(String storeUri, Map<String, String> storeProperties, int workers, int tickMaxRecords,
      Duration tickMaxDuration, String snapshotCron, ZoneId snapshotZone, int keepLast, int keepDailyDays, Duration gcGrace,
      String httpHost, int httpPort, double catchUpRateLimit, List<String> init, int httpMaxBodyBytes,
      io.cairn.engine.runtime.RestartStrategy sourceRestart) {
    this(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast,
        keepDailyDays, gcGrace, httpHost, httpPort, catchUpRateLimit, init, httpMaxBodyBytes, sourceRestart, DEFAULTS.pgwireHost, 0,
        DEFAULTS.pgwireMaxConnections);
  }

  /** A configuration with the default HTTP body limit and source restart strategy, pgwire disabled. */
  public CairnConfig(String storeUri, Map<String, String> storeProperties, int workers, int tickMaxRecords,
      Duration tickMaxDuration, String snapshotCron, ZoneId snapshotZone, int keepLast, int keepDailyDays, Duration gcGrace,
      String httpHost, int httpPort, double catchUpRateLimit, List<String> init) {
    this(storeUri, storeProperties, workers, tickMaxRecords, tickMaxDuration, snapshotCron, snapshotZone, keepLast,
        keepDailyDays, gcGrace, httpHost, httpPort, catchUpRateLimit, init, DEFAULTS.httpMaxBodyBytes, DEFAULTS.sourceRestart);
  }

  public CairnConfig {
    Objects.requireNonNull(storeUri, "storeUri");
    Objects.requireNonNull(sourceRestart, "sourceRestart");
    storeProperties = Map.copyOf(storeProperties);
    init = List.copyOf(init);
    Objects.requireNonNull(pgwireHost, "pgwireHost");
    Objects.requireNonNull(limits, "limits");
  }
}
