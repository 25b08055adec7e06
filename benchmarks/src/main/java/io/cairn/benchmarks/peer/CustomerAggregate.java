package io.cairn.benchmarks.peer;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * One row of the peer's result: {@code COUNT(*)} and {@code SUM(amount)} of the current orders of
 * one customer. The sum is exact (decimal); compare sums with {@link BigDecimal#compareTo}, or use
 * {@link #sameAs}, since {@code 2.50} and {@code 2.5} are equal amounts with different scales.
 */
public record CustomerAggregate(long count, BigDecimal sum) {
  public CustomerAggregate {
    Objects.requireNonNull(sum, "sum");
    if (count < 0) {
      throw new IllegalArgumentException("Cannot build an aggregate: negative count " + count);
    }
  }

  public static final CustomerAggregate ZERO = new CustomerAggregate(0, BigDecimal.ZERO);

  /** This aggregate with one more order of {@code amount}. */
  public CustomerAggregate plus(BigDecimal amount) {
    return new CustomerAggregate(count + 1, sum.add(amount));
  }

  /** This aggregate with one order of {@code amount} less. */
  public CustomerAggregate minus(BigDecimal amount) {
    return new CustomerAggregate(count - 1, sum.subtract(amount));
  }

  /** Equal count and numerically equal sum (scale ignored). */
  public boolean sameAs(CustomerAggregate other) {
    return other != null && count == other.count && sum.compareTo(other.sum) == 0;
  }

  /** The same aggregate with the sum stripped of trailing zeros (a canonical form for equality). */
  public CustomerAggregate normalized() {
    return new CustomerAggregate(count, sum.signum() == 0 ? BigDecimal.ZERO : sum.stripTrailingZeros());
  }
}
