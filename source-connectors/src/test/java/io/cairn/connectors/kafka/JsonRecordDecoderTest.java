package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.connectors.kafka.JsonRecordDecoder.Change;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class JsonRecordDecoderTest {
  private static final Schema SCHEMA = Schema.parse("id BIGINT, name TEXT, amount DOUBLE, ok BOOLEAN, ts TIMESTAMP");

  private static byte[] b(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private static JsonRecordDecoder decoder(Envelope e) {
    return new JsonRecordDecoder(SCHEMA, e == Envelope.NONE ? List.of() : List.of("id"), e, Optional.empty());
  }

  @Test
  void appendMapsFieldsByNameWithTypesAndNulls() {
    Change c = decoder(Envelope.NONE).decode(null,
        b("{\"ID\":7,\"name\":\"x\",\"amount\":2,\"ok\":true,\"ts\":\"2026-01-02T03:04:05.123456Z\",\"extra\":[1]}"));
    assertThat(c.append()).isTrue();
    assertThat(c.row()).isEqualTo(Row.of(7L, "x", 2.0, true, 1767323045123456L));
    assertThat(decoder(Envelope.NONE).decode(null, b("{\"id\":1,\"name\":null}")).row())
        .isEqualTo(Row.of(1L, null, null, null, null));
  }

  @Test
  void timestampsAsNumbersAreMicrosUnlessTheConnectSchemaSaysOtherwise() {
    assertThat(decoder(Envelope.NONE).decode(null, b("{\"id\":1,\"ts\":1000}")).row().get(4)).isEqualTo(1000L);
    String wrapped = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"id\",\"type\":\"int64\"},"
        + "{\"field\":\"ts\",\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\"}]},"
        + "\"payload\":{\"id\":1,\"ts\":1000}}";
    assertThat(decoder(Envelope.NONE).decode(null, b(wrapped)).row()).isEqualTo(Row.of(1L, null, null, null, 1_000_000L));
    assertThat(decoder(Envelope.NONE).decode(null, b("{\"id\":1,\"ts\":\"2026-01-02 03:04:05\"}")).row().get(4))
        .isEqualTo(1767323045000000L);
  }

  @Test
  void connectDecimalsAndDatesAreDecodedWhenTheSchemaNamesThem() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, price DOUBLE, day TIMESTAMP"), List.of("id"),
        Envelope.DEBEZIUM, Optional.empty());
    String event = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"after\",\"type\":\"struct\",\"fields\":["
        + "{\"field\":\"id\",\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"0\"}},"
        + "{\"field\":\"price\",\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},"
        + "{\"field\":\"day\",\"type\":\"int32\",\"name\":\"io.debezium.time.Date\"}]}]},"
        + "\"payload\":{\"after\":{\"id\":\"Bw==\",\"price\":\"BNI=\",\"day\":1},\"op\":\"c\"}}";
    assertThat(d.decode(null, b(event))).isEqualTo(Change.upsert(Row.of(7L), Row.of(7L, 12.34, 86_400_000_000L)));
    assertThatThrownBy(() -> d.decode(null, b(event.replace("BNI=", "!!")))).hasMessageContaining("base64");
  }

  @Test
  void datesAreIsoTextOrDaysAndABadOneIsNamed() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, day DATE"), List.of("id"), Envelope.UPSERT, Optional.empty());
    assertThat(d.decode(null, b("{\"id\":1,\"day\":\"2024-02-29\"}")).row()).isEqualTo(Row.of(1L, 19_782L));
    assertThat(d.decode(null, b("{\"id\":1,\"day\":-1}")).row()).isEqualTo(Row.of(1L, -1L));
    assertThat(d.decode(null, b("{\"id\":1,\"day\":\"2024-02-29T23:59:59Z\"}")).row()).isEqualTo(Row.of(1L, 19_782L));
    assertThat(d.decode(null, b("{\"id\":1,\"day\":null}")).row()).isEqualTo(Row.of(1L, null));
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"day\":\"2024-02-30\"}")))
        .hasMessageContaining("column 'day' is DATE but the value holds a string that is not an ISO-8601 date");
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"day\":true}"))).hasMessageContaining("column 'day' is DATE");
  }

  @Test
  void numericsAreExactFromNumbersAndStrings() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, price NUMERIC"), List.of("id"), Envelope.UPSERT, Optional.empty());
    assertThat(d.decode(null, b("{\"id\":1,\"price\":12.30}")).row()).isEqualTo(Row.of(1L, new java.math.BigDecimal("12.3")));
    assertThat(d.decode(null, b("{\"id\":1,\"price\":\"0.1\"}")).row()).isEqualTo(Row.of(1L, new java.math.BigDecimal("0.1")));
    assertThat(d.decode(null, b("{\"id\":1,\"price\":12345678901234567890}")).row())
        .isEqualTo(Row.of(1L, new java.math.BigDecimal("12345678901234567890")));
    assertThat(d.decode(null, b("{\"id\":1,\"price\":\"1.000000000000000000001\"}")).row()).isEqualTo(Row.of(1L, java.math.BigDecimal.ONE));
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"price\":\"abc\"}"))).hasMessageContaining("column 'price' is NUMERIC");
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"price\":\"1e30\"}"))).hasMessageContaining("numeric field overflow");
  }

  @Test
  void aDeclaredScaleRoundsAsPostgresStoresAndTooManyDigitsAreNamed() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, price NUMERIC(6, 2)"), List.of("id"), Envelope.UPSERT, Optional.empty());
    assertThat(d.decode(null, b("{\"id\":1,\"price\":12.345}")).row()).isEqualTo(Row.of(1L, new java.math.BigDecimal("12.35")));
    assertThat(d.decode(null, b("{\"id\":1,\"price\":\"-0.005\"}")).row()).isEqualTo(Row.of(1L, new java.math.BigDecimal("-0.01")));
    assertThat(d.decode(null, b("{\"id\":1,\"price\":9999.99}")).row()).isEqualTo(Row.of(1L, new java.math.BigDecimal("9999.99")));
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"price\":9999.995}"))).hasMessageContaining("column 'price' is NUMERIC")
        .hasMessageContaining("numeric field overflow");
  }

  @Test
  void intervalsArePostgresTextIso8601OrMicrosecondsAndABadOneIsNamed() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, took INTERVAL"), List.of("id"), Envelope.UPSERT, Optional.empty());
    assertThat(d.decode(null, b("{\"id\":1,\"took\":\"1 year 2 mons -3 days +04:05:06.5\"}")).row().get(1).toString())
        .isEqualTo("1 year 2 mons -3 days +04:05:06.5");
    assertThat(d.decode(null, b("{\"id\":1,\"took\":\"P1Y2M-3DT4H5M6.5S\"}")).row().get(1).toString())
        .isEqualTo("1 year 2 mons -3 days +04:05:06.5");
    assertThat(d.decode(null, b("{\"id\":1,\"took\":90000000}")).row().get(1).toString()).isEqualTo("00:01:30");
    assertThat(d.decode(null, b("{\"id\":1,\"took\":\"90 minutes\"}")).row().get(1).toString()).isEqualTo("01:30:00");
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"took\":\"soon\"}"))).hasMessageContaining("column 'took' is INTERVAL");
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1,\"took\":true}"))).hasMessageContaining("column 'took' is INTERVAL");
  }

  @Test
  void upsertTakesTheKeyFromAnObjectKeyAScalarKeyOrTheValue() {
    JsonRecordDecoder d = decoder(Envelope.UPSERT);
    assertThat(d.decode(b("{\"id\":3}"), b("{\"name\":\"a\"}"))).isEqualTo(Change.upsert(Row.of(3L), Row.of(3L, "a", null, null, null)));
    assertThat(d.decode(b("3"), b("{\"id\":3,\"name\":\"a\"}")).key()).isEqualTo(Row.of(3L));
    assertThat(d.decode(null, b("{\"id\":4}")).key()).isEqualTo(Row.of(4L));
    assertThat(d.decode(b("{\"id\":3}"), null)).isEqualTo(Change.upsert(Row.of(3L), null));
  }

  @Test
  void nonJsonKeysAreTextForATextKey() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("k TEXT, v BIGINT"), List.of("k"), Envelope.UPSERT, Optional.empty());
    assertThat(d.decode(b("user-1"), b("{\"v\":1}"))).isEqualTo(Change.upsert(Row.of("user-1"), Row.of("user-1", 1L)));
  }

  @Test
  void keyFieldCopiesTheRecordKeyIntoAColumn() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("k TEXT, v BIGINT"), List.of(), Envelope.NONE, Optional.of("k"));
    assertThat(d.decode(b("user-1"), b("{\"v\":1}")).row()).isEqualTo(Row.of("user-1", 1L));
  }

  @Test
  void badRecordsSayWhatIsWrong() {
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, b("{\"id\":")))
        .isInstanceOf(BadRecordException.class).hasMessageContaining("not valid JSON");
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, b("{\"id\":\"seven\"}")))
        .isInstanceOf(BadRecordException.class).hasMessage("column 'id' is BIGINT but the value holds a JSON string");
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, b("{\"id\":1.5}")))
        .hasMessageContaining("fractional number");
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, b("[1]"))).hasMessageContaining("array, not an object");
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, null)).hasMessageContaining("value is null");
    assertThatThrownBy(() -> decoder(Envelope.UPSERT).decode(null, b("{\"name\":\"a\"}")))
        .hasMessageContaining("missing key: primary key column 'id'");
    assertThatThrownBy(() -> decoder(Envelope.UPSERT).decode(null, null)).hasMessageContaining("tombstone");
    assertThatThrownBy(() -> decoder(Envelope.UPSERT).decode(b("{\"id\":1}"), b("{\"id\":2}")))
        .hasMessageContaining("disagree");
    assertThatThrownBy(() -> decoder(Envelope.NONE).decode(null, b("{\"ts\":\"yesterday\"}")))
        .hasMessageContaining("ISO-8601");
  }

  @Test
  void debeziumEventsWithAndWithoutSchemaWrapper() {
    JsonRecordDecoder d = decoder(Envelope.DEBEZIUM);
    String create = "{\"before\":null,\"after\":{\"id\":1,\"name\":\"a\"},\"source\":{},\"op\":\"c\",\"ts_ms\":1}";
    assertThat(d.decode(b("{\"id\":1}"), b(create))).isEqualTo(Change.upsert(Row.of(1L), Row.of(1L, "a", null, null, null)));
    String update = "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"after\",\"type\":\"struct\",\"fields\":"
        + "[{\"field\":\"ts\",\"type\":\"int64\",\"name\":\"io.debezium.time.Timestamp\"}]}]},"
        + "\"payload\":{\"before\":{\"id\":1},\"after\":{\"id\":1,\"name\":\"b\",\"ts\":5},\"op\":\"u\"}}";
    assertThat(d.decode(b("{\"schema\":{\"type\":\"struct\"},\"payload\":{\"id\":1}}"), b(update)))
        .isEqualTo(Change.upsert(Row.of(1L), Row.of(1L, "b", null, null, 5000L)));
    String delete = "{\"before\":{\"id\":1,\"name\":\"b\"},\"after\":null,\"op\":\"d\"}";
    assertThat(d.decode(null, b(delete))).isEqualTo(Change.upsert(Row.of(1L), null));
    assertThat(d.decode(b("{\"id\":1}"), null)).isEqualTo(Change.upsert(Row.of(1L), null));
    assertThat(d.decode(null, b("{\"op\":\"m\",\"message\":{}}")).isNone()).isTrue();
    assertThatThrownBy(() -> d.decode(null, b("{\"op\":\"t\"}"))).hasMessageContaining("truncate");
    assertThatThrownBy(() -> d.decode(null, b("{\"id\":1}"))).hasMessageContaining("no text field 'op'");
    assertThatThrownBy(() -> d.decode(null, b("{\"op\":\"c\",\"after\":null}"))).hasMessageContaining("no 'after'");
  }

  /**
   * The streaming fast path against the tree path (the reference) on random records, valid and
   * not: the same change, or the same error message. Seeded; the failing seed is in the message.
   */
  @Test
  void theFastPathDecodesExactlyLikeTheTreePath() {
    String[] names = {"id", "ID", "name", "amount", "ok", "ts", "extra", "schema", "payload", "Name"};
    String[] values = {"1", "-7", "9223372036854775807", "92233720368547758070", "2.5", "2.0", "1e3", "-0.0", "\"x\"", "\"\"",
        "\"日本\"", "\"2026-01-02T03:04:05Z\"", "\"NaN\"", "true", "false", "null", "[1,2]", "{\"a\":1}", "\"\\u00e9\"",
        // numbers at the edges of JSON's grammar, of long and of the double fast path
        "01", "-", "1.", ".5", "-01", "1.5e", "+1", "-0", "1E+2", "2.5E3", "1e-400", "1e400", "0.1", "3.14159", "123456.789e-3",
        "0.30000000000000004", "1.7976931348623157e308", "4.9e-324", "123456789012345678", "1234567890123456789",
        "-9223372036854775808", "9007199254740993", "9007199254740993.0", "1e22", "1e23", "123456789012345e-22",
        // strings and literals the fast path must leave alone or refuse
        "\"a\\\"b\"", "\"tab\there\"", "\"unterminated", "nul", "truex", "tru", "[]", "{}", "\"\\n\"", "nullx"};
    long base = Long.getLong("cairn.seed", System.nanoTime());
    // one decoder per envelope for all records, as a source has: its reused strings (TextCache) are hit
    JsonRecordDecoder upserts = decoder(Envelope.UPSERT);
    JsonRecordDecoder appends = decoder(Envelope.NONE);
    for (int t = 0; t < 20_000; t++) {
      long seed = base + t;
      java.util.Random r = new java.util.Random(seed);
      Envelope env = r.nextBoolean() ? Envelope.UPSERT : Envelope.NONE;
      JsonRecordDecoder d = env == Envelope.UPSERT ? upserts : appends;
      String value = r.nextInt(15) == 0 ? (r.nextBoolean() ? null : "not json {") : object(r, names, values);
      String key = env == Envelope.NONE || r.nextInt(6) == 0 ? null
          : r.nextInt(8) == 0 ? "\"k\"" : "{\"id\":" + values[r.nextInt(4)] + (r.nextBoolean() ? ",\"x\":1" : "") + "}";
      Object fast;
      Object tree;
      try {
        fast = d.decode(b(key), b(value));
      } catch (BadRecordException e) {
        fast = "error: " + e.getMessage();
      }
      try {
        tree = decoder(env).decodeTree(b(key), b(value));
      } catch (BadRecordException e) {
        tree = "error: " + e.getMessage();
      }
      assertThat(String.valueOf(fast)).as("seed %d (-Dcairn.seed=%d), %s key %s value %s", seed, seed, env, key, value)
          .isEqualTo(String.valueOf(tree));
    }
  }

  /** Mostly nothing, sometimes JSON whitespace, rarely a character that is not JSON whitespace. */
  private static String ws(java.util.Random r) {
    return switch (r.nextInt(12)) {
      case 0 -> " ";
      case 1 -> "\n\t ";
      case 2 -> "\r\n";
      case 3 -> r.nextInt(10) == 0 ? "\u00a0" : "";
      default -> "";
    };
  }

  private static String object(java.util.Random r, String[] names, String[] values) {
    StringBuilder sb = new StringBuilder(ws(r)).append("{");
    int n = r.nextInt(7);
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : ",").append(ws(r)).append('"').append(names[r.nextInt(names.length)]).append('"').append(ws(r))
          .append(':').append(ws(r)).append(values[r.nextInt(values.length)]).append(ws(r));
    }
    sb.append('}').append(ws(r));
    if (r.nextInt(40) == 0) {
      return sb.substring(0, r.nextInt(sb.length())); // cut short
    }
    if (r.nextInt(20) == 0) {
      String odd = ":,{}[]\"x 1-.";
      sb.setCharAt(r.nextInt(sb.length()), odd.charAt(r.nextInt(odd.length()))); // one character changed
    }
    if (r.nextInt(30) == 0) {
      sb.append(" 1"); // trailing token
    }
    return sb.toString();
  }
}
