package io.cairn.node.config;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@link CairnConfig}: YAML (nested maps) flattened to dotted keys, then environment
 * overrides ({@code CAIRN_HTTP_PORT} overrides {@code http.port}; dots and dashes become
 * underscores), then validation. Unknown keys and bad values are errors naming the key.
 */
public final class ConfigLoader {
  /** Every key and its default as text, from {@link CairnConfig#DEFAULTS} (the one place defaults are written). */
  private static final Map<String, String> DEFAULTS = keys(CairnConfig.DEFAULTS);

  private static Map<String, String> keys(CairnConfig d) {
    Map<String, String> k = new LinkedHashMap<>();
    k.put("store.uri", d.storeUri());
    k.put("engine.workers", String.valueOf(d.workers()));
    k.put("engine.tick.max-records", String.valueOf(d.tickMaxRecords()));
    k.put("engine.tick.max-duration", formatDuration(d.tickMaxDuration()));
    k.put("snapshots.cron", d.snapshotCron());
    k.put("snapshots.zone", d.snapshotZone().getId());
    k.put("snapshots.retention.keep-last", String.valueOf(d.keepLast()));
    k.put("snapshots.retention.keep-daily-days", String.valueOf(d.keepDailyDays()));
    k.put("snapshots.retention.gc-grace", formatDuration(d.gcGrace()));
    k.put("http.host", d.httpHost());
    k.put("http.port", String.valueOf(d.httpPort()));
    k.put("http.max-body", String.valueOf(d.httpMaxBodyBytes()));
    k.put("http.max-connections", String.valueOf(d.limits().httpMaxConnections()));
    k.put("http.request-timeout", formatDuration(d.limits().httpRequestTimeout()));
    k.put("http.idle-timeout", formatDuration(d.limits().httpIdleTimeout()));
    k.put("http.sql-threads", String.valueOf(d.limits().httpSqlThreads()));
    k.put("http.sql-queue", String.valueOf(d.limits().httpSqlQueue()));
    k.put("sql.statement-timeout", formatDuration(d.limits().statementTimeout()));
    k.put("sql.max-concurrent-statements", String.valueOf(d.limits().maxConcurrentStatements()));
    k.put("sql.subscribe-max-rows", String.valueOf(d.limits().subscribeMaxRows()));
    k.put("sinks.max-pending-rows", String.valueOf(d.limits().sinkMaxPendingRows()));
    k.put("recovery.catch-up-rate-limit", decimalText(d.catchUpRateLimit()));
    k.put("pgwire.host", d.pgwireHost());
    k.put("pgwire.port", String.valueOf(d.pgwirePort()));
    k.put("pgwire.max-connections", String.valueOf(d.pgwireMaxConnections()));
    k.put("sources.restart.initial-backoff", formatDuration(d.sourceRestart().initialBackoff()));
    k.put("sources.restart.max-backoff", formatDuration(d.sourceRestart().maxBackoff()));
    k.put("sources.restart.multiplier", decimalText(d.sourceRestart().multiplier()));
    k.put("sources.restart.jitter", decimalText(d.sourceRestart().jitter()));
    k.put("sources.restart.max-attempts", String.valueOf(d.sourceRestart().maxAttempts()));
    k.put("group.bootstrap-servers", d.group().bootstrapServers());
    k.put("group.name", d.group().name());
    k.put("group.session-timeout", formatDuration(d.group().sessionTimeout()));
    k.put("standby.refresh-interval", formatDuration(d.group().standbyRefresh()));
    k.put("standby.mode", d.group().hotStandby() ? "hot" : "warm");
    return java.util.Collections.unmodifiableMap(k);
  }

  private static String decimalText(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.valueOf((long) v) : String.valueOf(v);
  }

  private ConfigLoader() {}

