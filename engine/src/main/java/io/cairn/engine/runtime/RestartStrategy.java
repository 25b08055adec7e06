package io.cairn.engine.runtime;

import java.time.Duration;
import java.util.Objects;

/**
 * How a source that failed with a retriable error is restarted: exponential backoff, capped,
 * with jitter — Flink's {@code exponential-delay} restart strategy. Attempt n (1-based) waits
 * {@code min(maxBackoff, initialBackoff * multiplier^(n-1))}, scaled by a random factor in
 * {@code [1 - jitter, 1 + jitter]}. {@code maxAttempts} 0 means no limit; past the limit the
 * source is FAILED. A source that ran for {@code maxBackoff} without an error starts counting
 * from attempt 1 again.
 */
public record RestartStrategy(Duration initialBackoff, Duration maxBackoff, double multiplier, double jitter, int maxAttempts) {
  public static final RestartStrategy DEFAULT = new RestartStrategy(Duration.ofSeconds(1), Duration.ofSeconds(60), 2.0, 0.2, 0);

  public RestartStrategy {
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException(
          "Cannot use restart strategy: need 0 <= initial backoff (" + initialBackoff + ") <= max backoff (" + maxBackoff + ")");
    }
    if (!(multiplier >= 1.0)) {
      throw new IllegalArgumentException("Cannot use restart strategy: multiplier " + multiplier + " must be >= 1");
    }
    if (!(jitter >= 0 && jitter < 1)) {
      throw new IllegalArgumentException("Cannot use restart strategy: jitter " + jitter + " must be in [0, 1)");
    }
    if (maxAttempts < 0) {
      throw new IllegalArgumentException("Cannot use restart strategy: max attempts " + maxAttempts + " must be >= 0");
    }
  }

  /** The wait before attempt {@code attempt} (1-based); {@code random} in [0, 1). */
  public Duration backoff(int attempt, double random) {
    double base = initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, attempt - 1));
    double capped = Math.min(maxBackoff.toNanos(), base);
    double factor = 1 + jitter * (2 * random - 1);
    return Duration.ofNanos((long) Math.min(maxBackoff.toNanos(), Math.max(0, capped * factor)));
  }

  /** Whether attempt {@code attempt} (1-based) is allowed. */
  public boolean allows(int attempt) {
    return maxAttempts == 0 || attempt <= maxAttempts;
  }
}
