package io.cairn.engine.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/**
 * A generator of random test values for {@link Property}: draws a value from a seeded
 * {@link Random}, so a value is reproducible from the seed.
 *
 * <p>{@code size} (0 to {@link #MAX_SIZE}) scales the maximal length of generated lists and
 * strings: {@code MAX_SIZE} draws lengths from the full range given to {@link #list} or
 * {@link #strings}, 0 only the minimal length. Properties run at {@code MAX_SIZE}; smaller sizes
 * are used when looking for a smaller failing sample after a failure.
 */
@FunctionalInterface
public interface Gen<T> {
  int MAX_SIZE = 100;

  T next(Random random, int size);

  /** A value at full size. */
  default T next(Random random) {
    return next(random, MAX_SIZE);
  }

  default <R> Gen<R> map(Function<? super T, ? extends R> f) {
    return (r, s) -> f.apply(next(r, s));
  }

  /** This generator's values, or {@code null} with probability {@code p}. */
  default Gen<T> orNull(double p) {
    return (r, s) -> r.nextDouble() < p ? null : next(r, s);
  }

  /** Lists of {@code minSize} to {@code maxSize} (inclusive, scaled by size) of this generator's values. */
  default Gen<List<T>> list(int minSize, int maxSize) {
    return (r, s) -> {
      int n = length(r, minSize, maxSize, s);
      List<T> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(next(r, s));
      }
      return out;
    };
  }

  /** A length in {@code [min, max]}, the upper end scaled down by {@code size}. */
  static int length(Random r, int min, int max, int size) {
    int hi = min + (int) ((long) (max - min) * Math.max(0, Math.min(size, MAX_SIZE)) / MAX_SIZE);
    return min + r.nextInt(hi - min + 1);
  }

  static <T> Gen<T> constant(T value) {
    return (r, s) -> value;
  }

  /** Uniform in {@code [min, max]}, both inclusive. */
  static Gen<Integer> ints(int min, int max) {
    return longs(min, max).map(Long::intValue);
  }

  /** Uniform in {@code [min, max]}, both inclusive. */
  static Gen<Long> longs(long min, long max) {
    if (min > max) {
      throw new IllegalArgumentException(min + " > " + max);
    }
    if (min == Long.MIN_VALUE && max == Long.MAX_VALUE) {
      return (r, s) -> r.nextLong();
    }
    return max == Long.MAX_VALUE ? (r, s) -> r.nextLong(min - 1, max) + 1 : (r, s) -> r.nextLong(min, max + 1);
  }

  static Gen<Boolean> booleans() {
    return (r, s) -> r.nextBoolean();
  }

  /** Any long: edge cases (0, ±1, the extremes) one time in ten, small values three in ten, else uniform over all longs. */
  static Gen<Long> anyLong() {
    long[] edges = {0, 1, -1, Long.MIN_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE, Long.MAX_VALUE - 1};
    return (r, s) -> {
      double p = r.nextDouble();
      if (p < 0.1) {
        return edges[r.nextInt(edges.length)];
      }
      return p < 0.4 ? r.nextLong(-1000, 1001) : r.nextLong();
    };
  }

  /**
   * Any double: edge cases (±0.0, ±1, the extremes, NaN, ±infinity) one time in ten, small values
   * with two decimals three in ten, else any bit pattern.
   */
  static Gen<Double> anyDouble() {
    double[] edges = {
      0.0, -0.0, 1.0, -1.0, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE,
      Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY
    };
    return (r, s) -> {
      double p = r.nextDouble();
      if (p < 0.1) {
        return edges[r.nextInt(edges.length)];
      }
      return p < 0.4 ? r.nextInt(-100_000, 100_001) / 100.0 : Double.longBitsToDouble(r.nextLong());
    };
  }

  /**
   * Strings of 0 to {@code maxLength} UTF-16 chars (scaled by size) of valid code points: mostly
   * printable ASCII, also control characters, other BMP characters and supplementary characters
   * (surrogate pairs); never a lone surrogate.
   */
  static Gen<String> strings(int maxLength) {
    return (r, s) -> {
      int n = length(r, 0, maxLength, s);
      StringBuilder b = new StringBuilder(n);
      while (b.length() < n) {
        double p = r.nextDouble();
        if (p < 0.5) {
          b.append((char) r.nextInt(0x20, 0x7f));
        } else if (p < 0.6) {
          b.append((char) r.nextInt(0, 0x20));
        } else if (p < 0.9 || b.length() + 2 > n) {
          int c;
          do {
            c = r.nextInt(0x80, 0x10000);
          } while (Character.isSurrogate((char) c));
          b.append((char) c);
        } else {
          b.appendCodePoint(r.nextInt(0x10000, Character.MAX_CODE_POINT + 1));
        }
      }
      return b.toString();
    };
  }

  /** One of {@code values}, uniformly. */
  @SafeVarargs
  static <T> Gen<T> of(T... values) {
    List<T> vs = List.of(values);
    return (r, s) -> vs.get(r.nextInt(vs.size()));
  }

  /** A value of one of {@code gens}, chosen uniformly. */
  @SafeVarargs
  static <T> Gen<T> oneOf(Gen<? extends T>... gens) {
    List<Gen<? extends T>> gs = List.of(gens);
    return (r, s) -> gs.get(r.nextInt(gs.size())).next(r, s);
  }

  /** A generator and its relative weight for {@link #frequency}. */
  record Weighted<T>(int weight, Gen<? extends T> gen) {}

  static <T> Weighted<T> weighted(int weight, Gen<? extends T> gen) {
    return new Weighted<>(weight, gen);
  }

  /** A value of one of {@code options}, each chosen with probability proportional to its weight. */
  @SafeVarargs
  static <T> Gen<T> frequency(Weighted<? extends T>... options) {
    List<Weighted<? extends T>> os = List.of(options);
    int total = os.stream().mapToInt(Weighted::weight).sum();
    return (r, s) -> {
      int x = r.nextInt(total);
      for (Weighted<? extends T> o : os) {
        x -= o.weight();
        if (x < 0) {
          return o.gen().next(r, s);
        }
      }
      throw new IllegalStateException();
    };
  }
}
