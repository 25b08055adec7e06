package io.cairn.engine.testkit;

import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs a property on plain JUnit 5: {@code tries} samples drawn by a {@link Gen}, each from a
 * {@link Random} seeded from a base seed and the try number, each checked by a {@link Check}.
 *
 * <pre>{@code
 * @Test
 * void reverseTwiceIsIdentity() {
 *   Property.tries(200).forAll(Gen.ints(0, 9).list(0, 20), xs -> assertThat(reverse(reverse(xs))).isEqualTo(xs));
 * }
 * }</pre>
 *
 * <p>The base seed is the system property {@value #SEED_PROPERTY} if set, else the property's
 * fixed {@link #seed} if it has one, else random. A failing try throws an {@link AssertionError}
 * naming the base seed, the try and the {@code -Dcairn.seed=...} that reruns the same samples
 * (Surefire passes {@code -D} properties of the Maven command line on to the tests), with the
 * failing sample and, if one was found, a smaller failing sample: after a failure the property is
 * run again on samples of smaller {@link Gen size} (shorter lists and strings) within a small
 * budget.
 */
public final class Property {
  public static final String SEED_PROPERTY = "cairn.seed";
  public static final int DEFAULT_TRIES = 100;

  /** Sizes tried, in order, when looking for a smaller failing sample. */
  private static final int[] SHRINK_SIZES = {50, 25, 12, 6, 3, 1, 0};
  private static final int SHRINK_ATTEMPTS_PER_SIZE = 8;
  private static final int SHRINK_MAX_RUNS = 40;
  private static final long SHRINK_BUDGET_NANOS = 20_000_000_000L;
  private static final int MAX_SAMPLE_CHARS = 4000;

  /** The check of one sample; it fails by throwing (an assertion error or any other exception). */
  @FunctionalInterface
  public interface Check<T> {
    void check(T sample) throws Throwable;
  }

  private final int tries;
  private final Long fixedSeed;

  private Property(int tries, Long fixedSeed) {
    if (tries < 1) {
      throw new IllegalArgumentException("tries " + tries);
    }
    this.tries = tries;
    this.fixedSeed = fixedSeed;
  }

  /** A property checked on {@link #DEFAULT_TRIES} samples. */
  public static Property defaults() {
    return new Property(DEFAULT_TRIES, null);
  }

  /**
   * The share of each property's {@code tries} that runs: {@value #SCALE_PROPERTY} (default 0.5, so
   * that the default build stays within its time; the base seed is random, so successive builds draw
   * other samples). {@code -Dcairn.property.scale=1} runs every try.
   */
  static final String SCALE_PROPERTY = "cairn.property.scale";

  static final double SCALE = Double.parseDouble(System.getProperty(SCALE_PROPERTY, "0.5"));

  /** A property checked on {@code tries} samples (times {@value #SCALE_PROPERTY}). */
  public static Property tries(int tries) {
    return new Property(Math.max(1, (int) Math.round(tries * SCALE)), null);
  }

  /** The same property with a fixed base seed, used unless {@value #SEED_PROPERTY} is set. */
  public Property seed(long seed) {
    return new Property(tries, seed);
  }

  /** The base seed from {@value #SEED_PROPERTY}, if set. */
  static Optional<Long> seedFromSystemProperty() {
    String s = System.getProperty(SEED_PROPERTY);
    if (s == null || s.isBlank()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Long.parseLong(s.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("-D" + SEED_PROPERTY + " must be a long, not '" + s + "'", e);
    }
  }

  /** The seed of try {@code i} (0-based) under base seed {@code base}: well mixed, so neighbouring tries are unrelated. */
  static long trySeed(long base, int i) {
    return mix(base + (i + 1) * 0x9E3779B97F4A7C15L);
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** Checks {@code check} on {@code tries} samples of {@code gen}; see the class comment for what a failure reports. */
  public <T> void forAll(Gen<T> gen, Check<? super T> check) {
    String where = caller();
    Optional<Long> fromProperty = seedFromSystemProperty();
    long base = fromProperty.orElseGet(() -> fixedSeed != null ? fixedSeed : ThreadLocalRandom.current().nextLong());
    String seedOrigin = fromProperty.isPresent() ? "from -D" + SEED_PROPERTY : fixedSeed != null ? "fixed" : "random";
    for (int i = 0; i < tries; i++) {
      long seed = trySeed(base, i);
      T sample = gen.next(new Random(seed), Gen.MAX_SIZE);
      Throwable failure = run(check, sample);
      if (failure != null) {
        StringBuilder m = new StringBuilder();
        m.append(String.format(
            "Property %s failed on try %d of %d with base seed %d (%s).%n"
                + "  Reproduce with: -D%s=%d (e.g. mvn -Dtest=%s -D%s=%d test)%n"
                + "  Failure: %s%n"
                + "  Sample: %s",
            where, i + 1, tries, base, seedOrigin, SEED_PROPERTY, base, where.replace("()", ""), SEED_PROPERTY, base,
            failure, abbreviate(sample)));
        shrink(gen, check, seed).ifPresent(m::append);
        AssertionError e = new AssertionError(m.toString(), failure);
        throw e;
      }
    }
  }

  /** Looks for a failing sample at a smaller size; describes the smallest one found. */
  private static <T> Optional<String> shrink(Gen<T> gen, Check<? super T> check, long seed) {
    long deadline = System.nanoTime() + SHRINK_BUDGET_NANOS;
    int runs = 0;
    String found = null;
    sizes:
    for (int size : SHRINK_SIZES) {
      for (int a = 0; a < SHRINK_ATTEMPTS_PER_SIZE; a++) {
        if (runs >= SHRINK_MAX_RUNS || System.nanoTime() > deadline) {
          break sizes;
        }
        runs++;
        T sample = gen.next(new Random(mix(seed ^ (size * 1_000_003L + a))), size);
        Throwable failure = run(check, sample);
        if (failure != null) {
          found = String.format("%n  Smaller failing sample (size %d of %d): %s%n  Its failure: %s", size, Gen.MAX_SIZE,
              abbreviate(sample), failure);
          continue sizes;
        }
      }
      break; // nothing failed at this size: smaller ones are unlikely to
    }
    return Optional.ofNullable(found);
  }

  private static <T> Throwable run(Check<? super T> check, T sample) {
    try {
      check.check(sample);
      return null;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable t) {
      return t;
    }
  }

  private static String abbreviate(Object sample) {
    String s = String.valueOf(sample);
    return s.length() <= MAX_SAMPLE_CHARS ? s : s.substring(0, MAX_SAMPLE_CHARS) + "... (" + s.length() + " chars)";
  }

  /** "Class#method()" of the test that called {@link #forAll}. */
  private static String caller() {
    return StackWalker.getInstance()
        .walk(frames -> frames.filter(f -> !f.getClassName().equals(Property.class.getName())).findFirst())
        .map(f -> {
          String c = f.getClassName();
          return c.substring(c.lastIndexOf('.') + 1) + "#" + f.getMethodName() + "()";
        })
        .orElse("?");
  }
}
