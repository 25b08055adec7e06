package io.cairn.engine.expr;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import java.util.List;
import java.util.Objects;

/**
 * A scalar expression over one input row: column references, literals, arithmetic, comparisons,
 * AND/OR/NOT and IS [NOT] NULL, with SQL's three-valued logic (NULL in, NULL out). Used for
 * projections and predicates by the operators and built by the SQL planner.
 *
 * <p>Evaluation errors (division by zero) throw {@link ArithmeticException}; the engine turns that
 * into a FAILED dataflow, never a failed node.
 */
public sealed interface Expr {
  /** The result type. */
  Type type();

  /** Evaluates against {@code row}; returns a row value ({@link Type} representation) or null. */
  Object eval(Row row);

  /** A value of a number type as a value of the wider number type {@code to} (DOUBLE, NUMERIC); anything else as it is. */
  static Object widen(Object v, Type to) {
    if (to == Type.DOUBLE && v instanceof Number n && !(v instanceof Double)) {
      return n.doubleValue();
    }
    return to == Type.NUMERIC && v instanceof Long l ? io.cairn.engine.row.Numeric.of(l) : v;
  }

  static Expr col(int index, Type type) {
    return new Col(index, type);
  }

  static Expr lit(Object value) {
    return new Lit(value, typeOf(value));
  }

  static Type typeOf(Object value) {
    if (value == null) {
      return Type.NULL;
    } else if (value instanceof Long) {
      return Type.BIGINT;
    } else if (value instanceof Double) {
      return Type.DOUBLE;
    } else if (value instanceof String) {
      return Type.TEXT;
    } else if (value instanceof Boolean) {
      return Type.BOOLEAN;
    } else if (value instanceof java.math.BigDecimal) {
      return Type.NUMERIC;
    } else if (value instanceof io.cairn.engine.row.Interval) {
      return Type.INTERVAL;
    }
    throw new IllegalArgumentException("Cannot make a literal of " + value.getClass().getSimpleName());
  }

  /** A reference to input column {@code index}. */
  record Col(int index, Type type) implements Expr {
    @Override
    public Object eval(Row row) {
      return row.get(index);
    }

    @Override
    public String toString() {
      return "#" + index;
    }
  }

  /** A constant. */
  record Lit(Object value, Type type) implements Expr {
    @Override
    public Object eval(Row row) {
      return value;
    }

    @Override
    public String toString() {
      return value instanceof String s ? "'" + s + "'" : value instanceof java.math.BigDecimal b ? b.toPlainString()
          : value instanceof io.cairn.engine.row.Interval i ? "INTERVAL '" + i + "'" : String.valueOf(value);
    }
  }

  enum ArithOp {
    ADD("+"), SUB("-"), MUL("*"), DIV("/"), MOD("%");
    final String symbol;

    ArithOp(String symbol) {
      this.symbol = symbol;
    }
  }

  /**
   * Arithmetic on numbers ({@link Type#arithmetic}: DOUBLE if a side is, else NUMERIC if a side is,
   * exactly, in {@link io.cairn.engine.row.Numeric}'s bounds; else BIGINT). On dates, as PostgreSQL:
   * DATE ± BIGINT (days) and BIGINT + DATE are a DATE, DATE − DATE is a BIGINT (days between). On
   * intervals, as PostgreSQL: TIMESTAMP or DATE ± INTERVAL (and INTERVAL + either) is a TIMESTAMP
   * ({@link io.cairn.engine.row.Interval#addTo}), TIMESTAMP − TIMESTAMP an INTERVAL of days and time
   * (a DATE beside a TIMESTAMP is its midnight), INTERVAL ± INTERVAL an INTERVAL, INTERVAL × BIGINT
   * and INTERVAL ÷ BIGINT an INTERVAL.
   */
  record Arith(ArithOp op, Expr left, Expr right, Type type) implements Expr {
    /** The result type is computed once, here (a deep expression asks for it at every level). */
    public Arith {
      Objects.requireNonNull(op);
      type = resultType(op, left, right);
    }

    public Arith(ArithOp op, Expr left, Expr right) {
      this(op, left, right, null);
    }

