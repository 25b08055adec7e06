package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Type;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.time.temporal.TemporalAccessor;
import java.util.Locale;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.BooleanValue;
import net.sf.jsqlparser.expression.DoubleValue;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.expression.NotExpression;
import net.sf.jsqlparser.expression.NullValue;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.arithmetic.Addition;
import net.sf.jsqlparser.expression.operators.arithmetic.Division;
import net.sf.jsqlparser.expression.operators.arithmetic.Modulo;
import net.sf.jsqlparser.expression.operators.arithmetic.Multiplication;
import net.sf.jsqlparser.expression.operators.arithmetic.Subtraction;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.conditional.OrExpression;
import java.util.ArrayList;
import java.util.List;
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.expression.operators.relational.GreaterThan;
import net.sf.jsqlparser.expression.operators.relational.GreaterThanEquals;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.expression.operators.relational.MinorThan;
import net.sf.jsqlparser.expression.operators.relational.MinorThanEquals;
import net.sf.jsqlparser.expression.operators.relational.NotEqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;

/**
 * Translates a JSqlParser {@link Expression} into a typed {@link Expr} over the columns of a
 * {@link Scope}'s row, checking types as it goes.
 *
 * <p>What translates: column names (and the bare words {@code true}/{@code false}), BIGINT,
 * DOUBLE, text, NULL and boolean literals, parentheses around one expression, unary {@code +}
 * and {@code -} (a minus on a numeric literal folds into it), {@code + - * / %}, the six
 * comparisons, AND, OR, NOT and IS [NOT] NULL. Anything else throws "unsupported syntax:
 * expression '...'" (or "unsupported function 'f'"); an aggregate call outside an aggregation
 * throws "aggregate ... is not allowed here". Every failure is a {@link SqlException} at the
 * offending node's position, and types are checked per operator: arithmetic and unary signs need
 * numbers, AND/OR/NOT booleans, comparisons operands of one type (any two numbers compare; NULL
 * compares with anything). A quoted literal compared with a non-text operand is read as that
 * operand's type when its text is one ({@code id = '3'}, {@code ts < '2024-01-01'}).
 *
 * <p>Two contexts. Without {@link ReduceSlots} the expression reads the input row (WHERE, ON,
 * GROUP BY keys, aggregate arguments, a select list without aggregation). With them it reads the
 * output of a Reduce (HAVING and the select list of an aggregation): a subexpression the slots
 * know (an aggregate call or a group-by expression) becomes that Reduce column, and any other
 * column reference throws "column 'c' must appear in the GROUP BY clause or be used in an
 * aggregate function" (after checking the column exists).
 *
 * <p>NOT: JSqlParser binds a second NOT to a comparison's left operand ({@code NOT NOT a = 1}
 * parses as {@code NOT ((NOT a) = 1)}); the translator hoists such NOTs above the comparison, as
 * SQL's precedence reads it. This mutates the JSqlParser tree: a hoisted NOT is removed from it.
 */
final class ExpressionTranslator {
  /**
   * The columns of a Reduce's output that a HAVING or post-aggregation select list can read:
   * {@link AggregatePlan} knows them.
   */
  interface ReduceSlots {
    /** The Reduce-output column for an aggregate call or a group-by expression, or null if {@code e} is neither. */
    Expr slot(Expression e);
  }

  private static final DateTimeFormatter TIMESTAMP_TEXT = new DateTimeFormatterBuilder()
      .append(DateTimeFormatter.ISO_LOCAL_DATE)
      .optionalStart().appendLiteral('T').appendPattern("HH:mm[:ss]")
      .optionalStart().appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
      .optionalStart().appendOffset("+HH:MM", "Z").optionalEnd()
      .optionalStart().appendOffset("+HH", "Z").optionalEnd()
      .optionalEnd()
      .parseDefaulting(ChronoField.HOUR_OF_DAY, 0)
      .toFormatter(Locale.ROOT);

  private final PlanErrors errors;
  private final Scope scope;
  private final ReduceSlots agg;
  /** Subexpressions already planned (a scalar subquery's joined value), by identity: empty unless given. */
  private final java.util.Map<Expression, Expr> planned;

