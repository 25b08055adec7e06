package io.cairn.engine.source;

import java.util.Optional;

/**
 * Resolves secret references (the name of an environment variable written as {@code SECRET
 * 'NAME'} in SQL) to their values. Values must never be logged, stored in the catalog or a
 * manifest, or put in an exception message.
 *
 * <p>In a {@link SourceDefinition}'s options a secret reference is the option value {@code
 * secret:NAME} ({@link #reference(String)}); connectors pass option values through {@link
 * #resolveOption(String)} when opening, which returns plain values unchanged.
 */
@FunctionalInterface
public interface Secrets {
  /** The prefix that marks an option value as a secret reference. */
  String REFERENCE_PREFIX = "secret:";

  /** The value for {@code reference}; throws naming the reference (never a value) when unset. */
  String resolve(String reference);

  /** The option value that refers to the secret {@code name}. */
  static String reference(String name) {
    return REFERENCE_PREFIX + name;
  }

  /** The secret name an option value refers to, or empty for a plain value. */
  static Optional<String> referenceName(String optionValue) {
    return optionValue != null && optionValue.startsWith(REFERENCE_PREFIX)
        ? Optional.of(optionValue.substring(REFERENCE_PREFIX.length()))
        : Optional.empty();
  }

  /** An option value with a secret reference resolved; a plain value is returned as is. */
  default String resolveOption(String optionValue) {
    Optional<String> ref = referenceName(optionValue);
    return ref.isPresent() ? resolve(ref.get()) : optionValue;
  }

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