    private static Type resultType(ArithOp op, Expr left, Expr right) {
      Type a = left.type();
      Type b = right.type();
      if (a == Type.INTERVAL || b == Type.INTERVAL || a == Type.TIMESTAMP || b == Type.TIMESTAMP) {
        return intervalResult(op, a, b, left, right); // throws when the operation is not one of them
      }
      if (a == Type.DATE || b == Type.DATE) {
        return dateResult(op, a, b, left, right); // throws when the operation is not one on dates
      }
      for (Expr e : new Expr[] {left, right}) {
        Type t = e == left ? a : b;
        if (!t.isNumeric() && t != Type.NULL) {
          throw new IllegalArgumentException("Cannot apply '" + op.symbol + "' to " + t + " (" + e + ")");
        }
      }
      return Type.arithmetic(a, b);
    }

    private static Type intervalResult(ArithOp op, Type a, Type b, Expr left, Expr right) {
      boolean at = a == Type.TIMESTAMP || a == Type.DATE;
      boolean bt = b == Type.TIMESTAMP || b == Type.DATE;
      boolean ai = a == Type.INTERVAL || a == Type.NULL;
      boolean bi = b == Type.INTERVAL || b == Type.NULL;
      if (at && bi && (op == ArithOp.ADD || op == ArithOp.SUB) || ai && bt && op == ArithOp.ADD) {
        return Type.TIMESTAMP;
      }
      if ((at || a == Type.NULL) && (bt || b == Type.NULL) && op == ArithOp.SUB) {
        return Type.INTERVAL;
      }
      if (ai && bi && (op == ArithOp.ADD || op == ArithOp.SUB)) {
        return Type.INTERVAL;
      }
      if (a == Type.INTERVAL && (b == Type.BIGINT || b == Type.NULL) && (op == ArithOp.MUL || op == ArithOp.DIV)
          || (a == Type.BIGINT || a == Type.NULL) && b == Type.INTERVAL && op == ArithOp.MUL) {
        return Type.INTERVAL;
      }
      throw new IllegalArgumentException("Cannot apply '" + op.symbol + "' to " + a + " and " + b + " (" + left + " " + op.symbol + " "
          + right + "): a TIMESTAMP takes + or - an INTERVAL, and - another TIMESTAMP; an INTERVAL takes + or - an INTERVAL,"
          + " * or / a BIGINT");
    }

    /** A TIMESTAMP or DATE value as microseconds since the epoch (a DATE's midnight). */
    private static long micros(Object v, Type t) {
      return t == Type.DATE ? Math.multiplyExact((Long) v, Type.MICROS_PER_DAY) : (Long) v;
    }

    private Object evalInterval(Object a, Object b) {
      Type lt = left.type();
      Type rt = right.type();
      if (type == Type.TIMESTAMP) { // a moment moved by an interval
        boolean intervalRight = b instanceof io.cairn.engine.row.Interval;
        io.cairn.engine.row.Interval iv = (io.cairn.engine.row.Interval) (intervalRight ? b : a);
        return (op == ArithOp.SUB ? iv.negate() : iv).addTo(intervalRight ? micros(a, lt) : micros(b, rt));
      }
      if (a instanceof io.cairn.engine.row.Interval x && b instanceof io.cairn.engine.row.Interval y) {
        return op == ArithOp.ADD ? x.plus(y) : x.minus(y);
      }
      if (a instanceof io.cairn.engine.row.Interval x) {
        if (op == ArithOp.MUL) {
          return x.times((Long) b);
        }
        if ((Long) b == 0) {
          throw new ArithmeticException("division by zero in " + this);
        }
        return x.dividedBy((Long) b);
      }
      if (b instanceof io.cairn.engine.row.Interval y) {
        return y.times((Long) a);
      }
      return io.cairn.engine.row.Interval.between(micros(a, lt), micros(b, rt)); // TIMESTAMP - TIMESTAMP
    }