  /**
   * @param errors where failures are reported
   * @param scope the row's columns: the input row's, also in the Reduce context (to report an
   *     unknown column before a column that is not grouped)
   * @param agg the Reduce's columns, or null to translate over the input row
   */
  ExpressionTranslator(PlanErrors errors, Scope scope, ReduceSlots agg) {
    this(errors, scope, agg, java.util.Map.of());
  }

  /**
   * As {@link #ExpressionTranslator(PlanErrors, Scope, ReduceSlots)}; {@code planned} maps
   * subexpressions (by identity) to the columns that already hold their values: a scalar subquery
   * joined to the row.
   */
  ExpressionTranslator(PlanErrors errors, Scope scope, ReduceSlots agg, java.util.Map<Expression, Expr> planned) {
    this.errors = errors;
    this.scope = scope;
    this.agg = agg;
    this.planned = planned;
  }

  /** {@code e} as an {@link Expr}; throws a {@link SqlException} for what cannot be translated. */
  Expr expr(Expression e) {
    Expr known = planned.isEmpty() ? null : planned.get(e);
    if (known != null) {
      return known;
    }
    if (agg != null) {
      Expr slot = agg.slot(e);
      if (slot != null) {
        return slot;
      }
    } else if (AggregateCalls.isAggregate(e)) {
      throw errors.error(e, "aggregate " + e + " is not allowed here");
    }
    if (e instanceof net.sf.jsqlparser.schema.Column c) {
      String n = Scope.unquote(c.getColumnName());
      if (c.getTable() == null && (n.equals("true") || n.equals("false"))) {
        return Expr.lit(n.equals("true"));
      }
      if (agg != null) {
        scope.resolve(c); // unknown column first
        throw errors.error(c, "column '" + c + "' must appear in the GROUP BY clause or be used in an aggregate function");
      }
      int i = scope.resolve(c);
      return Expr.col(i, scope.schema().type(i));
    }
    if (e instanceof LongValue l) {
      try {
        return Expr.lit(Long.parseLong(l.getStringValue()));
      } catch (NumberFormatException ex) {
        throw errors.error(e, "integer literal " + l.getStringValue() + " is out of range");
      }
    }
    if (e instanceof DoubleValue d) {
      // a literal with a point is a NUMERIC, as in PostgreSQL (0.06 - 0.01 is exactly 0.05); one with
      // an exponent is a DOUBLE
      String text = d.toString();
      if (text.indexOf('e') < 0 && text.indexOf('E') < 0) {
        try {
          return Expr.lit(io.cairn.engine.row.Numeric.parse(text));
        } catch (NumberFormatException | ArithmeticException ex) {
          throw errors.error(e, "numeric literal " + text + " is out of range (NUMERIC holds up to 20 digits before the point and 18 after it)");
        }
      }
      return Expr.lit(d.getValue());
    }
    if (e instanceof StringValue s) {
      return Expr.lit(s.getValue().replace("''", "'"));
    }
    if (e instanceof NullValue) {
      return Expr.lit(null);
    }
    if (e instanceof BooleanValue b) {
      return Expr.lit(b.getValue());
    }
    if (e instanceof ParenthesedExpressionList<?> p && p.size() == 1) {
      return expr(p.get(0));
    }
    if (e instanceof SignedExpression s) {
      Expr in = expr(s.getExpression());
      if (s.getSign() == '+') {
        numeric(s, in);
        return in;
      }
      if (s.getSign() == '-') {
        if (in instanceof Expr.Lit lit && lit.value() instanceof Long v) {
          return Expr.lit(-v);
        }
        if (in instanceof Expr.Lit lit && lit.value() instanceof Double v) {
          return Expr.lit(-v);
        }
        if (in instanceof Expr.Lit lit && lit.value() instanceof java.math.BigDecimal v) {
          return Expr.lit(io.cairn.engine.row.Numeric.of(v.negate()));
        }
        if (in instanceof Expr.Lit lit && lit.value() instanceof io.cairn.engine.row.Interval v) {
          return Expr.lit(v.negate());
        }
        if (in.type() == Type.INTERVAL) {
          return new Expr.Arith(Expr.ArithOp.MUL, in, Expr.lit(-1L));
        }
        numeric(s, in);
        return new Expr.Arith(Expr.ArithOp.SUB, in.type() == Type.DOUBLE ? Expr.lit(0.0) : Expr.lit(0L), in);
      }
      throw errors.error(e, "unsupported syntax: operator '" + s.getSign() + "'");
    }
    if (e instanceof net.sf.jsqlparser.expression.DateTimeLiteralExpression dt) {
      String text = dt.getValue().replaceAll("^'|'$", "");
      try {
        return switch (dt.getType()) {
          case DATE -> new Expr.Lit(java.time.LocalDate.parse(text).toEpochDay(), Type.DATE);
          case TIMESTAMP -> new Expr.Lit(timestampMicros(text), Type.TIMESTAMP);
          default -> throw errors.error(e, "unsupported syntax: " + dt.getType() + " literal (DATE and TIMESTAMP are supported)");
        };
      } catch (java.time.DateTimeException bad) {
        throw errors.error(e, "'" + text + "' is not a " + dt.getType() + " (write e.g. DATE '2024-03-31' or TIMESTAMP '2024-03-31 12:00:00')");
      }
    }
    if (e instanceof net.sf.jsqlparser.expression.ExtractExpression x) {
      Expr in = expr(x.getExpression());
      try {
        return new Expr.Extract(x.getName().toLowerCase(java.util.Locale.ROOT), in);
      } catch (IllegalArgumentException bad) {
        throw errors.error(e, bad.getMessage());
      }
    }
    if ((e instanceof Addition || e instanceof Subtraction)
        && (((BinaryExpression) e).getRightExpression() instanceof net.sf.jsqlparser.expression.IntervalExpression
            || (e instanceof Addition && ((BinaryExpression) e).getLeftExpression() instanceof net.sf.jsqlparser.expression.IntervalExpression))) {
      // a TIMESTAMP or DATE moved by a constant interval: one shift, folded when the moved value is constant too
      BinaryExpression b = (BinaryExpression) e;
      boolean intervalRight = b.getRightExpression() instanceof net.sf.jsqlparser.expression.IntervalExpression;
      Expr t = expr(intervalRight ? b.getLeftExpression() : b.getRightExpression());
      if (t.type() == Type.TIMESTAMP || t.type() == Type.DATE || t.type() == Type.NULL) {
        io.cairn.engine.row.Interval iv = interval((net.sf.jsqlparser.expression.IntervalExpression) (intervalRight ? b.getRightExpression() : b.getLeftExpression()));
        int sign = e instanceof Subtraction ? -1 : 1;
        try {
          Expr shifted = new Expr.TimestampShift(t, sign * (long) iv.months(),
              sign * Math.addExact(Math.multiplyExact((long) iv.days(), Type.MICROS_PER_DAY), iv.micros()));
          if (t instanceof Expr.Lit lit) { // a constant date and interval: folded now (TPC-H's DATE '…' - INTERVAL '90' DAY)
            return new Expr.Lit(lit.value() == null ? null : shifted.eval(null), Type.TIMESTAMP);
          }
          return shifted;
        } catch (IllegalArgumentException | ArithmeticException bad) {
          throw errors.error(e, bad.getMessage());
        }
      }
    }
    if (e instanceof net.sf.jsqlparser.expression.IntervalExpression i) {
      return new Expr.Lit(interval(i), Type.INTERVAL);
    }
    if (e instanceof Addition || e instanceof Subtraction || e instanceof Multiplication || e instanceof Division
        || e instanceof Modulo) {
      BinaryExpression b = (BinaryExpression) e;
      Expr l = expr(b.getLeftExpression());
      Expr r = expr(b.getRightExpression());
      boolean temporal = java.util.stream.Stream.of(l.type(), r.type())
          .anyMatch(t -> t == Type.DATE || t == Type.TIMESTAMP || t == Type.INTERVAL); // Expr.Arith checks those
      if (!temporal && (!(l.type().isNumeric() || l.type() == Type.NULL) || !(r.type().isNumeric() || r.type() == Type.NULL))) {
        throw errors.error(e, "type mismatch: cannot apply '" + b.getStringExpression() + "' to " + l.type() + " and " + r.type()
            + " in '" + e + "'");
      }
      Expr.ArithOp op = e instanceof Addition ? Expr.ArithOp.ADD
          : e instanceof Subtraction ? Expr.ArithOp.SUB
          : e instanceof Multiplication ? Expr.ArithOp.MUL
          : e instanceof Division ? Expr.ArithOp.DIV : Expr.ArithOp.MOD;
      try {
        return new Expr.Arith(op, l, r);
      } catch (IllegalArgumentException bad) {
        throw errors.error(e, "type mismatch: " + bad.getMessage());
      }
    }
    if (e instanceof EqualsTo || e instanceof NotEqualsTo || e instanceof GreaterThan || e instanceof GreaterThanEquals
        || e instanceof MinorThan || e instanceof MinorThanEquals) {
      BinaryExpression b = (BinaryExpression) e;
      // JSqlParser binds a second NOT to the comparison's left operand ("NOT NOT a = 1" parses as
      // NOT ((NOT a) = 1)); in SQL, NOT binds looser than comparisons: hoist it above the comparison.
      int nots = 0;
      while (hoistNot(b)) {
        nots++;
      }
      Expr l = expr(b.getLeftExpression());
      Expr r = expr(b.getRightExpression());
      l = textLiteralAs(l, r.type());
      r = textLiteralAs(r, l.type());
      if ((l.type() == Type.DATE && r.type() == Type.TIMESTAMP) || (l.type() == Type.TIMESTAMP && r.type() == Type.DATE)) {
        l = Expr.TimestampShift.toTimestamp(l); // a DATE against a TIMESTAMP is its midnight, as in PostgreSQL
        r = Expr.TimestampShift.toTimestamp(r);
      }
      Type a = l.type();
      Type c = r.type();
      boolean ok = a == c || a == Type.NULL || c == Type.NULL || (a.isNumeric() && c.isNumeric());
      if (!ok) {
        throw errors.error(e, "type mismatch: cannot compare " + a + " with " + c + " in '" + e + "'");
      }
      Expr.CmpOp op = e instanceof EqualsTo ? Expr.CmpOp.EQ
          : e instanceof NotEqualsTo ? Expr.CmpOp.NE
          : e instanceof GreaterThan ? Expr.CmpOp.GT
          : e instanceof GreaterThanEquals ? Expr.CmpOp.GE
          : e instanceof MinorThan ? Expr.CmpOp.LT : Expr.CmpOp.LE;
      Expr cmp = new Expr.Cmp(op, l, r);
      for (int i = 0; i < nots; i++) {
        cmp = new Expr.Not(cmp);
      }
      return cmp;
    }
    if (e instanceof AndExpression || e instanceof OrExpression) {
      BinaryExpression b = (BinaryExpression) e;
      Expr l = bool(b.getLeftExpression());
      Expr r = bool(b.getRightExpression());
      return e instanceof AndExpression ? new Expr.And(l, r) : new Expr.Or(l, r);
    }
    if (e instanceof NotExpression n) {
      return new Expr.Not(bool(n.getExpression()));
    }
    if (e instanceof IsNullExpression n) {
      return new Expr.IsNull(expr(n.getLeftExpression()), n.isNot());
    }
    if (e instanceof net.sf.jsqlparser.expression.operators.relational.Between b) {
      // x BETWEEN lo AND hi is x >= lo AND x <= hi (NOT BETWEEN its negation), as SQL defines it
      Expr x = expr(new GreaterThanEquals(b.getLeftExpression(), b.getBetweenExpressionStart()));
      Expr y = expr(new MinorThanEquals(b.getLeftExpression(), b.getBetweenExpressionEnd()));
      Expr both = new Expr.And(x, y);
      return b.isNot() ? new Expr.Not(both) : both;
    }
    if (e instanceof net.sf.jsqlparser.expression.operators.relational.InExpression in) {
      if (!(in.getRightExpression() instanceof net.sf.jsqlparser.expression.operators.relational.ExpressionList<?> list)
          || list.isEmpty()) {
        throw errors.error(e, "unsupported syntax: IN takes a list of values here, not '" + in.getRightExpression() + "'");
      }
      List<Expr> equals = new ArrayList<>();
      for (Expression v : list) {
        equals.add(expr(new EqualsTo(in.getLeftExpression(), v)));
      }
      Expr any = balancedOr(equals, 0, equals.size()); // depth log2(n): a list of thousands evaluates without deep recursion
      return in.isNot() ? new Expr.Not(any) : any;
    }
    if (e instanceof net.sf.jsqlparser.expression.CaseExpression c) {
      return caseOf(c);
    }
    if (e instanceof net.sf.jsqlparser.expression.operators.relational.LikeExpression like) {
      Expr input = expr(like.getLeftExpression());
      if (input.type() != Type.TEXT && input.type() != Type.NULL) {
        throw errors.error(e, "type mismatch: " + like.getLikeKeyWord() + " applies to TEXT, not " + input.type() + " ('" + e + "')");
      }
      if (!(expr(like.getRightExpression()) instanceof Expr.Lit p) || !(p.value() instanceof String pattern)) {
        throw errors.error(e, "unsupported syntax: the pattern of " + like.getLikeKeyWord() + " must be a quoted text constant");
      }
      char escape = '\\';
      if (like.getEscape() != null) {
        Expr esc = expr(like.getEscape());
        if (!(esc instanceof Expr.Lit el) || !(el.value() instanceof String es) || es.length() != 1) {
          throw errors.error(e, "unsupported syntax: ESCAPE takes one quoted character");
        }
        escape = es.charAt(0);
      }
      boolean ci = like.getLikeKeyWord() == net.sf.jsqlparser.expression.operators.relational.LikeExpression.KeyWord.ILIKE;
      if (!ci && like.getLikeKeyWord() != net.sf.jsqlparser.expression.operators.relational.LikeExpression.KeyWord.LIKE) {
        throw errors.error(e, "unsupported syntax: " + like.getLikeKeyWord() + " (LIKE and ILIKE are supported)");
      }
      try {
        return Expr.Like.of(input, pattern, escape, ci, like.isNot());
      } catch (IllegalArgumentException bad) {
        throw errors.error(e, bad.getMessage());
      }
    }
    if (e instanceof net.sf.jsqlparser.expression.Function f) {
      return function(f);
    }
    throw errors.error(e, "unsupported syntax: expression '" + e + "'");
  }

