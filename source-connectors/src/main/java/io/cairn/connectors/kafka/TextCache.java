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
 * <p>Direct-mapped (a colliding value replaces the older one), for values of at most {@value
 * #MAX_BYTES} bytes (longer text rarely repeats). It starts with {@value #MIN_SLOTS} slots and is
 * judged every {@value #WINDOW} lookups:
 * <ul>
 *   <li>a column whose values do not repeat (free text, ids as text) has fewer than one hit in
 *       {@value #MIN_HIT_RATIO_INVERSE} in its first window; it stops looking up, and decodes as
 *       without the cache from then on;
 *   <li>a column with more distinct values than slots (10,000 customers in 4,096 slots) misses
 *       more than one lookup in {@value #GROW_MISS_RATIO_INVERSE} because its values evict each
 *       other: the slots are multiplied by 4 (emptied), up to {@value #MAX_SLOTS}. A slot holds at
 *       most {@value #MAX_BYTES} bytes and their string, so a column's cache is bounded by about 20
 *       MB (every slot full of the longest values); 10,000 names of 14 bytes take about 1.5 MB.
 * </ul>
 *
 * <p>Not thread-safe: owned by one decoder, which its source's poll uses, one poll at a time (a
 * slot's three arrays are written one after another).
 */
final class TextCache {
  static final int MAX_BYTES = 128;
  static final int MIN_SLOTS = 4096;
  static final int MAX_SLOTS = 65536;
  private static final int WINDOW = 1 << 16;
  private static final int MIN_HIT_RATIO_INVERSE = 8;
  private static final int GROW_MISS_RATIO_INVERSE = 4;

  /**
   * Slot i holds the bytes {@code bytes[i]} (null: empty), their hash {@code hashes[i]} and their
   * string {@code values[i]}. Parallel arrays, so that a miss is mostly decided by the hash alone,
   * and a hit reads the bytes it compares and the string, not an entry object first.
   */
  private int[] hashes = new int[MIN_SLOTS];
  private byte[][] bytes = new byte[MIN_SLOTS][];
  private String[] values = new String[MIN_SLOTS];
  private long lookups;
  private long hits;
  private int windowHits;
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
    if (++lookups % WINDOW == 0) {
      judge();
      if (off) {
        return new String(b, from, len, StandardCharsets.ISO_8859_1);
      }
    }
    int slot = (h ^ (h >>> 15)) & (hashes.length - 1);
    if (hashes[slot] == h) {
      byte[] e = bytes[slot];
      if (e != null && e.length == len && Arrays.equals(e, 0, len, b, from, from + len)) {
        hits++;
        windowHits++;
        return values[slot];
      }
    }
    String s = new String(b, from, len, StandardCharsets.ISO_8859_1);
    hashes[slot] = h;
    bytes[slot] = Arrays.copyOfRange(b, from, from + len);
    values[slot] = s;
    return s;
  }

  /** At the end of a window of lookups: turn off, grow, or keep the size (see the class comment). */
  private void judge() {
    int misses = WINDOW - windowHits;
    if (lookups == WINDOW && windowHits * MIN_HIT_RATIO_INVERSE < WINDOW) {
      off = true;
      resize(1);
    } else if (misses * GROW_MISS_RATIO_INVERSE > WINDOW && hashes.length < MAX_SLOTS) {
      resize(hashes.length * 4);
    }
    windowHits = 0;
  }

  /** Empties the cache into {@code slots} slots. */
  private void resize(int slots) {
    hashes = new int[slots];
    bytes = new byte[slots][];
    values = new String[slots];
  }

  /** The number of slots (for tests). */
  int slots() {
    return hashes.length;
  }

  /** Lookups that found the value (for tests and the decoder's figures). */
  long hits() {
    return hits;
  }

  boolean off() {
    return off;
  }
}
