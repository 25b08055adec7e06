package io.cairn.connectors.kafka;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The strings of one TEXT column as the fast path decodes them, reused when the same bytes come
 * again: a customer's name in every one of its orders becomes one {@link String}, not one per
 * record.
 *
 * <p>A string that is reused costs nothing downstream: its hash is computed once and kept by the
 * string, and equal values are the same object, so the engine's equality and comparisons end at
 * their identity check instead of walking two copies; the state holds one copy. A lookup costs a
 * hash of the bytes and, on a hit, one comparison of them, instead of a new string.
 *
 * <p>Direct-mapped ({@value #SLOTS} slots; a colliding value replaces the older one), for values of
 * at most {@value #MAX_BYTES} bytes (longer text rarely repeats). A column whose values do not
 * repeat (free text, ids as text) stops looking up after {@value #PROBATION} lookups with fewer than
 * one hit in {@value #MIN_HIT_RATIO_INVERSE}, and decodes as without the cache from then on.
 *
 * <p>Owned by one decoder, which one source thread uses at a time; entries are immutable, so a
 * racing reader would see either no entry or a whole one.
 */
final class TextCache {
  static final int MAX_BYTES = 128;
  private static final int SLOTS = 4096;
  private static final int PROBATION = 1 << 16;
  private static final int MIN_HIT_RATIO_INVERSE = 8;

  private record Entry(byte[] bytes, String value) {}

  private final Entry[] slots = new Entry[SLOTS];
  private long lookups;
  private long hits;
  private boolean off;

  /** The string of the ISO-8859-1 (here: ASCII) bytes {@code b[from, from + len)}. */
  String get(byte[] b, int from, int len) {
    if (off || len > MAX_BYTES) {
      return new String(b, from, len, StandardCharsets.ISO_8859_1);
    }
    int h = 0;
    for (int i = from; i < from + len; i++) {
      h = 31 * h + b[i];
    }
    int slot = (h ^ (h >>> 15)) & (SLOTS - 1);
    lookups++;
    Entry e = slots[slot];
    if (e != null && e.bytes.length == len && Arrays.equals(e.bytes, 0, len, b, from, from + len)) {
      hits++;
      return e.value;
    }
    String s = new String(b, from, len, StandardCharsets.ISO_8859_1);
    slots[slot] = new Entry(Arrays.copyOfRange(b, from, from + len), s);
    if (lookups == PROBATION && hits * MIN_HIT_RATIO_INVERSE < lookups) {
      off = true;
      Arrays.fill(slots, null);
    }
    return s;
  }

  /** Lookups that found the value (for tests and the decoder's figures). */
  long hits() {
    return hits;
  }

  boolean off() {
    return off;
  }
}