  /** A scalar function of {@link Expr.Func.Fn} (aggregates are planned before this is reached). */
  private Expr function(net.sf.jsqlparser.expression.Function f) {
    String name = f.getName() == null ? "" : f.getName().toUpperCase(java.util.Locale.ROOT);
    Expr.Func.Fn fn = switch (name) {
      case "SUBSTRING", "SUBSTR" -> Expr.Func.Fn.SUBSTRING;
      case "UPPER" -> Expr.Func.Fn.UPPER;
      case "LOWER" -> Expr.Func.Fn.LOWER;
      case "LENGTH", "CHAR_LENGTH", "CHARACTER_LENGTH" -> Expr.Func.Fn.LENGTH;
      case "COALESCE" -> Expr.Func.Fn.COALESCE;
      case "ABS" -> Expr.Func.Fn.ABS;
      default -> throw errors.error(f, "unsupported function '" + f.getName() + "' (the scalar functions are SUBSTRING, UPPER, LOWER,"
          + " LENGTH, COALESCE and ABS)");
    };
    if (f.isDistinct() || f.isAllColumns() || f.getKeep() != null || f.isIgnoreNulls()) {
      throw errors.error(f, "unsupported syntax: '" + f + "'");
    }
    List<Expression> params = new ArrayList<>();
    if (f.getNamedParameters() != null) {
      // SUBSTRING(x FROM a FOR b): the names must be those, in that order
      var named = f.getNamedParameters();
      List<String> names = named.getNames();
      for (int i = 0; i < named.size(); i++) {
        String n = i < names.size() && names.get(i) != null ? names.get(i).trim().toUpperCase(java.util.Locale.ROOT) : "";
        String want = i == 0 ? "" : i == 1 ? "FROM" : "FOR";
        if (fn != Expr.Func.Fn.SUBSTRING || !n.equals(want)) {
          throw errors.error(f, "unsupported syntax: '" + f + "' (write SUBSTRING(text FROM start [FOR count]))");
        }
        params.add((Expression) named.get(i));
      }
    } else if (f.getParameters() != null) {
      for (Object p : f.getParameters()) {
        params.add((Expression) p);
      }
    }
    List<Expr> args = new ArrayList<>();
    for (Expression p : params) {
      args.add(expr(p));
    }
    try {
      return new Expr.Func(fn, args);
    } catch (IllegalArgumentException bad) {
      throw errors.error(f, "type mismatch: " + bad.getMessage() + ", not " + args.stream().map(Expr::type).toList() + " ('" + f + "')");
    }
  }

