package io.cairn.objectstore;

import java.util.Locale;
import java.util.OptionalLong;

/**
 * Objects numbered in a sequence under a prefix: {@code <prefix><n, 20 digits>.json}, as the store's
 * epochs ({@code nodes/}), catalog entries ({@code catalog/}) and catalog head witnesses are. Twenty
 * zero-padded digits make the store's UTF-8 key order the numeric order; each object is written
 * create-if-absent, so of two writers racing for one number exactly one wins.
 */
public final class NumberedObjects {
  private NumberedObjects() {}

  /** The key of number {@code n} under {@code prefix} (which ends with {@code /}). */
  public static String key(String prefix, long n) {
    return String.format(Locale.ROOT, "%s%020d.json", prefix, n);
  }

  /** The number of {@code key} when it is a numbered object ({@code …/<20 digits>.json}), else -1. */
  public static long number(String key) {
    String name = key.substring(key.lastIndexOf('/') + 1);
    if (name.length() != 25 || !name.endsWith(".json")) {
      return -1;
    }
    for (int i = 0; i < 20; i++) {
      if (name.charAt(i) < '0' || name.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(name.substring(0, 20));
  }

  /** The highest number under {@code prefix} (one listing), empty when there is none. */
  public static OptionalLong highest(ObjectStore store, String prefix) {
    long max = -1;
    for (ObjectInfo o : store.list(prefix)) {
      max = Math.max(max, number(o.key()));
    }
    return max < 0 ? OptionalLong.empty() : OptionalLong.of(max);
  }
}
