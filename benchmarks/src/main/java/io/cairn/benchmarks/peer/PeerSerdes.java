package io.cairn.benchmarks.peer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/** The peer's serdes: JSON order values (as in the input topic), binary amounts and aggregates. */
final class PeerSerdes {
  private static final JsonFactory JSON = new JsonFactory();

  private PeerSerdes() {
  }

  /** The part of an input value the aggregation needs (stored as {@code {"customer":…,"amount":…}}). */
  record Order(String customer, BigDecimal amount) {
  }

  static Serde<Order> order() {
    return Serdes.serdeFrom(PeerSerdes::writeOrder, PeerSerdes::readOrder);
  }

  static Serde<BigDecimal> amount() {
    return Serdes.serdeFrom((Serializer<BigDecimal>) (topic, d) -> d == null ? null : writeDecimal(ByteBuffer.allocate(decimalSize(d)), d).array(),
        (Deserializer<BigDecimal>) (topic, b) -> b == null ? null : readDecimal(ByteBuffer.wrap(b)));
  }

  static Serde<CustomerAggregate> aggregate() {
    return Serdes.serdeFrom((Serializer<CustomerAggregate>) (topic, a) -> {
      if (a == null) {
        return null;
      }
      ByteBuffer buf = ByteBuffer.allocate(Long.BYTES + decimalSize(a.sum()));
      buf.putLong(a.count());
      return writeDecimal(buf, a.sum()).array();
    }, (Deserializer<CustomerAggregate>) (topic, b) -> {
      if (b == null) {
        return null;
      }
      ByteBuffer buf = ByteBuffer.wrap(b);
      long count = buf.getLong();
      return new CustomerAggregate(count, readDecimal(buf));
    });
  }

  /**
   * Reads {@code {"id":…,"customer":…,"amount":…}}; fields other than customer and amount are ignored. {@code customer} is
   * any JSON scalar (its text is the group key), {@code amount} a JSON number.
   */
  static Order readOrder(String topic, byte[] bytes) {
    if (bytes == null) {
      return null;
    }
    String customer = null;
    BigDecimal amount = null;
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw bad(topic, bytes, "not a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken t = p.nextToken();
        switch (field) {
          case "customer" -> {
            if (!t.isScalarValue() || t == JsonToken.VALUE_NULL) {
              throw bad(topic, bytes, "field customer is not a JSON scalar");
            }
            customer = p.getText();
          }
          case "amount" -> {
            if (!t.isNumeric()) {
              throw bad(topic, bytes, "field amount is not a JSON number");
            }
            amount = p.getDecimalValue();
          }
          default -> p.skipChildren();
        }
      }
    } catch (IOException e) {
      throw new SerializationException("Cannot read an order from topic " + topic + ": invalid JSON: " + e.getMessage(), e);
    }
    if (customer == null) {
      throw bad(topic, bytes, "field customer is missing");
    }
    if (amount == null) {
      throw bad(topic, bytes, "field amount is missing");
    }
    return new Order(customer, amount);
  }

  static byte[] writeOrder(String topic, Order order) {
    if (order == null) {
      return null;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(64);
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      g.writeStringField("customer", order.customer());
      g.writeNumberField("amount", order.amount());
      g.writeEndObject();
    } catch (IOException e) {
      throw new SerializationException("Cannot write an order to topic " + topic + ": " + e.getMessage(), e);
    }
    return out.toByteArray();
  }

  private static SerializationException bad(String topic, byte[] bytes, String why) {
    String shown = new String(bytes, 0, Math.min(bytes.length, 120), java.nio.charset.StandardCharsets.UTF_8);
    return new SerializationException("Cannot read an order from topic " + topic + ": " + why + " in " + shown);
  }

  private static int decimalSize(BigDecimal d) {
    return Integer.BYTES + Integer.BYTES + d.unscaledValue().toByteArray().length;
  }

  private static ByteBuffer writeDecimal(ByteBuffer buf, BigDecimal d) {
    byte[] unscaled = d.unscaledValue().toByteArray();
    buf.putInt(d.scale());
    buf.putInt(unscaled.length);
    buf.put(unscaled);
    return buf;
  }

  private static BigDecimal readDecimal(ByteBuffer buf) {
    int scale = buf.getInt();
    byte[] unscaled = new byte[buf.getInt()];
    buf.get(unscaled);
    return new BigDecimal(new BigInteger(unscaled), scale);
  }
}