  private static final java.util.regex.Pattern INTERVAL = java.util.regex.Pattern.compile(
      "(?i)INTERVAL\\s*'\\s*([^']*)'\\s*([a-z]+)?\\s*");
  /**
   * The interval of {@code INTERVAL '90' DAY}, {@code INTERVAL '1 year 2 months'}, {@code INTERVAL
   * '1 day 02:00:00'} and the like: the quoted text, then the unit after it if any, read by {@link
   * io.cairn.engine.row.Interval#parse}.
   */
  private io.cairn.engine.row.Interval interval(net.sf.jsqlparser.expression.IntervalExpression i) {
    java.util.regex.Matcher m = INTERVAL.matcher(i.toString());
    if (!m.matches()) {
      throw errors.error(i, "unsupported syntax: " + i + " (write e.g. INTERVAL '90' DAY or INTERVAL '1 year 2 months')");
    }
    String text = m.group(2) == null ? m.group(1) : m.group(1) + " " + m.group(2);
    try {
      return io.cairn.engine.row.Interval.parse(text);
    } catch (IllegalArgumentException bad) {
      throw errors.error(i, bad.getMessage() + " in " + i + " (write e.g. INTERVAL '90' DAY or INTERVAL '1 year 2 months')");
    }
  }

  /** {@code terms[from, to)} OR-ed as a balanced tree. */
  private static Expr balancedOr(List<Expr> terms, int from, int to) {
    if (to - from == 1) {
      return terms.get(from);
    }
    int mid = (from + to) >>> 1;
    return new Expr.Or(balancedOr(terms, from, mid), balancedOr(terms, mid, to));
  }

