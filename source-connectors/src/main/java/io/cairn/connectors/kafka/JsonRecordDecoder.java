package io.cairn.connectors.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.TextNode;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.source.Envelope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Turns a Kafka record's JSON key and value into a {@link Change} for one envelope.
 *
 * <p>Values: a JSON object whose fields are matched to the schema's columns by name (exact, then
 * case-insensitive); absent fields and JSON null are SQL NULL, extra fields are ignored. A Kafka
 * Connect {@code {"schema":…,"payload":…}} wrapper is removed first. Types: BIGINT takes integral
 * numbers; DOUBLE any number (and "NaN", "Infinity", "-Infinity"); BOOLEAN true/false; TEXT a
 * string, or the JSON text of any other value; TIMESTAMP an ISO-8601 string (UTC when it has no
 * offset) or a number of microseconds since the epoch — when a Connect schema names the field as
 * {@code io.debezium.time.Timestamp} / {@code org.apache.kafka.connect.data.Timestamp} (millis) or
 * {@code io.debezium.time.NanoTimestamp} (nanos) the number is scaled accordingly, and
 * {@code io.debezium.time.Date} / {@code org.apache.kafka.connect.data.Date} (days) becomes midnight
 * UTC; NUMERIC a number or a numeric string (exactly, within {@link io.cairn.engine.row.Numeric}'s
 * bounds); DATE an ISO-8601 date string ({@code 2024-03-31}; a date-time's UTC date) or a number of days
 * since 1970-01-01 (Debezium's and Connect's date); INTERVAL PostgreSQL's text ({@code "1 day 02:00:00"}) or ISO 8601
 * ({@code "P1DT2H"}), or a number of microseconds. A Connect {@code Decimal} (base64 unscaled bytes, the Debezium default for NUMERIC) is
 * decoded for BIGINT and DOUBLE columns when the schema wrapper gives its scale.
 *
 * <p>Keys (UPSERT, DEBEZIUM): the primary key columns are taken from the record key when it is a
 * JSON object holding them (or, for a single-column key, a JSON scalar or non-JSON UTF-8 text),
 * otherwise from the value. When both give the key they must agree.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Owns the mapping of one source's schema, primary key, envelope and key field to {@link
 *       Change}s, and what is derived from them once, at construction: the column types, the key
 *       columns' indices and the columns' names as ASCII bytes for the fast path. It holds no
 *       client, buffer or per-record state.
 *   <li>Threads: nothing changes after the constructor (final fields, arrays filled only there;
 *       the shared {@code ObjectMapper} is only read from), so calls never interfere. Each
 *       {@link KafkaSource} builds its own and calls it from its owner thread.
 *   <li>One meaning, two paths. The tree path ({@link #decodeTree}: a Jackson tree, the Connect
 *       wrapper removed, names matched exactly then case-insensitively) defines what a record
 *       means. The fast path ({@link FlatJson}, envelopes NONE and UPSERT without a key field)
 *       returns a {@code Change} only when the tree path would return the same one, and gives up
 *       (the tree path then decides) on anything else, errors included; both apply the same key
 *       rules. {@code JsonRecordDecoderTest} checks the fast path against the tree path.
 *   <li>Failures: a record that cannot be applied throws {@link BadRecordException} naming the
 *       column and what is wrong, or {@link ArithmeticException} for a timestamp outside the
 *       microsecond range; the source's bad-record policy decides what follows. Any other
 *       exception is a defect, not a bad record ({@link KafkaSource} reports it as an at-record
 *       error).
 * </ul>
 */
final class JsonRecordDecoder {
  /** What one record means: an append of {@code row}, or an upsert of {@code key} to {@code row} (null = delete). */
  record Change(boolean append, Row key, Row row) {
    static final Change NONE = new Change(false, null, null);

    static Change append(Row row) {
      return new Change(true, null, Objects.requireNonNull(row));
    }

    static Change upsert(Row key, Row rowOrNull) {
      return new Change(false, Objects.requireNonNull(key), rowOrNull);
    }

    boolean isNone() {
      return !append && key == null;
    }
  }

  /** How a Connect schema says a field is encoded (MICROS is the default: no hint). */
  private record Hint(Kind kind, int scale) {
    enum Kind {
      MICROS,
      MILLIS,
      NANOS,
      DAYS,
      DECIMAL
    }

    static final Hint MICROS = new Hint(Kind.MICROS, 0);
    static final Hint MILLIS = new Hint(Kind.MILLIS, 0);
    static final Hint NANOS = new Hint(Kind.NANOS, 0);
    static final Hint DAYS = new Hint(Kind.DAYS, 0);
  }

  private static final ObjectMapper MAPPER =
      new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private final Schema schema;
  private final Envelope envelope;
  private final int[] pkIndex;
  private final List<String> primaryKey;
  private final int keyFieldIndex;
  /** The columns' names as ASCII bytes for the fast path ({@link FlatJson}), null when one is not ASCII. */
  private final byte[][] columnNames;
  /** The primary-key columns' names (in key order) as ASCII bytes, likewise. */
  private final byte[][] keyNames;
  private final Type[] types;
  private final Type[] keyTypes;
  /** Per column, the fast path's reused strings of a TEXT column (null for other columns). */
  private final TextCache[] texts;
  private final TextCache[] keyTexts;

  JsonRecordDecoder(Schema schema, List<String> primaryKey, Envelope envelope, Optional<String> keyField) {
    this.schema = schema;
    this.envelope = envelope;
    this.primaryKey = List.copyOf(primaryKey);
    this.pkIndex = primaryKey.stream().mapToInt(schema::indexOf).toArray();
    this.keyFieldIndex = keyField.map(schema::indexOf).orElse(-1);
    this.types = new Type[schema.size()];
    String[] names = new String[types.length];
    for (int i = 0; i < types.length; i++) {
      types[i] = schema.type(i);
      names[i] = schema.column(i).name();
    }
    this.columnNames = FlatJson.names(names);
    this.texts = textCaches(types);
    this.keyTypes = new Type[pkIndex.length];
    String[] keyColumns = new String[pkIndex.length];
    for (int i = 0; i < pkIndex.length; i++) {
      keyTypes[i] = schema.type(pkIndex[i]);
      keyColumns[i] = names[pkIndex[i]];
    }
    this.keyNames = FlatJson.names(keyColumns);
    this.keyTexts = textCaches(keyTypes);
  }

  /**
   * Decodes one record; throws {@link BadRecordException} saying what is wrong.
   *
   * <p>The common case — a flat JSON object whose fields have exactly the columns' names and
   * plainly the columns' types, no Connect wrapper, no key field — is read straight from its
   * bytes without building a tree ({@link FlatJson}). Anything else, every error included, goes through the
   * tree path below, which defines the semantics: the fast path gives up (returns null) rather
   * than decide anything the tree path might decide differently.
   */
  Change decode(byte[] keyBytes, byte[] valueBytes) {
    if (keyFieldIndex < 0 && envelope != Envelope.DEBEZIUM) {
      Change c = envelope == Envelope.UPSERT ? fastUpsert(keyBytes, valueBytes) : fastAppend(keyBytes, valueBytes);
      if (c != null) {
        return c;
      }
    }
    return decodeTree(keyBytes, valueBytes);
  }

  /** The tree path alone: the reference the fast path is tested against. */
  Change decodeTree(byte[] keyBytes, byte[] valueBytes) {
    JsonNode key = keyBytes == null ? null : parseKey(keyBytes);
    return switch (envelope) {
      case NONE -> decodeAppend(key, valueBytes);
      case UPSERT -> decodeUpsert(key, valueBytes);
      case DEBEZIUM -> decodeDebezium(key, valueBytes);
    };
  }

  /** A {@link TextCache} for each TEXT column, or null when there is none. */
  private static TextCache[] textCaches(Type[] types) {
    TextCache[] out = new TextCache[types.length];
    boolean any = false;
    for (int i = 0; i < types.length; i++) {
      if (types[i] == Type.TEXT) {
        out[i] = new TextCache();
        any = true;
      }
    }
    return any ? out : null;
  }

  private Change fastAppend(byte[] keyBytes, byte[] valueBytes) {
    if (valueBytes == null) {
      return null;
    }
    Object[] row = FlatJson.read(valueBytes, columnNames, types, texts);
    return row == null ? null : Change.append(Row.wrap(row));
  }

  private Change fastUpsert(byte[] keyBytes, byte[] valueBytes) {
    Row key = null;
    if (keyBytes != null) {
      Object[] k = FlatJson.read(keyBytes, keyNames, keyTypes, keyTexts);
      if (k == null) {
        return null;
      }
      for (Object v : k) {
        if (v == null) {
          return null; // the tree path takes the key from the value then
        }
      }
      key = Row.wrap(k);
    }
    if (valueBytes == null) {
      return key == null ? null : Change.upsert(key, null);
    }
    Object[] row = FlatJson.read(valueBytes, columnNames, types, texts);
    return row == null ? null : withKey(key, Row.wrap(row));
  }

  private Change decodeAppend(JsonNode key, byte[] valueBytes) {
    if (valueBytes == null) {
      throw new BadRecordException("the value is null, which an append-only source (ENVELOPE NONE) cannot apply");
    }
    Unwrapped v = unwrap(parse(valueBytes, "value"));
    return Change.append(toRow(v.payload, v.schema, key, "value"));
  }

  private Change decodeUpsert(JsonNode key, byte[] valueBytes) {
    Row k = keyFromRecordKey(key);
    if (valueBytes == null) {
      if (k == null) {
        throw new BadRecordException("a tombstone (null value) needs a record key holding the primary key " + primaryKey);
      }
      return Change.upsert(k, null);
    }
    Unwrapped v = unwrap(parse(valueBytes, "value"));
    return withKey(k, toRow(v.payload, v.schema, key, "value"));
  }

  private Change decodeDebezium(JsonNode key, byte[] valueBytes) {
    Row k = keyFromRecordKey(key);
    if (valueBytes == null) {
      // The tombstone Debezium writes after a delete (kept by log compaction): delete by key.
      if (k == null) {
        throw new BadRecordException("a tombstone (null value) needs a record key holding the primary key " + primaryKey);
      }
      return Change.upsert(k, null);
    }
    Unwrapped v = unwrap(parse(valueBytes, "value"));
    if (!v.payload.isObject()) {
      throw new BadRecordException("the value is a JSON " + kind(v.payload) + ", not a Debezium change event object");
    }
    JsonNode opNode = v.payload.get("op");
    if (opNode == null || !opNode.isTextual()) {
      throw new BadRecordException("the value is not a Debezium change event: it has no text field 'op'");
    }
    String op = opNode.asText();
    switch (op) {
      case "c", "r", "u" -> {
        JsonNode after = v.payload.get("after");
        if (after == null || !after.isObject()) {
          throw new BadRecordException("Debezium event with op '" + op + "' has no 'after' object");
        }
        return withKey(k, toRow(after, fieldSchema(v.schema, "after"), key, "after"));
      }
      case "d" -> {
        if (k != null) {
          return Change.upsert(k, null);
        }
        JsonNode before = v.payload.get("before");
        if (before == null || !before.isObject()) {
          throw new BadRecordException("Debezium delete has neither a record key nor a 'before' object holding the primary key " + primaryKey);
        }
        Row b = toRow(before, fieldSchema(v.schema, "before"), key, "before");
        return Change.upsert(requireKey(b.select(pkIndex), "'before'"), null);
      }
      case "m" -> {
        return Change.NONE; // logical decoding message: not a row change
      }
      case "t" -> throw new BadRecordException("Debezium truncate event (op 't') cannot be applied by primary key");
      default -> throw new BadRecordException("Debezium event has unknown op '" + op + "' (expected c, r, u, d)");
    }
  }

  private Change withKey(Row recordKey, Row row) {
    if (recordKey == null) {
      return Change.upsert(requireKey(row.select(pkIndex), "the record key or the value"), row);
    }
    Object[] filled = null; // a copy of the value's columns, made only when the key fills one in
    for (int i = 0; i < pkIndex.length; i++) {
      Object kv = recordKey.get(i);
      Object vv = row.get(pkIndex[i]);
      if (vv == null) {
        if (filled == null) {
          filled = row.toArray();
        }
        filled[pkIndex[i]] = kv;
      } else if (Row.compareValues(kv, vv) != 0) {
        throw new BadRecordException(
            "the record key and the value disagree on primary key column '" + primaryKey.get(i) + "'");
      }
    }
    return Change.upsert(recordKey, filled == null ? row : Row.wrap(filled));
  }

  private Row requireKey(Row key, String where) {
    for (int i = 0; i < key.size(); i++) {
      if (key.isNull(i)) {
        throw new BadRecordException(
            "missing key: primary key column '" + primaryKey.get(i) + "' is absent or null in " + where);
      }
    }
    return key;
  }

  /** The primary key from the record key, or null when the record key does not hold it. */
  private Row keyFromRecordKey(JsonNode key) {
    if (key == null || key.isNull()) {
      return null;
    }
    JsonNode k = unwrap(key).payload;
    if (k.isObject()) {
      Object[] out = new Object[pkIndex.length];
      Map<String, JsonNode> lower = null;
      for (int i = 0; i < pkIndex.length; i++) {
        String name = schema.column(pkIndex[i]).name();
        JsonNode f = k.get(name);
        if (f == null) {
          if (lower == null) {
            lower = lowerCaseFields(k);
          }
          f = lower.get(name);
        }
        if (f == null || f.isNull()) {
          return null;
        }
        out[i] = convert(f, schema.column(pkIndex[i]), Hint.MICROS, "key");
      }
      return Row.wrap(out);
    }
    if (pkIndex.length == 1 && !k.isContainerNode()) {
      return Row.of(convert(k, schema.column(pkIndex[0]), Hint.MICROS, "key"));
    }
    return null;
  }

  private Row toRow(JsonNode obj, JsonNode connectSchema, JsonNode key, String what) {
    if (!obj.isObject()) {
      throw new BadRecordException("the " + what + " is a JSON " + kind(obj) + ", not an object");
    }
    Map<String, Hint> hints = hints(connectSchema);
    Object[] values = new Object[schema.size()];
    Map<String, JsonNode> lower = null;
    for (int i = 0; i < values.length; i++) {
      String name = schema.column(i).name();
      JsonNode f = obj.get(name);
      if (f == null) {
        if (lower == null) {
          lower = lowerCaseFields(obj);
        }
        f = lower.get(name);
      }
      if (f != null) {
        values[i] = convert(f, schema.column(i), hints.getOrDefault(name, Hint.MICROS), what);
      }
    }
    if (keyFieldIndex >= 0 && key != null && !key.isNull()) {
      JsonNode k = unwrap(key).payload;
      values[keyFieldIndex] = convert(k, schema.column(keyFieldIndex), Hint.MICROS, "key");
    }
    return Row.wrap(values);
  }

  private static Object convert(JsonNode f, io.cairn.engine.row.Column col, Hint hint, String where) {
    Type type = col.type();
    String column = col.name();
    if (hint.kind() == Hint.Kind.DECIMAL && f.isTextual() && type.isNumeric()) {
      f = decodeDecimal(f.textValue(), hint.scale(), column, where);
    }
    if (f.isNull() || type == Type.NULL) {
      return null;
    }
    switch (type) {
      case BIGINT -> {
        if (f.isIntegralNumber() && f.canConvertToLong()) {
          return f.longValue();
        }
        if (f.isNumber() && f.canConvertToExactIntegral() && f.canConvertToLong()) {
          return f.longValue();
        }
        throw wrongType(column, type, f, where);
      }
      case DOUBLE -> {
        if (f.isNumber()) {
          return f.doubleValue();
        }
        if (f.isTextual()) {
          switch (f.textValue()) {
            case "NaN":
              return Double.NaN;
            case "Infinity":
              return Double.POSITIVE_INFINITY;
            case "-Infinity":
              return Double.NEGATIVE_INFINITY;
            default:
              break;
          }
        }
        throw wrongType(column, type, f, where);
      }
      case BOOLEAN -> {
        if (f.isBoolean()) {
          return f.booleanValue();
        }
        throw wrongType(column, type, f, where);
      }
      case TEXT -> {
        return f.isTextual() ? f.textValue() : f.toString();
      }
      case TIMESTAMP -> {
        if (f.isIntegralNumber() && f.canConvertToLong()) {
          long n = f.longValue();
          return switch (hint.kind()) {
            case MILLIS -> Math.multiplyExact(n, 1000L);
            case NANOS -> Math.floorDiv(n, 1000L);
            case DAYS -> Math.multiplyExact(n, 86_400_000_000L);
            default -> n;
          };
        }
        if (f.isTextual()) {
          return parseTimestamp(f.textValue(), column, where);
        }
        throw wrongType(column, type, f, where);
      }
      case NUMERIC -> {
        try {
          if (f.isNumber()) {
            // a JSON float is parsed as a double first (Jackson's default), whose shortest text is the
            // number written for up to 15 significant digits; an integer or a string keeps every digit
            return io.cairn.engine.row.Numeric.fit(f.isIntegralNumber() ? new java.math.BigDecimal(f.bigIntegerValue()) : f.decimalValue(), col);
          }
          if (f.isTextual()) {
            return io.cairn.engine.row.Numeric.fit(new java.math.BigDecimal(f.textValue().strip()), col);
          }
        } catch (NumberFormatException | ArithmeticException e) {
          throw new BadRecordException("column '" + column + "' is NUMERIC but the " + where + " holds " + f + ", which is not one"
              + (e instanceof ArithmeticException ? " (" + e.getMessage() + ")" : ""));
        }
        throw wrongType(column, type, f, where);
      }
      case INTERVAL -> {
        if (f.isTextual()) {
          try {
            return io.cairn.engine.row.Interval.parse(f.textValue());
          } catch (IllegalArgumentException e) {
            throw new BadRecordException("column '" + column + "' is INTERVAL but the " + where + " holds a string that is not one: "
                + e.getMessage());
          }
        }
        if (f.isIntegralNumber() && f.canConvertToLong()) {
          return new io.cairn.engine.row.Interval(0, 0, f.longValue()); // microseconds, as Debezium's numeric intervals
        }
        throw wrongType(column, type, f, where);
      }
      case DATE -> {
        if (f.isIntegralNumber() && f.canConvertToLong()) {
          long n = f.longValue();
          return switch (hint.kind()) {
            case MILLIS -> Math.floorDiv(n, 86_400_000L);
            case NANOS -> Math.floorDiv(n, 86_400_000_000_000L);
            case DAYS -> n;
            default -> n; // a number is days since 1970-01-01, as Debezium and Kafka Connect send a date
          };
        }
        if (f.isTextual()) {
          return parseDate(f.textValue(), column, where);
        }
        throw wrongType(column, type, f, where);
      }
      default -> throw new IllegalStateException("unreachable: " + type);
    }
  }

  /** Days since 1970-01-01 of an ISO date ({@code 2024-03-31}); a date-time's date part (UTC) is accepted too. */
  private static long parseDate(String text, String column, String where) {
    try {
      return java.time.LocalDate.parse(text).toEpochDay();
    } catch (DateTimeParseException notADate) {
      try {
        return Math.floorDiv(parseTimestamp(text, column, where), Type.MICROS_PER_DAY);
      } catch (BadRecordException e) {
        throw new BadRecordException("column '" + column + "' is DATE but the " + where + " holds a string that is not an ISO-8601 date");
      }
    }
  }

  private static long parseTimestamp(String text, String column, String where) {
    try {
      OffsetDateTime t;
      try {
        t = OffsetDateTime.parse(text);
      } catch (DateTimeParseException e) {
        t = LocalDateTime.parse(text.replace(' ', 'T')).atOffset(ZoneOffset.UTC);
      }
      return ChronoUnit.MICROS.between(java.time.Instant.EPOCH, t.toInstant());
    } catch (DateTimeParseException | ArithmeticException e) {
      throw new BadRecordException(
          "column '" + column + "' is TIMESTAMP but the " + where + " holds a string that is not an ISO-8601 date-time");
    }
  }

  private static BadRecordException wrongType(String column, Type type, JsonNode f, String where) {
    return new BadRecordException("column '" + column + "' is " + type + " but the " + where + " holds a JSON " + kind(f));
  }

  private static String kind(JsonNode n) {
    if (n.isIntegralNumber()) {
      return "integer";
    }
    if (n.isNumber()) {
      return "fractional number";
    }
    if (n.isTextual()) {
      return "string";
    }
    if (n.isBoolean()) {
      return "boolean";
    }
    if (n.isArray()) {
      return "array";
    }
    if (n.isObject()) {
      return "object";
    }
    return n.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
  }

  private static Map<String, JsonNode> lowerCaseFields(JsonNode obj) {
    Map<String, JsonNode> m = new HashMap<>();
    Iterator<Map.Entry<String, JsonNode>> it = obj.fields();
    while (it.hasNext()) {
      Map.Entry<String, JsonNode> e = it.next();
      m.putIfAbsent(e.getKey().toLowerCase(java.util.Locale.ROOT), e.getValue());
    }
    return m;
  }

  private record Unwrapped(JsonNode payload, JsonNode schema) {}

  /** Removes a Kafka Connect JsonConverter {@code {"schema":…,"payload":…}} wrapper, if present. */
  private static Unwrapped unwrap(JsonNode n) {
    if (n.isObject() && n.size() == 2 && n.has("schema") && n.has("payload")) {
      JsonNode s = n.get("schema");
      if (s.isObject() || s.isNull()) {
        return new Unwrapped(n.get("payload"), s.isObject() ? s : null);
      }
    }
    return new Unwrapped(n, null);
  }

  /** The Connect schema of struct field {@code name} of {@code structSchema}, or null. */
  private static JsonNode fieldSchema(JsonNode structSchema, String name) {
    if (structSchema == null) {
      return null;
    }
    JsonNode fields = structSchema.get("fields");
    if (fields != null && fields.isArray()) {
      for (JsonNode f : fields) {
        if (name.equals(f.path("field").asText(null))) {
          return f;
        }
      }
    }
    return null;
  }

  private static Map<String, Hint> hints(JsonNode structSchema) {
    if (structSchema == null) {
      return Map.of();
    }
    JsonNode fields = structSchema.get("fields");
    if (fields == null || !fields.isArray()) {
      return Map.of();
    }
    Map<String, Hint> m = new HashMap<>();
    for (JsonNode f : fields) {
      String field = f.path("field").asText(null);
      if (field == null) {
        continue;
      }
      String key = field.toLowerCase(java.util.Locale.ROOT);
      switch (f.path("name").asText("")) {
        case "io.debezium.time.Timestamp", "org.apache.kafka.connect.data.Timestamp" -> m.put(key, Hint.MILLIS);
        case "io.debezium.time.NanoTimestamp" -> m.put(key, Hint.NANOS);
        case "io.debezium.time.Date", "org.apache.kafka.connect.data.Date" -> m.put(key, Hint.DAYS);
        case "org.apache.kafka.connect.data.Decimal" -> {
          JsonNode scale = f.path("parameters").path("scale");
          if (!scale.isMissingNode()) {
            m.put(key, new Hint(Hint.Kind.DECIMAL, Integer.parseInt(scale.asText("0"))));
          }
        }
        default -> {}
      }
    }
    return m;
  }

  /** A Connect Decimal: base64 of the big-endian two's-complement unscaled value. */
  private static JsonNode decodeDecimal(String base64, int scale, String column, String where) {
    try {
      byte[] unscaled = java.util.Base64.getDecoder().decode(base64);
      if (unscaled.length == 0) {
        throw new IllegalArgumentException("empty");
      }
      return com.fasterxml.jackson.databind.node.DecimalNode.valueOf(
          new java.math.BigDecimal(new java.math.BigInteger(unscaled), scale));
    } catch (IllegalArgumentException e) {
      throw new BadRecordException("column '" + column + "' is a Connect Decimal but the " + where + " does not hold base64 bytes");
    }
  }

  private static JsonNode parse(byte[] bytes, String what) {
    try {
      JsonNode n = MAPPER.readTree(bytes);
      if (n == null || n.isMissingNode()) {
        throw new BadRecordException("the " + what + " is empty, not JSON");
      }
      return n;
    } catch (JsonProcessingException e) {
      throw new BadRecordException("the " + what + " is not valid JSON (" + e.getOriginalMessage() + ")");
    } catch (IOException e) {
      throw new BadRecordException("the " + what + " cannot be read as JSON (" + e.getMessage() + ")");
    }
  }

  /** A key that is not JSON (e.g. from a StringSerializer) is taken as its UTF-8 text. */
  private static JsonNode parseKey(byte[] bytes) {
    try {
      JsonNode n = MAPPER.readTree(bytes);
      if (n != null && !n.isMissingNode()) {
        return n;
      }
    } catch (IOException e) {
      // not JSON: use the text
    }
    return TextNode.valueOf(new String(bytes, StandardCharsets.UTF_8));
  }
}
