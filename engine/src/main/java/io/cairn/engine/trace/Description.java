package io.cairn.engine.trace;

/**
 * The times a {@link Batch} covers: every update in it has {@code lower <= time < upper} (before
 * logical compaction), and times before {@code since} have been advanced to {@code since}, so the
 * batch only distinguishes times at or after {@code since}.
 */
public record Description(long lower, long upper, long since) {
  public Description {
    if (lower > upper) {
      throw new IllegalArgumentException("Cannot describe batch: lower " + lower + " > upper " + upper);
    }
    if (since < 0) {
      throw new IllegalArgumentException("Cannot describe batch: since " + since + " < 0");
    }
  }
}