  /** A searched or simple CASE; its results must share a type (BIGINT and DOUBLE give DOUBLE). */
  private Expr caseOf(net.sf.jsqlparser.expression.CaseExpression c) {
    List<Expr> conditions = new ArrayList<>();
    List<Expr> results = new ArrayList<>();
    for (net.sf.jsqlparser.expression.WhenClause w : c.getWhenClauses()) {
      if (c.getSwitchExpression() != null) {
        conditions.add(expr(new EqualsTo(c.getSwitchExpression(), w.getWhenExpression())));
      } else {
        conditions.add(condition(w.getWhenExpression(), "CASE WHEN"));
      }
      results.add(expr(w.getThenExpression()));
    }
    Expr otherwise = c.getElseExpression() == null ? new Expr.Lit(null, Type.NULL) : expr(c.getElseExpression());
    Type type = Type.NULL;
    List<Expr> all = new ArrayList<>(results);
    all.add(otherwise);
    for (Expr r : all) {
      Type t = r.type();
      if (t == Type.NULL || t == type) {
        continue;
      }
      if (type == Type.NULL) {
        type = t;
      } else if (type.isNumeric() && t.isNumeric()) {
        type = Type.arithmetic(type, t);
      } else {
        throw errors.error(c, "type mismatch: CASE results are " + type + " and " + t + " (they must have one type)");
      }
    }
    return new Expr.Case(conditions, results, otherwise, type);
  }