  /** Loads {@code file} (may be null: defaults only) with overrides from {@code env}. */
  public static CairnConfig load(Path file, Map<String, String> env) {
    Map<String, String> flat = new TreeMap<>(DEFAULTS);
    List<String> init = null;
    if (file != null) {
      if (!Files.isRegularFile(file)) {
        throw new ConfigException("Cannot read configuration: file " + file + " does not exist");
      }
      Object root;
      try {
        root = new ObjectMapper(new YAMLFactory()).readValue(file.toFile(), Object.class);
      } catch (IOException e) {
        throw new ConfigException("Cannot read configuration " + file + ": " + e.getMessage());
      }
      if (root != null && !(root instanceof Map)) {
        throw new ConfigException("Cannot read configuration " + file + ": the top level must be a mapping");
      }
      if (root != null) {
        Map<?, ?> m = new LinkedHashMap<>((Map<?, ?>) root);
        Object i = m.remove("init");
        if (i != null) {
          if (!(i instanceof List<?> l)) {
            throw new ConfigException("Bad configuration key 'init': expected a list of SQL statements");
          }
          init = new ArrayList<>();
          for (Object o : l) {
            init.add(String.valueOf(o));
          }
        }
        flatten("", m, flat);
      }
    }
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (!e.getKey().startsWith("CAIRN_")) {
        continue;
      }
      String envKey = e.getKey().substring(6);
      boolean matched = false;
      for (String key : new ArrayList<>(flat.keySet())) {
        if (envName(key).equals(envKey)) {
          flat.put(key, e.getValue());
          matched = true;
        }
      }
      if (!matched && !NOT_CONFIG.contains(e.getKey())) {
        throw new ConfigException("Unknown configuration variable '" + e.getKey() + "': it matches no configuration key "
            + "(CAIRN_ + the key upper-cased, dots and dashes as underscores, e.g. CAIRN_HTTP_PORT for http.port; store "
            + "properties can be overridden only when the configuration file sets them). Unset it, or name secrets "
            + "without the CAIRN_ prefix");
      }
    }
    return build(flat, init);
  }

  /** CAIRN_ variables that are not configuration: read by the launcher or the test harness. */
  private static final java.util.Set<String> NOT_CONFIG = java.util.Set.of("CAIRN_JAVA_OPTS", "CAIRN_LOG_LEVEL", "CAIRN_EXTRA_CLASSPATH",
      "CAIRN_CLASS_CACHE", "CAIRN_PG_BIN", "CAIRN_PGWIRE_PASSWORD");

  /**
   * The environment variable holding the pgwire password: when set, pgwire clients must
   * authenticate with it; a listener off loopback refuses to start without it. Read by the node
   * that serves, not here, so that client commands ({@code cairn sql}, {@code status}) need not have it.
   */
  public static final String PGWIRE_PASSWORD_ENV = "CAIRN_PGWIRE_PASSWORD";

  static String envName(String key) {
    return key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
  }

  private static void flatten(String prefix, Map<?, ?> m, Map<String, String> out) {
    for (Map.Entry<?, ?> e : m.entrySet()) {
      String key = prefix + e.getKey();
      if (e.getValue() instanceof Map<?, ?> sub) {
        flatten(key + ".", sub, out);
      } else if (e.getValue() instanceof List<?>) {
        throw new ConfigException("Bad configuration key '" + key + "': a list is not allowed here");
      } else {
        out.put(key, e.getValue() == null ? "" : String.valueOf(e.getValue()));
      }
    }
  }

  private static CairnConfig build(Map<String, String> flat, List<String> init) {
    Map<String, String> storeProps = new TreeMap<>();
    Map<String, String> groupProps = new TreeMap<>();
    for (String key : flat.keySet()) {
      if (key.startsWith("store.properties.")) {
        storeProps.put(key.substring("store.properties.".length()), flat.get(key));
      } else if (key.startsWith("group.properties.")) {
        groupProps.put(key.substring("group.properties.".length()), flat.get(key));
      } else if (!DEFAULTS.containsKey(key)) {
        throw new ConfigException("Unknown configuration key '" + key + "' (known: " + DEFAULTS.keySet() + ", store.properties.*, group.properties.*, init)");
      }
    }
    String uri = normalizeStoreUri(flat.get("store.uri").trim());
    int workers = integer(flat, "engine.workers", 1, 256);
    int maxRecords = integer(flat, "engine.tick.max-records", 1, Integer.MAX_VALUE);
    Duration maxDuration = duration(flat, "engine.tick.max-duration");
    String cron = flat.get("snapshots.cron").trim();
    try {
      io.cairn.snapshotter.SnapshotSchedule.validate(cron); // the schedule's own parser, before any recovery work
    } catch (IllegalArgumentException e) {
      throw new ConfigException("Bad configuration key " + e.getMessage());
    }
    ZoneId zone;
    try {
      zone = ZoneId.of(flat.get("snapshots.zone").trim());
    } catch (RuntimeException e) {
      throw new ConfigException("Bad configuration key 'snapshots.zone': unknown time zone '" + flat.get("snapshots.zone") + "'");
    }
    try {
      io.cairn.snapshotter.SnapshotSchedule.validateFires(cron, zone, java.time.Clock.systemUTC()); // a schedule that never fires
    } catch (IllegalArgumentException e) {
      throw new ConfigException("Bad configuration key " + e.getMessage());
    }
    int keepLast = integer(flat, "snapshots.retention.keep-last", 1, 100_000);
    int keepDaily = integer(flat, "snapshots.retention.keep-daily-days", 0, 100_000);
    Duration grace = duration(flat, "snapshots.retention.gc-grace");
    String host = flat.get("http.host").trim();
    int port = integer(flat, "http.port", 0, 65535);
    double rate;
    try {
      rate = Double.parseDouble(flat.get("recovery.catch-up-rate-limit").trim());
    } catch (NumberFormatException e) {
      throw new ConfigException("Bad configuration key 'recovery.catch-up-rate-limit': '" + flat.get("recovery.catch-up-rate-limit") + "' is not a number");
    }
    if (rate < 0) {
      throw new ConfigException("Bad configuration key 'recovery.catch-up-rate-limit': must be >= 0");
    }
    io.cairn.engine.runtime.RestartStrategy restart;
    try {
      restart = new io.cairn.engine.runtime.RestartStrategy(
          duration(flat, "sources.restart.initial-backoff"),
          duration(flat, "sources.restart.max-backoff"),
          decimal(flat, "sources.restart.multiplier"),
          decimal(flat, "sources.restart.jitter"),
          integer(flat, "sources.restart.max-attempts", 0, Integer.MAX_VALUE));
    } catch (IllegalArgumentException e) {
      throw new ConfigException("Bad configuration keys 'sources.restart.*': " + e.getMessage());
    }
    host(flat, "http.host", "http.port");
    host(flat, "pgwire.host", "pgwire.port");
    if (init != null) {
      for (int i = 0; i < init.size(); i++) {
        try {
          io.cairn.engine.sql.SqlSession.checkSyntax(init.get(i));
        } catch (RuntimeException e) {
          throw new ConfigException("Bad configuration key 'init': statement " + (i + 1) + " of " + init.size() + " does not parse: "
              + e.getMessage());
        }
      }
    }
    return new CairnConfig(
        uri, storeProps, workers, maxRecords, maxDuration, cron, zone, keepLast, keepDaily, grace, host, port, rate,
        init == null ? CairnConfig.DEFAULT_INIT : init, integer(flat, "http.max-body", 1024, Integer.MAX_VALUE - 1), restart,
        flat.get("pgwire.host").trim(), integer(flat, "pgwire.port", 0, 65535), integer(flat, "pgwire.max-connections", 1, 10_000),
        new CairnConfig.Limits(duration(flat, "sql.statement-timeout"), integer(flat, "http.max-connections", 1, 1_000_000),
            positive(flat, "http.request-timeout"), positive(flat, "http.idle-timeout"), integer(flat, "http.sql-threads", 1, 1024),
            integer(flat, "http.sql-queue", 0, 100_000), integer(flat, "sql.max-concurrent-statements", 0, 10_000),
            integer(flat, "sql.subscribe-max-rows", 1, 100_000_000), integer(flat, "sinks.max-pending-rows", 1, 1_000_000_000)),
        group(flat, uri, groupProps));
  }

  /** The group settings: a name derived from the store when none is given, a session timeout of at least 1 s. */
  private static CairnConfig.Group group(Map<String, String> flat, String storeUri, Map<String, String> props) {
    String servers = flat.get("group.bootstrap-servers").trim();
    String name = flat.get("group.name").trim();
    Duration session = positive(flat, "group.session-timeout");
    Duration refresh = positive(flat, "standby.refresh-interval");
    if (servers.isEmpty()) {
      return CairnConfig.Group.NONE;
    }
    if (session.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new ConfigException("Bad configuration key 'group.session-timeout': " + formatDuration(session)
          + " is less than 1s (Kafka brokers refuse less than 6s unless group.min.session.timeout.ms is lowered)");
    }
    if (name.isEmpty()) {
      name = "store-" + java.util.HexFormat.of().formatHex(sha256(storeUri)).substring(0, 16);
    } else if (!name.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new ConfigException("Bad configuration key 'group.name': '" + name + "' is not 1 to 200 letters, digits, '.', '_' or '-'");
    }
    if (refresh.compareTo(Duration.ofMillis(100)) < 0) {
      throw new ConfigException("Bad configuration key 'standby.refresh-interval': " + formatDuration(refresh)
          + " is less than 100ms (each round lists the store's snapshots)");
    }
    String mode = flat.get("standby.mode").trim().toLowerCase(java.util.Locale.ROOT);
    if (!mode.equals("warm") && !mode.equals("hot")) {
      throw new ConfigException("Bad configuration key 'standby.mode': '" + flat.get("standby.mode")
          + "' is not warm (load each snapshot the owner commits) or hot (also read Kafka sources from its offsets)");
    }
    return new CairnConfig.Group(servers, name, session, props, refresh, mode.equals("hot"));
  }

  private static byte[] sha256(String s) {
    try {
      return java.security.MessageDigest.getInstance("SHA-256").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Duration positive(Map<String, String> flat, String key) {
    Duration d = duration(flat, key);
    if (d.isZero() || d.isNegative()) {
      throw new ConfigException("Bad configuration key '" + key + "': must be more than 0");
    }
    return d;
  }

  /** A listener's address must resolve (when its port is on): a node must not find out only when it starts to serve. */
  private static void host(Map<String, String> flat, String key, String portKey) {
    String h = flat.get(key).trim();
    if (h.isEmpty()) {
      throw new ConfigException("Bad configuration key '" + key + "': it is empty");
    }
    if (integer(flat, portKey, 0, 65535) == 0) {
      return;
    }
    try {
      java.net.InetAddress.getByName(h);
    } catch (java.net.UnknownHostException e) {
      throw new ConfigException("Bad configuration key '" + key + "': unknown host '" + h + "'");
    }
  }

  private static double decimal(Map<String, String> flat, String key) {
    try {
      return Double.parseDouble(flat.get(key).trim());
    } catch (NumberFormatException e) {
      throw new ConfigException("Bad configuration key '" + key + "': '" + flat.get(key) + "' is not a number");
    }
  }

  /**
   * Checks the store URI and makes a local one absolute: {@code file:///abs/path}, {@code
   * file:/abs/path}, {@code file:relative/path} (resolved against the working directory) become
   * {@code file:///absolute/path?create=true}; {@code s3://bucket[/prefix][?...]} and {@code
   * memory:...} are kept. Anything else — a value without one of these schemes, which earlier
   * builds took as a relative directory ("not a uri at all" became a folder of that name) — is
   * an error naming the key, before anything touches a store.
   */
  static String normalizeStoreUri(String uri) {
    if (uri.isEmpty()) {
      throw new ConfigException("Bad configuration key 'store.uri': it is empty");
    }
    String forms = "use file:///absolute/path, file:relative/path, s3://bucket/prefix or memory:name";
    if (uri.chars().anyMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c))) {
      throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a URI (it contains white space; "
          + "percent-encode it as %20): " + forms);
    }
    if (uri.startsWith("s3://")) {
      java.net.URI u;
      try {
        u = new java.net.URI(uri);
      } catch (java.net.URISyntaxException e) {
        throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a URI: " + e.getMessage());
      }
      if (u.getHost() == null && (u.getAuthority() == null || u.getAuthority().isEmpty())) {
        throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' names no bucket: " + forms);
      }
      return uri;
    }
    if (uri.startsWith("memory:")) {
      return uri;
    }
    if (!uri.startsWith("file:")) {
      throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a store URI (file:, s3:// or memory:): "
          + forms);
    }
    if (uri.startsWith("file://")) {
      try {
        java.net.URI u = new java.net.URI(uri);
        if (u.getPath() == null || u.getPath().isEmpty()) {
          throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' names no directory: " + forms);
        }
      } catch (java.net.URISyntaxException e) {
        throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a URI: " + e.getMessage());
      }
      return uri.contains("?") ? uri : uri + "?create=true"; // the node creates its local store directory
    }
    String path = uri.substring(5);
    if (path.isEmpty() || path.contains("://") || path.contains("?")) {
      throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a local store URI: " + forms);
    }
    try {
      return Path.of(path).toAbsolutePath().normalize().toUri().toString().replaceFirst("^file:/+", "file:///") + "?create=true";
    } catch (java.nio.file.InvalidPathException e) {
      throw new ConfigException("Bad configuration key 'store.uri': '" + uri + "' is not a valid path: " + e.getMessage());
    }
  }

  private static int integer(Map<String, String> flat, String key, int min, int max) {
    String v = flat.get(key).trim();
    long n;
    try {
      n = Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new ConfigException("Bad configuration key '" + key + "': '" + v + "' is not an integer");
    }
    if (n < min || n > max) {
      throw new ConfigException("Bad configuration key '" + key + "': " + n + " is outside [" + min + ", " + max + "]");
    }
    return (int) n;
  }

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  /**
   * Parses a duration, written one way everywhere in the configuration (and {@code --timeout}): a
   * whole number and a unit, {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}, with
   * nothing between them ({@code 200ms}, {@code 30s}, {@code 5m}, {@code 1h}, {@code 2d}), or
   * {@code 0}. Anything else (ISO-8601 {@code PT1H}, {@code 5 s}, {@code 1.5h}) is an error naming
   * the key.
   */
  public static Duration parseDuration(String key, String text) {
    String v = text.trim().toLowerCase(Locale.ROOT);
    if (v.equals("0")) {
      return Duration.ZERO;
    }
    Matcher m = DURATION.matcher(v);
    if (!m.matches()) {
      throw new ConfigException("Bad configuration key '" + key + "': '" + text + "' is not a duration: write a whole number "
          + "and a unit (ms, s, m, h or d), e.g. 200ms, 30s, 5m, 1h, 2d, or 0");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new ConfigException("Bad configuration key '" + key + "': '" + text + "' is too long a duration");
    }
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /** {@code d} in the form {@link #parseDuration} reads, in the largest unit that holds it whole ({@code 1m}, not {@code 60s}). */
  public static String formatDuration(Duration d) {
    if (d.isNegative() || d.toNanosPart() % 1_000_000 != 0) {
      throw new IllegalArgumentException("Cannot write duration " + d + ": not a whole, non-negative number of milliseconds");
    }
    long ms = d.toMillis();
    if (ms == 0) {
      return "0";
    }
    long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1000L, 1L};
    String[] units = {"d", "h", "m", "s", "ms"};
    for (int i = 0; i < sizes.length; i++) {
      if (ms % sizes[i] == 0) {
        return (ms / sizes[i]) + units[i];
      }
    }
    throw new AssertionError(d);
  }

  private static Duration duration(Map<String, String> flat, String key) {
    return parseDuration(key, flat.get(key));
  }
}
