package io.cairn.engine.row;

import java.util.Locale;
import java.util.Objects;

/** A named, typed column of a {@link Schema}. Names are stored lower-case. */
public record Column(String name, Type type) {
  public Column {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (name.isBlank()) {
      throw new IllegalArgumentException("Cannot create column: name is blank");
    }
    name = name.toLowerCase(Locale.ROOT);
  }

  public static Column of(String name, Type type) {
    return new Column(name, type);
  }

  @Override
  public String toString() {
    return name + " " + type;
  }
}
