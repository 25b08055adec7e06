package io.cairn.engine.source;

/**
 * Resolves secret references (the name of an environment variable written as {@code SECRET
 * 'NAME'} in SQL) to their values. Values must never be logged, stored in the catalog or a
 * manifest, or put in an exception message.
 */
@FunctionalInterface
public interface Secrets {
  /** The value for {@code reference}; throws naming the reference (never a value) when unset. */
  String resolve(String reference);

  /** Secrets from the process environment. */
  static Secrets environment() {
    return ref -> {
      String v = System.getenv(ref);
      if (v == null) {
        throw new IllegalArgumentException("Cannot resolve secret: environment variable '" + ref + "' is not set");
      }
      return v;
    };
  }
}
