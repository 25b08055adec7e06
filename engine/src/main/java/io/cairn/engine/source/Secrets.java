package io.cairn.engine.source;

import java.util.Optional;

/**
 * Resolves secret references (the name of an environment variable written as {@code SECRET
 * 'NAME'} in SQL) to their values. Values must never be logged, stored in the catalog or a
 * manifest, or put in an exception message.
 *
 * <p>In a {@link SourceDefinition}'s options a secret reference is kept as written in SQL, the
 * option value {@code SECRET 'NAME'} ({@link #reference(String)}); connectors pass option values
 * through {@link #resolveOption(String)} (or match {@link #referenceName}) when opening, which
 * returns plain values unchanged.
 */
@FunctionalInterface
public interface Secrets {
  /** The pattern of an option value that is a secret reference: {@code SECRET 'NAME'} or {@code SECRET NAME}. */
  java.util.regex.Pattern REFERENCE = java.util.regex.Pattern.compile("(?i)^\\s*SECRET\\s+'?([A-Za-z_][A-Za-z0-9_.-]*)'?\\s*$");

  /** The value for {@code reference}; throws naming the reference (never a value) when unset. */
  String resolve(String reference);

  /** The option value that refers to the secret {@code name}: {@code SECRET 'name'}. */
  static String reference(String name) {
    return "SECRET '" + name + "'";
  }

  /** The secret name an option value refers to, or empty for a plain value. */
  static Optional<String> referenceName(String optionValue) {
    if (optionValue == null) {
      return Optional.empty();
    }
    java.util.regex.Matcher m = REFERENCE.matcher(optionValue);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
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