  /**
   * {@code e} as the condition of {@code clause} ("WHERE", "ON", "HAVING"): translated, then
   * required to be BOOLEAN (or NULL), else "type mismatch: WHERE condition '...' is T, not BOOLEAN".
   */
  Expr condition(Expression e, String clause) {
    Expr x = expr(e);
    if (x.type() != Type.BOOLEAN && x.type() != Type.NULL) {
      throw errors.error(e, "type mismatch: " + clause + " condition '" + e + "' is " + x.type() + ", not BOOLEAN");
    }
    return x;
  }

  /**
   * A quoted literal compared with a BIGINT, DOUBLE, NUMERIC, BOOLEAN, TIMESTAMP, DATE or INTERVAL operand is read as that
   * type when its text is one ({@code id = '3'}, {@code ts < '2024-01-01 00:00:00'}), as PostgreSQL
   * reads an untyped literal; otherwise it stays TEXT (and the comparison is a type mismatch). A
   * timestamp's text is an ISO date, or date and time (space or {@code T}), optionally with a zone
   * offset ({@code Z}, {@code +02}, {@code -05:30}): without one it is UTC.
   */
  private static Expr textLiteralAs(Expr e, Type other) {
    if (!(e instanceof Expr.Lit lit) || lit.type() != Type.TEXT || !(lit.value() instanceof String text)) {
      return e;
    }
    String t = text.strip();
    try {
      return switch (other) {
        case BIGINT -> Expr.lit(Long.parseLong(t));
        case DOUBLE -> t.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?") ? Expr.lit(Double.parseDouble(t)) : e;
        case NUMERIC -> t.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?") ? Expr.lit(io.cairn.engine.row.Numeric.parse(t)) : e;
        case BOOLEAN -> t.equalsIgnoreCase("true") || t.equalsIgnoreCase("t") ? Expr.lit(true)
            : t.equalsIgnoreCase("false") || t.equalsIgnoreCase("f") ? Expr.lit(false) : e;
        case TIMESTAMP -> new Expr.Lit(timestampMicros(t), Type.TIMESTAMP);
        case DATE -> new Expr.Lit(t.length() == 10 ? LocalDate.parse(t).toEpochDay() : Math.floorDiv(timestampMicros(t), Type.MICROS_PER_DAY), Type.DATE);
        case INTERVAL -> new Expr.Lit(io.cairn.engine.row.Interval.parse(t), Type.INTERVAL);
        default -> e;
      };
    } catch (IllegalArgumentException | DateTimeException | ArithmeticException ex) {
      return e;
    }
  }