    private static Type dateResult(ArithOp op, Type a, Type b, Expr left, Expr right) {
      if (a == Type.DATE && b == Type.DATE && op == ArithOp.SUB) {
        return Type.BIGINT;
      }
      if (a == Type.DATE && (b == Type.BIGINT || b == Type.NULL) && (op == ArithOp.ADD || op == ArithOp.SUB)) {
        return Type.DATE;
      }
      if (b == Type.DATE && (a == Type.BIGINT || a == Type.NULL) && op == ArithOp.ADD) {
        return Type.DATE;
      }
      throw new IllegalArgumentException("Cannot apply '" + op.symbol + "' to " + a + " and " + b + " (" + left + " " + op.symbol + " " + right
          + "): a DATE takes + or - a BIGINT number of days, and - another DATE");
    }

    @Override
    public Object eval(Row row) {
      Object a = left.eval(row);
      Object b = right.eval(row);
      if (a == null || b == null) {
        return null;
      }
      try {
        return evalValues(a, b);
      } catch (ArithmeticException e) {
        if ("long overflow".equals(e.getMessage()) || "integer overflow".equals(e.getMessage())) {
          throw new ArithmeticException(type + " out of range in " + this); // as PostgreSQL's "bigint out of range"
        }
        throw e;
      }
    }

    private Object evalValues(Object a, Object b) {
      Type t = type();
      if (t == Type.INTERVAL || t == Type.TIMESTAMP) {
        return evalInterval(a, b);
      }
      if (t == Type.BIGINT || t == Type.DATE) { // DATE: days
        long x = (Long) a;
        long y = (Long) b;
        return switch (op) {
          case ADD -> Math.addExact(x, y);
          case SUB -> Math.subtractExact(x, y);
          case MUL -> Math.multiplyExact(x, y);
          case DIV -> {
            if (y == 0) {
              throw new ArithmeticException("division by zero in " + this);
            }
            yield x / y;
          }
          case MOD -> {
            if (y == 0) {
              throw new ArithmeticException("division by zero in " + this);
            }
            yield x % y;
          }
        };
      }
      if (t == Type.NUMERIC) {
        java.math.BigDecimal x = io.cairn.engine.row.Numeric.of(a);
        java.math.BigDecimal y = io.cairn.engine.row.Numeric.of(b);
        return switch (op) {
          case ADD -> io.cairn.engine.row.Numeric.of(x.add(y));
          case SUB -> io.cairn.engine.row.Numeric.of(x.subtract(y));
          case MUL -> io.cairn.engine.row.Numeric.of(x.multiply(y));
          case DIV -> {
            if (y.signum() == 0) {
              throw new ArithmeticException("division by zero in " + this);
            }
            yield io.cairn.engine.row.Numeric.divide(x, y);
          }
          case MOD -> {
            if (y.signum() == 0) {
              throw new ArithmeticException("division by zero in " + this);
            }
            yield io.cairn.engine.row.Numeric.of(x.remainder(y));
          }
        };
      }
      double x = ((Number) a).doubleValue();
      double y = ((Number) b).doubleValue();
      return switch (op) {
        case ADD -> x + y;
        case SUB -> x - y;
        case MUL -> x * y;
        case DIV -> {
          if (y == 0) {
            throw new ArithmeticException("division by zero in " + this);
          }
          yield x / y;
        }
        case MOD -> {
          if (y == 0) {
            throw new ArithmeticException("division by zero in " + this);
          }
          yield x % y;
        }
      };
    }

    @Override
    public String toString() {
      return "(" + left + " " + op.symbol + " " + right + ")";
    }
  }

  enum CmpOp {
    EQ("="), NE("<>"), LT("<"), LE("<="), GT(">"), GE(">=");
    final String symbol;

    CmpOp(String symbol) {
      this.symbol = symbol;
    }
  }

  /**
   * A comparison; both sides must be comparable (numbers with numbers, same type otherwise; a DATE
   * is compared with a TIMESTAMP as its midnight: the planner wraps it in {@link
   * TimestampShift#toTimestamp}).
   */
  record Cmp(CmpOp op, Expr left, Expr right) implements Expr {
    public Cmp {
      Type a = left.type();
      Type b = right.type();
      boolean ok = a == b || a == Type.NULL || b == Type.NULL || (a.isNumeric() && b.isNumeric());
      if (!ok) {
        throw new IllegalArgumentException("Cannot compare " + a + " with " + b + " in " + left + " " + op.symbol + " " + right);
      }
    }

    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      Object a = left.eval(row);
      Object b = right.eval(row);
      if (a == null || b == null) {
        return null;
      }
      int c = Row.compareValues(a, b); // numbers numerically: exactly unless a DOUBLE is involved
      return switch (op) {
        case EQ -> c == 0;
        case NE -> c != 0;
        case LT -> c < 0;
        case LE -> c <= 0;
        case GT -> c > 0;
        case GE -> c >= 0;
      };
    }

