package io.cairn.connectors.postgres;

import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.SourceDefinition;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * The options of a {@code postgres} source, validated eagerly (without connecting). Keys are
 * kebab-case; every error names the source and the key. {@code password} is a secret reference
 * ({@code SECRET 'NAME'}, see {@link Secrets}), resolved only when the source is opened.
 *
 * <table>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>host</td><td>required</td><td>server host</td></tr>
 *   <tr><td>port</td><td>5432</td><td>server port</td></tr>
 *   <tr><td>database</td><td>required</td><td>database name</td></tr>
 *   <tr><td>user</td><td>required</td><td>role with REPLICATION (or superuser)</td></tr>
 *   <tr><td>password</td><td>required</td><td>secret reference: {@code SECRET 'ENV_VAR'} in SQL and in options</td></tr>
 *   <tr><td>table</td><td>required</td><td>{@code schema.table} (or {@code table}: schema {@code public})</td></tr>
 *   <tr><td>slot</td><td>{@code cairn_<source>}</td><td>logical replication slot (pgoutput)</td></tr>
 *   <tr><td>publication</td><td>{@code cairn_<source>}</td><td>publication; created for the table when absent on first start</td></tr>
 *   <tr><td>slot-lost</td><td>fail</td><td>{@code fail} | {@code reload}: what to do when the slot or publication is gone on resume</td></tr>
 *   <tr><td>replica-identity</td><td>require-full</td><td>{@code require-full} | {@code set-full} | {@code any} (see {@link PostgresSource})</td></tr>
 *   <tr><td>queue-capacity</td><td>4096</td><td>records buffered between Debezium's thread and poll()</td></tr>
 *   <tr><td>heartbeat-interval-ms</td><td>1000</td><td>Debezium heartbeat; bounds the delay of an LSN confirmation on an idle table</td></tr>
 *   <tr><td>stats-interval-ms</td><td>1000</td><td>how often the load meter and head position are read from the server</td></tr>
 *   <tr><td>watermark-interval-ms</td><td>10000</td><td>how often, while someone asks whether the source is caught up,
 *       a caught-up watermark (a logical decoding message) is written to the WAL</td></tr>
 * </table>
 */
