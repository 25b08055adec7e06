package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import java.util.Comparator;
import java.util.Objects;

/** One update {@code (key, val, time, diff)}: {@code diff} +1 inserts, -1 retracts. */
public record Update(Row key, Row val, long time, long diff) {
  /** Orders by (key, val, time). */
  public static final Comparator<Update> ORDER =
      Comparator.comparing(Update::key).thenComparing(Update::val).thenComparingLong(Update::time);

  /** Orders by (key, val), ignoring time. */
  public static final Comparator<Update> ORDER_KEY_VAL =
      Comparator.comparing(Update::key).thenComparing(Update::val);

  public Update {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(val, "val");
  }
}
