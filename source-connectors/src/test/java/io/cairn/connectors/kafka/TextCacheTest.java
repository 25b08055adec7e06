package io.cairn.connectors.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.connectors.kafka.JsonRecordDecoder.Change;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

class TextCacheTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  @Test
  void equalBytesGiveTheSameStringAndDifferentBytesTheirOwn() {
    TextCache c = new TextCache();
    byte[] rec = b("xx\"Customer 00042\"yy");
    String first = c.get(rec, 3, 14);
    String again = c.get(b("Customer 00042"), 0, 14);
    assertThat(first).isEqualTo("Customer 00042");
    assertThat(again).isSameAs(first);
    assertThat(c.get(b("Customer 00043"), 0, 14)).isEqualTo("Customer 00043").isNotSameAs(first);
    assertThat(c.get(b("Customer 0004"), 0, 13)).isEqualTo("Customer 0004");
    assertThat(c.get(b(""), 0, 0)).isEmpty();
    assertThat(c.hits()).isEqualTo(1);
  }

  @Test
  void everyLookupEqualsAPlainDecodeUnderCollisionsAndLongValues() {
    TextCache c = new TextCache();
    Random r = new Random(7);
    for (int i = 0; i < 200_000; i++) {
      int len = r.nextInt(10) == 0 ? TextCache.MAX_BYTES + r.nextInt(50) : r.nextInt(20);
      StringBuilder sb = new StringBuilder();
      for (int j = 0; j < len; j++) {
        sb.append((char) ('a' + r.nextInt(3))); // few letters: many equal values and many colliding slots
      }
      byte[] rec = b("<" + sb + ">");
      assertThat(c.get(rec, 1, len)).isEqualTo(sb.toString());
    }
    assertThat(c.hits()).isPositive();
    assertThat(c.off()).isFalse();
  }

  @Test
  void valuesThatDoNotRepeatTurnTheCacheOff() {
    TextCache c = new TextCache();
    for (int i = 0; i < 70_000; i++) {
      byte[] v = b("unique-" + i);
      assertThat(c.get(v, 0, v.length)).isEqualTo("unique-" + i);
    }
    assertThat(c.off()).isTrue();
    assertThat(c.get(b("unique-1"), 0, 8)).isEqualTo("unique-1");
  }

  @Test
  void moreDistinctValuesThanSlotsGrowTheCacheUntilTheyHit() {
    TextCache c = new TextCache();
    Random r = new Random(3);
    int distinct = 10_000; // more than the first size's slots: they evict each other
    long hitsBefore = 0;
    for (int round = 0; round < 8; round++) {
      hitsBefore = c.hits();
      for (int i = 0; i < 65_536; i++) {
        byte[] v = b("Customer " + r.nextInt(distinct));
        assertThat(c.get(v, 0, v.length)).isEqualTo(new String(v, StandardCharsets.ISO_8859_1));
      }
    }
    assertThat(c.off()).isFalse();
    assertThat(c.slots()).isGreaterThan(TextCache.MIN_SLOTS).isLessThanOrEqualTo(TextCache.MAX_SLOTS);
    assertThat(c.hits() - hitsBefore).as("hits in the last 65,536 lookups").isGreaterThan(65_536 * 3 / 4);
  }

  @Test
  void aDecoderGivesOneStringForACustomerInEveryRecord() {
    JsonRecordDecoder d = new JsonRecordDecoder(Schema.parse("id BIGINT, customer TEXT, amount BIGINT"), List.of("id"),
        Envelope.UPSERT, Optional.empty());
    Change a = d.decode(b("{\"id\":1}"), b("{\"id\":1,\"customer\":\"ada\",\"amount\":3}"));
    Change c = d.decode(b("{\"id\":2}"), b("{\"id\":2,\"customer\":\"ada\",\"amount\":4}"));
    assertThat(a.toString()).contains("ada");
    assertThat(c.row().get(1)).isSameAs(a.row().get(1));
  }
}