    @Override
    public String toString() {
      return "(" + left + " " + op.symbol + " " + right + ")";
    }
  }

  private static void requireBoolean(Expr e, String op) {
    if (e.type() != Type.BOOLEAN && e.type() != Type.NULL) {
      throw new IllegalArgumentException("Cannot apply " + op + " to " + e.type() + " (" + e + ")");
    }
  }

  /** Three-valued AND. */
  record And(Expr left, Expr right) implements Expr {
    public And {
      requireBoolean(left, "AND");
      requireBoolean(right, "AND");
    }

    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      Object a = left.eval(row);
      if (Boolean.FALSE.equals(a)) {
        return false;
      }
      Object b = right.eval(row);
      if (Boolean.FALSE.equals(b)) {
        return false;
      }
      return a == null || b == null ? null : true;
    }

    @Override
    public String toString() {
      return "(" + left + " AND " + right + ")";
    }
  }

  /** Three-valued OR. */
  record Or(Expr left, Expr right) implements Expr {
    public Or {
      requireBoolean(left, "OR");
      requireBoolean(right, "OR");
    }

    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      Object a = left.eval(row);
      if (Boolean.TRUE.equals(a)) {
        return true;
      }
      Object b = right.eval(row);
      if (Boolean.TRUE.equals(b)) {
        return true;
      }
      return a == null || b == null ? null : false;
    }

    @Override
    public String toString() {
      return "(" + left + " OR " + right + ")";
    }
  }

  /** Three-valued NOT. */
  record Not(Expr input) implements Expr {
    public Not {
      requireBoolean(input, "NOT");
    }

    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      Object a = input.eval(row);
      return a == null ? null : !(Boolean) a;
    }

    @Override
    public String toString() {
      return "NOT " + input;
    }
  }

  /** {@code input IS NULL}, or {@code IS NOT NULL} when negated. Never NULL itself. */
  record IsNull(Expr input, boolean negated) implements Expr {
    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      return (input.eval(row) == null) != negated;
    }

    @Override
    public String toString() {
      return input + (negated ? " IS NOT NULL" : " IS NULL");
    }
  }

  /**
   * {@code CASE WHEN c1 THEN r1 ... ELSE otherwise END}: the result of the first condition that is
   * TRUE (NULL and FALSE pass on), else {@code otherwise} (NULL when there is no ELSE). A simple
   * CASE ({@code CASE x WHEN v THEN ...}) is planned as conditions {@code x = v}. {@code type} is
   * the results' type: one type, or DOUBLE when BIGINT and DOUBLE results mix (a BIGINT result is
   * then returned as a DOUBLE).
   */
  record Case(List<Expr> conditions, List<Expr> results, Expr otherwise, Type type) implements Expr {
    public Case {
      conditions = List.copyOf(conditions);
      results = List.copyOf(results);
      if (conditions.isEmpty() || conditions.size() != results.size()) {
        throw new IllegalArgumentException("Cannot plan CASE: it needs one result per WHEN, and at least one WHEN");
      }
      for (Expr c : conditions) {
        requireBoolean(c, "CASE WHEN");
      }
      java.util.Objects.requireNonNull(otherwise, "otherwise");
    }

    @Override
    public Object eval(Row row) {
      for (int i = 0; i < conditions.size(); i++) {
        if (Boolean.TRUE.equals(conditions.get(i).eval(row))) {
          return as(results.get(i).eval(row));
        }
      }
      return as(otherwise.eval(row));
    }

    private Object as(Object v) {
      return widen(v, type);
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder("CASE");
      for (int i = 0; i < conditions.size(); i++) {
        sb.append(" WHEN ").append(conditions.get(i)).append(" THEN ").append(results.get(i));
      }
      return sb.append(" ELSE ").append(otherwise).append(" END").toString();
    }
  }

  /**
   * {@code input [NOT] [I]LIKE pattern}: {@code %} matches any run of characters, {@code _} one
   * character, and the escape character (default backslash) makes the next one literal; the whole
   * text must match. NULL when {@code input} is NULL. The pattern is a constant, compiled once.
   */
  record Like(Expr input, String pattern, char escape, boolean caseInsensitive, boolean negated, java.util.regex.Pattern regex)
      implements Expr {
    /** A LIKE of {@code input} against {@code pattern}. */
    public static Like of(Expr input, String pattern, char escape, boolean caseInsensitive, boolean negated) {
      StringBuilder re = new StringBuilder();
      for (int i = 0; i < pattern.length(); i++) {
        char c = pattern.charAt(i);
        if (c == escape) {
          if (i + 1 >= pattern.length()) {
            throw new IllegalArgumentException("Cannot plan LIKE '" + pattern + "': it ends with the escape character");
          }
          re.append(java.util.regex.Pattern.quote(String.valueOf(pattern.charAt(++i))));
        } else if (c == '%') {
          re.append(".*");
        } else if (c == '_') {
          re.append('.');
        } else {
          re.append(java.util.regex.Pattern.quote(String.valueOf(c)));
        }
      }
      int flags = java.util.regex.Pattern.DOTALL | (caseInsensitive ? java.util.regex.Pattern.CASE_INSENSITIVE | java.util.regex.Pattern.UNICODE_CASE : 0);
      return new Like(input, pattern, escape, caseInsensitive, negated, java.util.regex.Pattern.compile(re.toString(), flags));
    }

    @Override
    public Type type() {
      return Type.BOOLEAN;
    }

    @Override
    public Object eval(Row row) {
      Object v = input.eval(row);
      return v == null ? null : regex.matcher((String) v).matches() != negated;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Like l && l.input.equals(input) && l.pattern.equals(pattern) && l.escape == escape
          && l.caseInsensitive == caseInsensitive && l.negated == negated;
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(input, pattern, escape, caseInsensitive, negated);
    }

    @Override
    public String toString() {
      return input + (negated ? " NOT" : "") + (caseInsensitive ? " ILIKE '" : " LIKE '") + pattern.replace("'", "''") + "'";
    }
  }

  /**
   * A TIMESTAMP moved by an interval: {@code months} calendar months (the day of month clamped, as
   * PostgreSQL does), then {@code micros} microseconds; NULL stays NULL. TIMESTAMPs are
   * microseconds since the Unix epoch, in UTC. A DATE input is its midnight (PostgreSQL's {@code
   * date + interval} is a timestamp), so a shift by nothing is the cast of a DATE to TIMESTAMP
   * ({@link #toTimestamp}).
   */
  record TimestampShift(Expr input, long months, long micros) implements Expr {
    public TimestampShift {
      if (input.type() != Type.TIMESTAMP && input.type() != Type.DATE && input.type() != Type.NULL) {
        throw new IllegalArgumentException("Cannot add an interval to " + input.type() + " (" + input + "): a TIMESTAMP or DATE is required");
      }
    }

    /** {@code input} as a TIMESTAMP: itself when it is one, its midnight (UTC) when it is a DATE. */
    public static Expr toTimestamp(Expr input) {
      return input.type() == Type.DATE ? new TimestampShift(input, 0, 0) : input;
    }

    /** {@code t} moved by {@code months} then {@code micros}. */
    public static long shift(long t, long months, long micros) {
      return io.cairn.engine.row.Interval.shift(t, months, micros);
    }

    @Override
    public Type type() {
      return Type.TIMESTAMP;
    }

    @Override
    public Object eval(Row row) {
      Object v = input.eval(row);
      if (v == null) {
        return null;
      }
      long t = input.type() == Type.DATE ? Math.multiplyExact((Long) v, Type.MICROS_PER_DAY) : (Long) v;
      return shift(t, months, micros);
    }

    @Override
    public String toString() {
      if (months == 0 && micros == 0) {
        return "CAST(" + input + " AS TIMESTAMP)";
      }
      return "(" + input + " + INTERVAL '" + months + " months " + micros + " microseconds')";
    }
  }

  /**
   * {@code EXTRACT(field FROM input)} of a TIMESTAMP (UTC), a DATE (its midnight) or an INTERVAL ({@link
   * io.cairn.engine.row.Interval#extract}: YEAR, QUARTER, MONTH, DAY, HOUR, MINUTE, SECOND, EPOCH): YEAR, QUARTER, MONTH, WEEK (ISO),
   * DAY, DOW (0 = Sunday), ISODOW (7 = Sunday), DOY, HOUR, MINUTE as BIGINT; SECOND (with its
   * fraction) and EPOCH (seconds) as DOUBLE. NULL stays NULL.
   */
  record Extract(String field, Expr input) implements Expr {
    static final java.util.Set<String> FIELDS = java.util.Set.of("year", "quarter", "month", "week", "day", "dow", "isodow", "doy",
        "hour", "minute", "second", "epoch");

    public Extract {
      if (!FIELDS.contains(field)) {
        throw new IllegalArgumentException("Cannot EXTRACT " + field + ": the fields are " + new java.util.TreeSet<>(FIELDS));
      }
      if (input.type() != Type.TIMESTAMP && input.type() != Type.DATE && input.type() != Type.INTERVAL && input.type() != Type.NULL) {
        throw new IllegalArgumentException("Cannot EXTRACT from " + input.type() + " (" + input + "): a TIMESTAMP, DATE or INTERVAL is required");
      }
      if (input.type() == Type.INTERVAL && !INTERVAL_FIELDS.contains(field)) {
        throw new IllegalArgumentException("Cannot EXTRACT " + field + " from an INTERVAL (" + input + "): the fields are "
            + new java.util.TreeSet<>(INTERVAL_FIELDS));
      }
    }

    static final java.util.Set<String> INTERVAL_FIELDS = java.util.Set.of("year", "quarter", "month", "day", "hour", "minute", "second", "epoch");

    @Override
    public Type type() {
      return field.equals("second") || field.equals("epoch") ? Type.DOUBLE : Type.BIGINT;
    }

    @Override
    public Object eval(Row row) {
      Object v = input.eval(row);
      if (v == null) {
        return null;
      }
      if (v instanceof io.cairn.engine.row.Interval i) {
        return i.extract(field);
      }
      long t = input.type() == Type.DATE ? Math.multiplyExact((Long) v, Type.MICROS_PER_DAY) : (Long) v;
      if (field.equals("epoch")) {
        return t / 1e6;
      }
      java.time.LocalDateTime d = java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(t, 1_000_000L),
          (int) Math.floorMod(t, 1_000_000L) * 1000, java.time.ZoneOffset.UTC);
      return switch (field) {
        case "year" -> (long) d.getYear();
        case "quarter" -> (long) ((d.getMonthValue() - 1) / 3 + 1);
        case "month" -> (long) d.getMonthValue();
        case "week" -> (long) d.get(java.time.temporal.IsoFields.WEEK_OF_WEEK_BASED_YEAR);
        case "day" -> (long) d.getDayOfMonth();
        case "dow" -> (long) (d.getDayOfWeek().getValue() % 7);
        case "isodow" -> (long) d.getDayOfWeek().getValue();
        case "doy" -> (long) d.getDayOfYear();
        case "hour" -> (long) d.getHour();
        case "minute" -> (long) d.getMinute();
        default -> d.getSecond() + d.getNano() / 1e9; // second
      };
    }

    @Override
    public String toString() {
      return "EXTRACT(" + field + " FROM " + input + ")";
    }
  }

  /**
   * A scalar function of {@link Fn}, as PostgreSQL's: NULL in (any argument; COALESCE: every
   * argument) is NULL out. Argument types are checked by the planner ({@link Fn#check}).
   */
  record Func(Fn fn, List<Expr> args) implements Expr {
    /** The functions, with their argument rules. */
    public enum Fn {
      /** {@code SUBSTRING(text FROM start [FOR count])} or {@code SUBSTRING(text, start [, count])}: characters, from 1. */
      SUBSTRING,
      /** {@code UPPER(text)}, {@code LOWER(text)}. */
      UPPER, LOWER,
      /** {@code LENGTH(text)} / {@code CHAR_LENGTH}: characters. */
      LENGTH,
      /** {@code COALESCE(a, b, ...)}: the first non-NULL argument; all of one type (or numbers, widened). */
      COALESCE,
      /** {@code ABS(number)}. */
      ABS;

      /** Why {@code args} do not fit, or null when they do. */
      public String check(List<Expr> args) {
        java.util.function.Predicate<Expr> text = a -> a.type() == Type.TEXT || a.type() == Type.NULL;
        java.util.function.Predicate<Expr> integer = a -> a.type() == Type.BIGINT || a.type() == Type.NULL;
        return switch (this) {
          case SUBSTRING -> (args.size() == 2 || args.size() == 3) && text.test(args.get(0)) && integer.test(args.get(1))
              && (args.size() == 2 || integer.test(args.get(2))) ? null : "SUBSTRING takes (TEXT FROM BIGINT [FOR BIGINT])";
          case UPPER, LOWER, LENGTH -> args.size() == 1 && text.test(args.get(0)) ? null : this + " takes one TEXT";
          case ABS -> args.size() == 1 && (args.get(0).type().isNumeric() || args.get(0).type() == Type.NULL) ? null : "ABS takes one number";
          case COALESCE -> args.isEmpty() ? "COALESCE takes at least one argument" : common(args) == null
              ? "COALESCE types " + args.stream().map(Expr::type).toList() + " cannot be matched" : null;
        };
      }
    }

    public Func {
      args = List.copyOf(args);
      String why = fn.check(args);
      if (why != null) {
        throw new IllegalArgumentException(why);
      }
    }

    /** The one type of {@code args} (NULLs aside; numbers widened as arithmetic does), or null when they differ. */
    static Type common(List<Expr> args) {
      Type t = Type.NULL;
      for (Expr a : args) {
        Type x = a.type();
        if (x == Type.NULL || x == t) {
          continue;
        }
        if (t == Type.NULL) {
          t = x;
        } else if (t.isNumeric() && x.isNumeric()) {
          t = Type.arithmetic(t, x);
        } else {
          return null;
        }
      }
      return t;
    }

    @Override
    public Type type() {
      return switch (fn) {
        case SUBSTRING, UPPER, LOWER -> Type.TEXT;
        case LENGTH -> Type.BIGINT;
        case ABS -> args.get(0).type();
        case COALESCE -> common(args);
      };
    }

    @Override
    public Object eval(Row row) {
      if (fn == Fn.COALESCE) {
        Type t = type();
        for (Expr a : args) {
          Object v = a.eval(row);
          if (v != null) {
            return widen(v, t);
          }
        }
        return null;
      }
      Object[] v = new Object[args.size()];
      for (int i = 0; i < v.length; i++) {
        v[i] = args.get(i).eval(row);
        if (v[i] == null) {
          return null;
        }
      }
      return switch (fn) {
        case SUBSTRING -> substring((String) v[0], (Long) v[1], v.length == 3 ? (Long) v[2] : null);
        case UPPER -> ((String) v[0]).toUpperCase(java.util.Locale.ROOT);
        case LOWER -> ((String) v[0]).toLowerCase(java.util.Locale.ROOT);
        case LENGTH -> (long) ((String) v[0]).codePointCount(0, ((String) v[0]).length());
        case ABS -> v[0] instanceof Long l ? (Object) Math.absExact(l) : v[0] instanceof Double d ? (Object) Math.abs(d)
            : (Object) ((java.math.BigDecimal) v[0]).abs();
        case COALESCE -> throw new IllegalStateException("unreachable");
      };
    }

    /** PostgreSQL's substring: characters {@code start} to {@code start + count - 1} (from 1) that exist. */
    static String substring(String s, long start, Long count) {
      if (count != null && count < 0) {
        throw new IllegalArgumentException("negative substring length not allowed: " + count);
      }
      long n = s.codePointCount(0, s.length());
      long from = Math.max(start, 1);
      long to = count == null ? n + 1 : Math.min(n + 1, start + count); // exclusive, 1-based
      if (to <= from || from > n) {
        return "";
      }
      int b = s.offsetByCodePoints(0, (int) (from - 1));
      int e = s.offsetByCodePoints(b, (int) (to - from));
      return s.substring(b, e);
    }

    @Override
    public String toString() {
      return fn + args.toString().replace('[', '(').replace(']', ')');
    }
  }
}
