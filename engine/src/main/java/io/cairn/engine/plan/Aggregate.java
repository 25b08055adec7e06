package io.cairn.engine.plan;

import io.cairn.engine.row.Type;
import java.util.Objects;

/**
 * One aggregate of a {@link Plan.Reduce}: {@code kind} over input column {@code column} ({@code
 * -1} for {@code COUNT(*)}). Result types: COUNT → BIGINT, SUM → the input type, AVG → DOUBLE,
 * MIN/MAX → the input type. NULL inputs are ignored; a group whose inputs are all NULL has a NULL
 * SUM/AVG/MIN/MAX.
 */
public record Aggregate(Kind kind, int column, Type inputType) {
  public enum Kind {
    COUNT,
    SUM,
    MIN,
    MAX,
    AVG
  }

  public Aggregate {
    Objects.requireNonNull(kind, "kind");
    if (column < 0 && kind != Kind.COUNT) {
      throw new IllegalArgumentException("Cannot aggregate " + kind + "(*): only COUNT takes *");
    }
    if ((kind == Kind.SUM || kind == Kind.AVG) && column >= 0 && !inputType.isNumeric() && inputType != Type.NULL
        && inputType != Type.INTERVAL) {
      throw new IllegalArgumentException("Cannot aggregate " + kind + " over " + inputType + ": a number or an INTERVAL is required");
    }
  }

  public static Aggregate countStar() {
    return new Aggregate(Kind.COUNT, -1, Type.BIGINT);
  }

  /** The result type. */
  public Type resultType() {
    return switch (kind) {
      case COUNT -> Type.BIGINT;
      case AVG -> inputType == Type.NUMERIC || inputType == Type.INTERVAL ? inputType : Type.DOUBLE;
      case SUM -> inputType == Type.DOUBLE || inputType == Type.NUMERIC || inputType == Type.INTERVAL ? inputType : Type.BIGINT;
      case MIN, MAX -> inputType;
    };
  }

  /** Whether the aggregate can be maintained from a running sum (no input values kept). */
  public boolean invertible() {
    return kind != Kind.MIN && kind != Kind.MAX;
  }

  @Override
  public String toString() {
    return kind + "(" + (column < 0 ? "*" : "#" + column) + ")";
  }
}