  /**
   * Microseconds since the Unix epoch of an ISO date, or date and time (a space or {@code T}
   * between them, optional fraction), with an optional zone offset ({@code Z}, {@code +02},
   * {@code -05:30}); without one the time is UTC.
   *
   * @throws DateTimeException when {@code text} is not such a timestamp
   * @throws ArithmeticException when the instant does not fit in a {@code long} of microseconds
   */
  static long timestampMicros(String text) {
    String t = text.strip();
    if (t.length() > 10 && t.charAt(10) == ' ') {
      t = t.substring(0, 10) + 'T' + t.substring(11);
    }
    TemporalAccessor parsed = TIMESTAMP_TEXT.parse(t);
    LocalDateTime local = LocalDateTime.of(LocalDate.from(parsed),
        parsed.isSupported(ChronoField.MINUTE_OF_HOUR) ? LocalTime.from(parsed) : LocalTime.MIDNIGHT);
    ZoneOffset offset = parsed.isSupported(ChronoField.OFFSET_SECONDS) ? ZoneOffset.from(parsed) : ZoneOffset.UTC;
    Instant i = local.toInstant(offset);
    return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1_000L);
  }

  /** Removes a NOT found at the leftmost operand of {@code b} (through arithmetic); true if one was removed. */
  private boolean hoistNot(BinaryExpression b) {
    Expression l = b.getLeftExpression();
    if (l instanceof NotExpression n && !n.isExclamationMark()) {
      b.setLeftExpression(n.getExpression());
      return true;
    }
    if (l instanceof Addition || l instanceof Subtraction || l instanceof Multiplication || l instanceof Division
        || l instanceof Modulo) {
      return hoistNot((BinaryExpression) l);
    }
    return false;
  }

  private Expr bool(Expression e) {
    Expr x = expr(e);
    if (x.type() != Type.BOOLEAN && x.type() != Type.NULL) {
      throw errors.error(e, "type mismatch: '" + e + "' is " + x.type() + ", not BOOLEAN");
    }
    return x;
  }

  private void numeric(Expression e, Expr x) {
    if (!x.type().isNumeric() && x.type() != Type.NULL) {
      throw errors.error(e, "type mismatch: '" + e + "' is " + x.type() + ", not a number");
    }
  }
}
