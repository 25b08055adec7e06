package io.cairn.connectors.kafka;

import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.SourceDefinition;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The options of a {@code kafka} source, validated eagerly with messages naming the option.
 *
 * <table>
 *   <caption>Options</caption>
 *   <tr><th>key</th><th>meaning</th><th>default</th></tr>
 *   <tr><td>{@code brokers}</td><td>bootstrap servers, {@code host:port[,host:port]}</td><td>required</td></tr>
 *   <tr><td>{@code topic}</td><td>the topic read (all its partitions)</td><td>required</td></tr>
 *   <tr><td>{@code format}</td><td>value format; only {@code json}</td><td>{@code json}</td></tr>
 *   <tr><td>{@code bad-records}</td><td>{@code fail} (the source stops FAILED before the bad record,
 *       every record before it applied), {@code skip}, or {@code dead-letter} (skip after writing
 *       the record to {@code dead-letter-topic}, which it requires)</td><td>{@code fail}</td></tr>
 *   <tr><td>{@code dead-letter-topic}</td><td>with {@code dead-letter} or {@code skip}: topic receiving the
 *       raw bad records (one too large for it: its coordinates and as much of it as fits)</td><td>none</td></tr>
 *   <tr><td>{@code key-field}</td><td>a column filled from the record key (a JSON scalar, or the key's
 *       UTF-8 text when it is not JSON); with UPSERT and a single-column key it is that column</td><td>none</td></tr>
 *   <tr><td>{@code partition-discovery-interval-ms}</td><td>how often the topic's partition count is
 *       re-read; new partitions are read from their beginning</td><td>{@value #DEFAULT_DISCOVERY_MS}</td></tr>
 *   <tr><td>{@code request-timeout-ms}</td><td>bound on blocking metadata/offset calls</td><td>{@value #DEFAULT_REQUEST_TIMEOUT_MS}</td></tr>
 *   <tr><td>{@code properties.*}</td><td>Kafka client settings under their own names, e.g.
 *       {@code properties.security.protocol}</td><td></td></tr>
 * </table>
 *
 * <p>Any option value written as {@code SECRET 'NAME'} (or {@code SECRET NAME}) is a secret
 * reference, resolved through {@link Secrets} when the source opens. Kafka settings that hold
 * credentials ({@link #SECRET_PROPERTIES}) must be given that way.
 */
record KafkaSourceConfig(
    String sourceName,
    String brokers,
    String topic,
    BadRecordPolicy badRecords,
    Optional<String> deadLetterTopic,
    Optional<String> keyField,
    Duration discoveryInterval,
    Duration requestTimeout,
    Map<String, String> clientProperties) {

  static final String BROKERS = "brokers";
  static final String TOPIC = "topic";
  static final String FORMAT = "format";
  static final String BAD_RECORDS = "bad-records";
  static final String DEAD_LETTER_TOPIC = "dead-letter-topic";
  static final String KEY_FIELD = "key-field";
  static final String DISCOVERY_INTERVAL_MS = "partition-discovery-interval-ms";
  static final String REQUEST_TIMEOUT_MS = "request-timeout-ms";
  static final String PROPERTIES_PREFIX = "properties.";
  static final long DEFAULT_DISCOVERY_MS = 30_000;
  static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

  private static final Set<String> KNOWN =
      Set.of(BROKERS, TOPIC, FORMAT, BAD_RECORDS, DEAD_LETTER_TOPIC, KEY_FIELD, DISCOVERY_INTERVAL_MS, REQUEST_TIMEOUT_MS);

  /** Kafka client settings that carry credentials: accepted only as secret references. */
  static final Set<String> SECRET_PROPERTIES =
      Set.of(
          "sasl.jaas.config",
          "ssl.key.password",
          "ssl.keystore.password",
          "ssl.truststore.password",
          "ssl.keystore.key",
          "ssl.keystore.certificate.chain",
          "ssl.truststore.certificates",
          "sasl.oauthbearer.client.credentials.client.secret");

  /** Settings the source owns; a {@code properties.*} value for them would break replay. */
  private static final Set<String> RESERVED_PROPERTIES =
      Set.of(
          "bootstrap.servers",
          "key.deserializer",
          "value.deserializer",
          "enable.auto.commit",
          "auto.offset.reset",
          "group.id",
          "group.instance.id");

  /** A secret reference option value, {@code SECRET 'NAME'} ({@link Secrets#REFERENCE}). */
  private static final Pattern SECRET_REF = Secrets.REFERENCE;

  /** What to do with a record that cannot be decoded. */
  enum BadRecordPolicy {
    FAIL,
    SKIP,
    /** SKIP after writing the record to the dead-letter topic. */
    DEAD_LETTER
  }

  KafkaSourceConfig {
    Objects.requireNonNull(sourceName, "sourceName");
    Objects.requireNonNull(brokers, "brokers");
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(badRecords, "badRecords");
    Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
    Objects.requireNonNull(keyField, "keyField");
    Objects.requireNonNull(discoveryInterval, "discoveryInterval");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    clientProperties = Map.copyOf(clientProperties);
  }

  /** Names the client settings but never their values (they may hold resolved secrets). */
  @Override
  public String toString() {
    return "KafkaSourceConfig[source=" + sourceName + ", brokers=" + brokers + ", topic=" + topic + ", badRecords="
        + badRecords + ", deadLetterTopic=" + deadLetterTopic.orElse("-") + ", keyField=" + keyField.orElse("-")
        + ", discoveryInterval=" + discoveryInterval + ", requestTimeout=" + requestTimeout
        + ", clientProperties=" + new java.util.TreeSet<>(clientProperties.keySet()) + "]";
  }

  /** Parses and checks {@code def}'s options without resolving secrets (client values stay references). */
  static KafkaSourceConfig parse(SourceDefinition def) {
    return parse(def, null);
  }

  /**
   * Parses and checks {@code def}'s options; when {@code secrets} is non-null, secret references are
   * resolved (the result then holds secret values and must never be logged).
   */
  static KafkaSourceConfig parse(SourceDefinition def, Secrets secrets) {
    for (String key : def.options().keySet()) {
      if (!KNOWN.contains(key) && !key.startsWith(PROPERTIES_PREFIX)) {
        throw bad(def, key, "unknown option (known: " + String.join(", ", KNOWN.stream().sorted().toList())
            + ", properties.<kafka setting>)");
      }
    }
    String brokers = resolve(def, BROKERS, def.requireOption(BROKERS), secrets);
    String topic = def.requireOption(TOPIC).trim();
    if (!topic.matches("[A-Za-z0-9._-]{1,249}")) {
      throw bad(def, TOPIC, "'" + topic + "' is not a valid Kafka topic name");
    }
    String format = def.option(FORMAT, "json").trim().toLowerCase(Locale.ROOT);
    if (!format.equals("json")) {
      throw bad(def, FORMAT, "'" + format + "' is not supported (supported: json)");
    }
    BadRecordPolicy policy;
    String policyText = def.option(BAD_RECORDS, "fail").trim().toLowerCase(Locale.ROOT);
    switch (policyText) {
      case "fail" -> policy = BadRecordPolicy.FAIL;
      case "skip" -> policy = BadRecordPolicy.SKIP;
      case "dead-letter" -> policy = BadRecordPolicy.DEAD_LETTER;
      default -> throw bad(def, BAD_RECORDS, "'" + policyText + "' is not one of fail, skip, dead-letter");
    }
    Optional<String> dlt = Optional.ofNullable(def.options().get(DEAD_LETTER_TOPIC)).map(String::trim);
    if (policy == BadRecordPolicy.DEAD_LETTER && dlt.isEmpty()) {
      throw bad(def, BAD_RECORDS, "'dead-letter' requires option 'dead-letter-topic'");
    }
    if (dlt.isPresent()) {
      if (policy == BadRecordPolicy.FAIL) {
        throw bad(def, DEAD_LETTER_TOPIC, "requires bad-records = dead-letter (or skip)");
      }
      if (!dlt.get().matches("[A-Za-z0-9._-]{1,249}")) {
        throw bad(def, DEAD_LETTER_TOPIC, "'" + dlt.get() + "' is not a valid Kafka topic name");
      }
      if (dlt.get().equals(topic)) {
        throw bad(def, DEAD_LETTER_TOPIC, "must differ from the source topic '" + topic + "'");
      }
    }
    Optional<String> keyField = Optional.ofNullable(def.options().get(KEY_FIELD)).map(String::trim);
    if (keyField.isPresent() && !def.schema().columns().isEmpty() && def.schema().indexOf(keyField.get()) < 0) {
      throw bad(def, KEY_FIELD, "column '" + keyField.get() + "' is not in the schema (" + def.schema() + ")");
    }
    Duration discovery = Duration.ofMillis(positiveLong(def, DISCOVERY_INTERVAL_MS, DEFAULT_DISCOVERY_MS));
    Duration requestTimeout = Duration.ofMillis(positiveLong(def, REQUEST_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS));

    Map<String, String> props = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : def.options().entrySet()) {
      if (!e.getKey().startsWith(PROPERTIES_PREFIX)) {
        continue;
      }
      String name = e.getKey().substring(PROPERTIES_PREFIX.length());
      if (name.isEmpty()) {
        throw bad(def, e.getKey(), "a Kafka setting name must follow 'properties.'");
      }
      if (RESERVED_PROPERTIES.contains(name)) {
        throw bad(def, e.getKey(), "is set by the source itself (offsets are kept by cairn, not by consumer groups)");
      }
      boolean isRef = SECRET_REF.matcher(e.getValue()).matches();
      if (SECRET_PROPERTIES.contains(name) && !isRef) {
        throw bad(def, e.getKey(), "holds a credential: write it as SECRET 'ENV_VARIABLE', not as a literal");
      }
      props.put(name, resolve(def, e.getKey(), e.getValue(), secrets));
    }
    return new KafkaSourceConfig(
        def.name(), brokers.trim(), topic, policy, dlt, keyField, discovery, requestTimeout, props);
  }

  /** Checks the parts of a definition that concern schema and envelope. */
  static void checkShape(SourceDefinition def) {
    if (def.schema().columns().isEmpty()) {
      throw new IllegalArgumentException(
          "Cannot create source '" + def.name() + "': connector 'kafka' with FORMAT JSON needs a declared schema");
    }
    List<String> pk = def.primaryKey();
    for (String c : pk) {
      if (def.schema().indexOf(c) < 0) {
        throw new IllegalArgumentException(
            "Cannot create source '" + def.name() + "': primary key column '" + c + "' is not in the schema (" + def.schema() + ")");
      }
    }
    if (def.envelope() != Envelope.NONE && pk.isEmpty()) {
      throw new IllegalArgumentException(
          "Cannot create source '" + def.name() + "': ENVELOPE " + def.envelope() + " needs a PRIMARY KEY");
    }
  }

  private static String resolve(SourceDefinition def, String key, String value, Secrets secrets) {
    Matcher m = SECRET_REF.matcher(value);
    if (!m.matches()) {
      return value;
    }
    if (secrets == null) {
      return value;
    }
    try {
      String v = secrets.resolve(m.group(1));
      if (v == null) {
        throw new IllegalArgumentException("secret '" + m.group(1) + "' has no value");
      }
      return v;
    } catch (RuntimeException e) {
      // The message of Secrets.resolve names the reference, never a value.
      throw new IllegalArgumentException(
          "Cannot open source '" + def.name() + "': option '" + key + "': " + e.getMessage(), e);
    }
  }

  private static long positiveLong(SourceDefinition def, String key, long defaultValue) {
    String text = def.options().get(key);
    if (text == null) {
      return defaultValue;
    }
    try {
      long v = Long.parseLong(text.trim());
      if (v <= 0) {
        throw bad(def, key, "must be positive, got " + v);
      }
      return v;
    } catch (NumberFormatException e) {
      throw bad(def, key, "'" + text + "' is not a whole number of milliseconds");
    }
  }

  private static IllegalArgumentException bad(SourceDefinition def, String key, String why) {
    return new IllegalArgumentException("Cannot create source '" + def.name() + "': option '" + key + "' " + why);
  }
}