record PostgresSourceConfig(
    String sourceName,
    String host,
    int port,
    String database,
    String user,
    String passwordRef,
    String schemaName,
    String tableName,
    String slot,
    String publication,
    SlotLostPolicy slotLost,
    ReplicaIdentityPolicy replicaIdentity,
    int queueCapacity,
    Duration heartbeatInterval,
    Duration statsInterval,
    Duration watermarkInterval) {

  /** What to do when the replication slot or the publication is missing or invalidated on resume. */
  enum SlotLostPolicy {
    /** Refuse to start: the changes made while the slot was gone cannot be replayed. */
    FAIL,
    /** Drop what is left of the slot, create a new one and re-do the initial load of the table. */
    RELOAD
  }

  /** How unchanged TOAST values are made available (see {@link PostgresSource}). */
  enum ReplicaIdentityPolicy {
    REQUIRE_FULL,
    SET_FULL,
    ANY
  }

  static final Set<String> KEYS = Set.of("host", "port", "database", "user", "password", "table", "slot", "publication",
      "slot-lost", "replica-identity", "queue-capacity", "heartbeat-interval-ms", "stats-interval-ms",
      "watermark-interval-ms");

  private static final String IDENT = "[A-Za-z_][A-Za-z0-9_$]*";

  PostgresSourceConfig {
    Objects.requireNonNull(sourceName, "sourceName");
  }

  /** Parses and checks the options of {@code def}; throws {@link IllegalArgumentException} naming the key. */
  static PostgresSourceConfig from(SourceDefinition def) {
    String src = def.name();
    for (String key : def.options().keySet()) {
      if (!KEYS.contains(key)) {
        throw bad(src, key, "unknown option (known: " + String.join(", ", new java.util.TreeSet<>(KEYS)) + ")");
      }
    }
    String host = def.requireOption("host");
    int port = intOption(def, "port", 5432, 1, 65535);
    String database = def.requireOption("database");
    String user = def.requireOption("user");
    String passwordRef = Secrets.referenceName(def.requireOption("password"))
        .filter(n -> n.matches("[A-Za-z_][A-Za-z0-9_]*"))
        .orElseThrow(() -> bad(src, "password",
            "must be a secret reference (SECRET 'ENV_VAR_NAME'), not a value"));
    String table = def.requireOption("table");
    String[] parts = table.split("\\.", -1);
    String schemaName;
    String tableName;
    if (parts.length == 1) {
      schemaName = "public";
      tableName = parts[0];
    } else if (parts.length == 2) {
      schemaName = parts[0];
      tableName = parts[1];
    } else {
      throw bad(src, "table", "'" + table + "' is not 'schema.table'");
    }
    if (!schemaName.matches(IDENT) || !tableName.matches(IDENT)) {
      throw bad(src, "table", "'" + table + "' must be unquoted identifiers 'schema.table'");
    }
    schemaName = schemaName.toLowerCase(Locale.ROOT);
    tableName = tableName.toLowerCase(Locale.ROOT);
    String defaultName = "cairn_" + src.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9_]", "_");
    String slot = def.option("slot", defaultName);
    if (!slot.matches("[a-z0-9_]{1,63}")) {
      throw bad(src, "slot", "'" + slot + "' must be 1-63 characters of lower-case letters, digits and '_'");
    }
    String publication = def.option("publication", defaultName);
    if (!publication.matches(IDENT) || publication.length() > 63) {
      throw bad(src, "publication", "'" + publication + "' is not a valid identifier");
    }
    SlotLostPolicy slotLost = enumOption(def, "slot-lost", SlotLostPolicy.FAIL, SlotLostPolicy.class);
    ReplicaIdentityPolicy ri = enumOption(def, "replica-identity", ReplicaIdentityPolicy.REQUIRE_FULL, ReplicaIdentityPolicy.class);
    int queue = intOption(def, "queue-capacity", 4096, 1, 1 << 24);
    int heartbeat = intOption(def, "heartbeat-interval-ms", 1000, 10, 3_600_000);
    int stats = intOption(def, "stats-interval-ms", 1000, 10, 3_600_000);
    int watermark = intOption(def, "watermark-interval-ms", 10_000, 100, 3_600_000);
    return new PostgresSourceConfig(src, host, port, database, user, passwordRef, schemaName, tableName, slot,
        publication, slotLost, ri, queue, Duration.ofMillis(heartbeat), Duration.ofMillis(stats), Duration.ofMillis(watermark));
  }

  String qualifiedTable() {
    return schemaName + "." + tableName;
  }

  /** The table as a quoted SQL identifier, {@code "schema"."table"}. */
  String quotedTable() {
    return "\"" + schemaName + "\".\"" + tableName + "\"";
  }

  /** The server and database as messages name them, {@code host:port/database}. */
  String where() {
    return host + ":" + port + "/" + database;
  }

  String jdbcUrl() {
    return "jdbc:postgresql://" + host + ":" + port + "/" + database;
  }

  private static int intOption(SourceDefinition def, String key, int dflt, int min, int max) {
    String v = def.option(key, null);
    if (v == null) {
      return dflt;
    }
    try {
      int i = Integer.parseInt(v.trim());
      if (i < min || i > max) {
        throw bad(def.name(), key, "'" + v + "' is outside " + min + ".." + max);
      }
      return i;
    } catch (NumberFormatException e) {
      throw bad(def.name(), key, "'" + v + "' is not an integer");
    }
  }

  private static <E extends Enum<E>> E enumOption(SourceDefinition def, String key, E dflt, Class<E> type) {
    String v = def.option(key, null);
    if (v == null) {
      return dflt;
    }
    try {
      return Enum.valueOf(type, v.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      StringBuilder allowed = new StringBuilder();
      for (E c : type.getEnumConstants()) {
        allowed.append(allowed.length() == 0 ? "" : ", ").append(c.name().toLowerCase(Locale.ROOT).replace('_', '-'));
      }
      throw bad(def.name(), key, "'" + v + "' is not one of " + allowed);
    }
  }

  static IllegalArgumentException bad(String source, String key, String why) {
    return new IllegalArgumentException("Cannot create source '" + source + "': option '" + key + "' " + why);
  }
}
