package io.cairn.engine.sql;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.GreaterThan;
import net.sf.jsqlparser.expression.operators.relational.GreaterThanEquals;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.expression.operators.relational.MinorThan;
import net.sf.jsqlparser.expression.operators.relational.MinorThanEquals;
import net.sf.jsqlparser.expression.operators.relational.NotEqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.parser.ASTNodeAccess;
import net.sf.jsqlparser.parser.ParseException;
import net.sf.jsqlparser.parser.Node;
import net.sf.jsqlparser.parser.Token;
import net.sf.jsqlparser.parser.TokenMgrException;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.select.AllColumns;
import net.sf.jsqlparser.statement.select.AllTableColumns;
import net.sf.jsqlparser.statement.select.FromItem;
import net.sf.jsqlparser.statement.select.Join;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * Plans a SELECT (parsed by JSqlParser) into a {@link Plan}: FROM one source or view, inner
 * {@code JOIN ... ON} equalities (other ON conditions become a filter), WHERE, GROUP BY with
 * COUNT/SUM/MIN/MAX/AVG and HAVING, DISTINCT, projections with arithmetic, comparisons,
 * AND/OR/NOT and IS [NOT] NULL. Anything else is refused as unsupported syntax, naming it and its
 * position.
 *
 * <p>Shape of the plan: Get → Join* → Filter(WHERE) → [Map(group keys, aggregate inputs) → Reduce
 * → Filter(HAVING)] → Map(select list) → [Distinct]. A view with GROUP BY is arranged by the
 * group columns it outputs (so {@code SELECT ... WHERE key = ...} is a lookup); otherwise by the
 * whole row.
 */
final class Planner {
  private static final Pattern POSITION = Pattern.compile("line (\\d+), column (\\d+)");
  private static final Set<String> AGGREGATES = Set.of("count", "sum", "min", "max", "avg");

  /** The planned query and the output columns its arrangement is keyed by (null: whole row). */
  record Planned(Plan plan, int[] keyCols, PlainSelect select) {}

  private final String what;
  private final String sql;
  private final Function<String, Schema> catalog;
  private final StatementBudget budget;

  /**
   * @param what the subject for messages, e.g. "Cannot plan view 'v'"
   * @param sql the SELECT text (prefix blanked, so positions match the statement)
   * @param catalog schema of a source or view by name, or null when there is none
   * @param budget checked while the text is read by the parser (every {@value #PARSE_CHUNK} characters)
   */
  Planner(String what, String sql, Function<String, Schema> catalog, StatementBudget budget) {
    this.what = what;
    this.sql = sql;
    this.catalog = catalog;
    this.budget = budget;
  }

  /** How many characters the parser reads between two checks of the budget. */
  static final int PARSE_CHUNK = 256;

  /**
   * The statement text fed to JSqlParser in chunks, checking the budget before each: the parser
   * reads its input as it goes, so a cancel or a timeout stops a parse within one chunk's work
   * (JSqlParser 5.4 parses in time about linear in the input; {@link Nesting} has refused deep
   * nesting before this runs). An ended budget throws {@link ParseStopped}, an {@link Error}: the
   * parser's token manager takes any {@code Exception} from its input for the end of the input,
   * and would go on to build a syntax error (which for a long statement takes as long again).
   */
  private static final class BudgetedText implements net.sf.jsqlparser.parser.Provider {
    private final String text;
    private final StatementBudget budget;
    private int at;

    BudgetedText(String text, StatementBudget budget) {
      this.text = text;
      this.budget = budget;
    }

    @Override
    public int read(char[] buf, int off, int len) {
      if (budget.ended()) {
        throw ParseStopped.INSTANCE;
      }
      if (at >= text.length()) {
        return -1;
      }
      int n = Math.min(Math.min(len, PARSE_CHUNK), text.length() - at);
      text.getChars(at, at + n, buf, off);
      at += n;
      return n;
    }

    @Override
    public void close() {}
  }

  /** Unwinds the parser when the budget ends (see {@link BudgetedText}); never leaves {@link #parse}. */
  private static final class ParseStopped extends Error {
    static final ParseStopped INSTANCE = new ParseStopped();

    private ParseStopped() {
      super("statement budget ended", null, false, false);
    }
  }

  // ------------------------------------------------------------------ errors and positions

  private SqlException error(Object node, String message) {
    int[] p = position(node);
    return new SqlException(what + ": " + message, p[0], p[1]);
  }

  private int[] position(Object node) {
    if (node instanceof ASTNodeAccess a) {
      Node n = a.getASTNode();
      if (n != null && n.jjtGetFirstToken() != null) {
        Token t = n.jjtGetFirstToken();
        return new int[] {t.beginLine, t.beginColumn};
      }
    }
    if (node instanceof BinaryExpression b) {
      Expression left = b.getLeftExpression();
      while (left instanceof BinaryExpression l) { // iterative: a chain may be hundreds deep
        left = l.getLeftExpression();
      }
      return position(left);
    }
    if (node != null) {
      String needle = node.toString().toLowerCase(Locale.ROOT);
      int i = needle.isEmpty() ? -1 : sql.toLowerCase(Locale.ROOT).indexOf(needle);
      if (i >= 0) {
        int line = 1;
        int col = 1;
        for (int k = 0; k < i; k++) {
          if (sql.charAt(k) == '\n') {
            line++;
            col = 1;
          } else {
            col++;
          }
        }
        return new int[] {line, col};
      }
    }
    return new int[] {0, 0};
  }

  // ------------------------------------------------------------------ parsing

  private PlainSelect parse() {
    net.sf.jsqlparser.statement.Statement st;
    try {
      net.sf.jsqlparser.parser.CCJSqlParser parser = new net.sf.jsqlparser.parser.CCJSqlParser(new BudgetedText(sql, budget));
      // the parser checks its interrupted flag as it goes: the budget's end sets it, from any thread
      try (StatementBudget.Hook stop = budget.onEnd(() -> parser.interrupted = true)) {
        st = parser.Statement();
      }
    } catch (ParseStopped stopped) {
      budget.check();
      throw new IllegalStateException("the parse stopped but the statement's budget has not ended");
    } catch (ParseException | TokenMgrException e) {
      budget.check(); // the parser reads a stopped input as its end: a cancel, not a syntax error
      String msg = e.getMessage() == null ? e.toString() : e.getMessage();
      String first = msg.lines().findFirst().orElse(msg).trim();
      Matcher m = POSITION.matcher(msg);
      if (first.startsWith("Encountered unexpected token:")) {
        first = "syntax error: unexpected " + first.substring("Encountered unexpected token:".length()).trim();
      } else {
        first = "syntax error: " + first;
      }
      first = first.replaceAll("\\s*at line \\d+, column \\d+\\.?", "");
      if (m.find()) {
        throw new SqlException(what + ": " + first, Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), e);
      }
      throw new SqlException(what + ": " + first, 0, 0, e);
    } catch (StackOverflowError e) {
      throw new SqlException(what + ": it is nested too deeply");
    } catch (RuntimeException e) {
      budget.check();
      throw new SqlException(what + ": syntax error: " + e.getMessage(), 0, 0, e);
    }
    if (!(st instanceof PlainSelect ps)) {
      throw new SqlException(what + ": unsupported syntax: only a plain SELECT is supported (no UNION, VALUES or parenthesized query)", 1, 1);
    }
    ExpressionDepth.check(what, ps, budget);
    return ps;
  }

  // ------------------------------------------------------------------ planning

  private record Rel(String alias, String table, Schema schema, int offset, Object node) {}

  /** Parses the SELECT (and nothing more): a syntax error or an ended budget throws. */
  void parseOnly() {
    parse();
  }

  /** Plans a view or a query. {@code allowLimit}: LIMIT is allowed (one-shot queries), else refused. */
  Planned plan(boolean allowLimit) {
    try {
      return planParsed(parse(), allowLimit);
    } catch (StackOverflowError e) {
      // ExpressionDepth bounds every tree the planner walks; should a walk still run out of stack
      throw new SqlException(what + ": it is nested too deeply");
    }
  }

  private Planned planParsed(PlainSelect ps, boolean allowLimit) {
    refuseUnsupported(ps, allowLimit);
    List<Rel> rels = new ArrayList<>();
    Plan input = from(ps, rels);
    Scope rowScope = new Scope(rels, input.schema());
    if (ps.getWhere() != null) {
      Expr w = new Translator(rowScope, null).expr(ps.getWhere());
      requireBoolean(ps.getWhere(), w, "WHERE");
      input = new Plan.Filter(input, w);
    }
    boolean aggregate = ps.getGroupBy() != null || ps.getHaving() != null || hasAggregate(ps);
    Plan out;
    int[] keyCols = null;
    if (!aggregate) {
      List<Expr> exprs = new ArrayList<>();
      List<String> names = new ArrayList<>();
      Translator tr = new Translator(rowScope, null);
      for (SelectItem<?> item : ps.getSelectItems()) {
        Expression e = item.getExpression();
        if (e instanceof AllColumns && !(e instanceof AllTableColumns)) {
          for (Rel r : rels) {
            expand(r, rowScope, exprs, names);
          }
        } else if (e instanceof AllTableColumns atc) {
          expand(rel(rels, atc.getTable(), atc), rowScope, exprs, names);
        } else {
          exprs.add(tr.expr(e));
          names.add(outputName(item, names.size()));
        }
      }
      out = project(input, exprs, names);
    } else {
      AggregatePlan ap = new AggregatePlan(rowScope, ps);
      out = ap.plan(input);
      keyCols = ap.keyCols;
    }
    if (ps.getDistinct() != null) {
      out = new Plan.Distinct(out);
      keyCols = null;
    }
    return new Planned(out, keyCols, ps);
  }

  private void refuseUnsupported(PlainSelect ps, boolean allowLimit) {
    if (ps.getWithItemsList() != null && !ps.getWithItemsList().isEmpty()) {
      throw error(ps, "unsupported syntax: WITH");
    }
    if (ps.getDistinct() != null && ps.getDistinct().getOnSelectItems() != null) {
      throw error(ps.getDistinct(), "unsupported syntax: DISTINCT ON");
    }
    if (ps.getOrderByElements() != null && !ps.getOrderByElements().isEmpty()) {
      throw error(ps.getOrderByElements().get(0), "unsupported syntax: ORDER BY (views are unordered; query results are sorted)");
    }
    if (ps.getLimit() != null && !allowLimit) {
      throw error(ps.getLimit(), "unsupported syntax: LIMIT in a view");
    }
    if (ps.getOffset() != null || ps.getFetch() != null) {
      throw error(ps, "unsupported syntax: OFFSET/FETCH");
    }
    if (ps.getIntoTables() != null || ps.getTop() != null || ps.getQualify() != null
        || (ps.getWindowDefinitions() != null && !ps.getWindowDefinitions().isEmpty())) {
      throw error(ps, "unsupported syntax: INTO, TOP, QUALIFY or WINDOW");
    }
    if (ps.getFromItem() == null) {
      throw error(ps, "unsupported syntax: SELECT without FROM");
    }
  }

  private Plan from(PlainSelect ps, List<Rel> rels) {
    Plan plan = table(ps.getFromItem(), rels, 0);
    if (ps.getJoins() != null) {
      for (Join j : ps.getJoins()) {
        boolean plainInner = !j.isLeft() && !j.isRight() && !j.isFull() && !j.isOuter() && !j.isCross()
            && !j.isNatural() && !j.isSimple() && !j.isSemi() && !j.isApply() && !j.isStraight();
        if (!plainInner) {
          throw error(j.getRightItem(), "unsupported syntax: only inner JOIN ... ON is supported, not '" + j.toString().trim() + "'");
        }
        if (j.getUsingColumns() != null && !j.getUsingColumns().isEmpty()) {
          throw error(j.getRightItem(), "unsupported syntax: JOIN ... USING (write JOIN ... ON a.x = b.x)");
        }
        if (j.getOnExpressions() == null || j.getOnExpressions().isEmpty()) {
          throw error(j.getRightItem(), "unsupported syntax: JOIN without ON");
        }
        List<Rel> left = new ArrayList<>(rels);
        Plan right = table(j.getRightItem(), rels, plan.schema().size());
        Rel rightRel = rels.get(rels.size() - 1);
        Schema joined = plan.schema().concat(renamed(plan.schema(), right.schema()));
        Scope scope = new Scope(rels, joined);
        List<Integer> lk = new ArrayList<>();
        List<Integer> rk = new ArrayList<>();
        List<Expression> residual = new ArrayList<>();
        for (Expression on : j.getOnExpressions()) {
          for (Expression c : conjuncts(on)) {
            if (c instanceof EqualsTo eq
                && eq.getLeftExpression() instanceof net.sf.jsqlparser.schema.Column a
                && eq.getRightExpression() instanceof net.sf.jsqlparser.schema.Column b) {
              int ia = scope.resolve(a);
              int ib = scope.resolve(b);
              int leftCols = plan.schema().size();
              int l = -1;
              int r = -1;
              if (ia < leftCols && ib >= leftCols) {
                l = ia;
                r = ib - leftCols;
              } else if (ib < leftCols && ia >= leftCols) {
                l = ib;
                r = ia - leftCols;
              }
              if (l >= 0) {
                Type lt = plan.schema().type(l);
                Type rt = right.schema().type(r);
                if (lt != rt) {
                  throw error(eq, "type mismatch: cannot join " + a + " (" + joined.type(ia) + ") with " + b + " ("
                      + joined.type(ib) + ")");
                }
                lk.add(l);
                rk.add(r);
                continue;
              }
            }
            residual.add(c);
          }
        }
        if (lk.isEmpty()) {
          throw error(j.getOnExpressions().iterator().next(),
              "unsupported syntax: JOIN ... ON needs an equality between a column of '" + rightRel.alias() + "' and a column of "
                  + left.stream().map(Rel::alias).toList());
        }
        plan = Plan.Join.of(plan, right, lk.stream().mapToInt(i -> i).toArray(), rk.stream().mapToInt(i -> i).toArray());
        for (Expression c : residual) {
          Expr e = new Translator(new Scope(rels, plan.schema()), null).expr(c);
          requireBoolean(c, e, "ON");
          plan = new Plan.Filter(plan, e);
        }
      }
    }
    return plan;
  }

  private static Schema renamed(Schema left, Schema right) {
    Set<String> names = new HashSet<>();
    left.columns().forEach(c -> names.add(c.name()));
    List<Column> cols = new ArrayList<>();
    for (Column c : right.columns()) {
      String n = c.name();
      int k = 2;
      while (!names.add(n)) {
        n = c.name() + "_" + k++;
      }
      cols.add(new Column(n, c.type()));
    }
    return new Schema(cols);
  }

  private Plan table(FromItem item, List<Rel> rels, int offset) {
    if (!(item instanceof Table t)) {
      throw error(item, "unsupported syntax: subquery or function in FROM (name a source or view)");
    }
    if (t.getSchemaName() != null) {
      throw error(t, "unknown table '" + t.getFullyQualifiedName() + "' (cairn has no schemas)");
    }
    String name = unquote(t.getName());
    Schema schema = catalog.apply(name);
    if (schema == null) {
      throw error(t, "unknown table '" + name + "'");
    }
    String alias = t.getAlias() != null ? unquote(t.getAlias().getName()) : name;
    for (Rel r : rels) {
      if (r.alias().equals(alias)) {
        throw error(t, "table name '" + alias + "' is used twice in FROM (give one an alias)");
      }
    }
    rels.add(new Rel(alias, name, schema, offset, t));
    return new Plan.Get(name, schema);
  }

  static String unquote(String s) {
    String x = s;
    if (x.length() >= 2 && ((x.startsWith("\"") && x.endsWith("\"")) || (x.startsWith("`") && x.endsWith("`")))) {
      x = x.substring(1, x.length() - 1);
    }
    return x.toLowerCase(Locale.ROOT);
  }

  private Rel rel(List<Rel> rels, Table t, Object node) {
    String q = unquote(t.getName());
    for (Rel r : rels) {
      if (r.alias().equals(q)) {
        return r;
      }
    }
    throw error(node, "unknown table '" + q + "'");
  }

  private static void expand(Rel r, Scope scope, List<Expr> exprs, List<String> names) {
    for (int i = 0; i < r.schema().size(); i++) {
      int idx = r.offset() + i;
      exprs.add(Expr.col(idx, scope.schema.type(idx)));
      names.add(r.schema().column(i).name());
    }
  }

  private static Plan project(Plan input, List<Expr> exprs, List<String> names) {
    // skip an identity projection
    if (exprs.size() == input.schema().size()) {
      boolean identity = true;
      for (int i = 0; i < exprs.size() && identity; i++) {
        identity = exprs.get(i) instanceof Expr.Col c && c.index() == i && input.schema().column(i).name().equals(names.get(i));
      }
      if (identity) {
        return input;
      }
    }
    List<Column> cols = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < exprs.size(); i++) {
      String n = names.get(i);
      int k = 2;
      String base = n;
      while (!seen.add(n)) {
        n = base + "_" + k++;
      }
      cols.add(new Column(n, exprs.get(i).type()));
    }
    return new Plan.Map(input, exprs, new Schema(cols));
  }

  private static String outputName(SelectItem<?> item, int index) {
    if (item.getAlias() != null) {
      return unquote(item.getAlias().getName());
    }
    Expression e = item.getExpression();
    if (e instanceof net.sf.jsqlparser.schema.Column c) {
      return unquote(c.getColumnName());
    }
    if (e instanceof net.sf.jsqlparser.expression.Function f) {
      return f.getName().toLowerCase(Locale.ROOT);
    }
    return "column" + (index + 1);
  }

  private static List<Expression> conjuncts(Expression e) {
    List<Expression> out = new ArrayList<>();
    if (e instanceof AndExpression a) {
      out.addAll(conjuncts(a.getLeftExpression()));
      out.addAll(conjuncts(a.getRightExpression()));
    } else if (e instanceof ParenthesedExpressionList<?> p && p.size() == 1) {
      out.addAll(conjuncts(p.get(0)));
    } else {
      out.add(e);
    }
    return out;
  }

  private void requireBoolean(Expression node, Expr e, String clause) {
    if (e.type() != Type.BOOLEAN && e.type() != Type.NULL) {
      throw error(node, "type mismatch: " + clause + " condition '" + node + "' is " + e.type() + ", not BOOLEAN");
    }
  }

  private static boolean isAggregate(Expression e) {
    return e instanceof net.sf.jsqlparser.expression.Function f && AGGREGATES.contains(f.getName().toLowerCase(Locale.ROOT));
  }

  private static boolean hasAggregate(PlainSelect ps) {
    for (SelectItem<?> item : ps.getSelectItems()) {
      if (containsAggregate(item.getExpression())) {
        return true;
      }
    }
    return false;
  }

  private static boolean containsAggregate(Expression e) {
    if (isAggregate(e)) {
      return true;
    }
    if (e instanceof BinaryExpression b) {
      return containsAggregate(b.getLeftExpression()) || containsAggregate(b.getRightExpression());
    }
    if (e instanceof ParenthesedExpressionList<?> p) {
      return p.stream().anyMatch(x -> containsAggregate((Expression) x));
    }
    if (e instanceof SignedExpression s) {
      return containsAggregate(s.getExpression());
    }
    if (e instanceof NotExpression n) {
      return containsAggregate(n.getExpression());
    }
    if (e instanceof IsNullExpression n) {
      return containsAggregate(n.getLeftExpression());
    }
    return false;
  }

  // ------------------------------------------------------------------ scopes and expressions

  /** Column resolution over the relations in FROM; {@code schema} is the joined row's schema. */
  private static final java.time.format.DateTimeFormatter TIMESTAMP_TEXT = new java.time.format.DateTimeFormatterBuilder()
      .append(java.time.format.DateTimeFormatter.ISO_LOCAL_DATE)
      .optionalStart().appendLiteral('T').appendPattern("HH:mm[:ss]")
      .optionalStart().appendFraction(java.time.temporal.ChronoField.NANO_OF_SECOND, 0, 9, true).optionalEnd()
      .optionalStart().appendOffset("+HH:MM", "Z").optionalEnd()
      .optionalStart().appendOffset("+HH", "Z").optionalEnd()
      .optionalEnd()
      .parseDefaulting(java.time.temporal.ChronoField.HOUR_OF_DAY, 0)
      .toFormatter(java.util.Locale.ROOT);

  /**
   * Microseconds since the Unix epoch of an ISO date, or date and time (a space or {@code T}
   * between them, optional fraction), with an optional zone offset ({@code Z}, {@code +02},
   * {@code -05:30}); without one the time is UTC.
   *
   * @throws java.time.DateTimeException when {@code text} is not such a timestamp
   */
  static long timestampMicros(String text) {
    String t = text.strip();
    if (t.length() > 10 && t.charAt(10) == ' ') {
      t = t.substring(0, 10) + 'T' + t.substring(11);
    }
    java.time.temporal.TemporalAccessor parsed = TIMESTAMP_TEXT.parse(t);
    java.time.LocalDateTime local = java.time.LocalDateTime.of(java.time.LocalDate.from(parsed),
        parsed.isSupported(java.time.temporal.ChronoField.MINUTE_OF_HOUR) ? java.time.LocalTime.from(parsed) : java.time.LocalTime.MIDNIGHT);
    java.time.ZoneOffset offset = parsed.isSupported(java.time.temporal.ChronoField.OFFSET_SECONDS)
        ? java.time.ZoneOffset.from(parsed) : java.time.ZoneOffset.UTC;
    java.time.Instant i = local.toInstant(offset);
    return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1_000L);
  }

  private final class Scope {
    final List<Rel> rels;
    final Schema schema;

    Scope(List<Rel> rels, Schema schema) {
      this.rels = List.copyOf(rels);
      this.schema = schema;
    }

    /** The index of the column in the joined row; throws naming an unknown or ambiguous column. */
    int resolve(net.sf.jsqlparser.schema.Column c) {
      String name = unquote(c.getColumnName());
      Table t = c.getTable();
      if (t != null && t.getName() != null) {
        Rel r = rel(rels, t, c);
        int i = r.schema().indexOf(name);
        if (i < 0) {
          throw error(c, "unknown column '" + r.alias() + "." + name + "'");
        }
        return r.offset() + i;
      }
      int found = -1;
      for (Rel r : rels) {
        int i = r.schema().indexOf(name);
        if (i >= 0) {
          if (found >= 0) {
            throw error(c, "column '" + name + "' is ambiguous (qualify it with a table name)");
          }
          found = r.offset() + i;
        }
      }
      if (found < 0) {
        throw error(c, "unknown column '" + name + "'");
      }
      return found;
    }
  }

  /**
   * Translates JSqlParser expressions to {@link Expr}. With an {@code agg} context, aggregates and
   * group-by expressions become columns of the Reduce output and any other column is an error.
   */
  private final class Translator {
    final Scope scope;
    final AggregatePlan agg;

    Translator(Scope scope, AggregatePlan agg) {
      this.scope = scope;
      this.agg = agg;
    }

    Expr expr(Expression e) {
      if (agg != null) {
        Expr slot = agg.slot(e);
        if (slot != null) {
          return slot;
        }
      } else if (isAggregate(e)) {
        throw error(e, "aggregate " + e + " is not allowed here");
      }
      if (e instanceof net.sf.jsqlparser.schema.Column c) {
        String n = unquote(c.getColumnName());
        if (c.getTable() == null && (n.equals("true") || n.equals("false"))) {
          return Expr.lit(n.equals("true"));
        }
        if (agg != null) {
          scope.resolve(c); // unknown column first
          throw error(c, "column '" + c + "' must appear in the GROUP BY clause or be used in an aggregate function");
        }
        int i = scope.resolve(c);
        return Expr.col(i, scope.schema.type(i));
      }
      if (e instanceof LongValue l) {
        try {
          return Expr.lit(Long.parseLong(l.getStringValue()));
        } catch (NumberFormatException ex) {
          throw error(e, "integer literal " + l.getStringValue() + " is out of range");
        }
      }
      if (e instanceof DoubleValue d) {
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
          numeric(s, in);
          return new Expr.Arith(Expr.ArithOp.SUB, in.type() == Type.DOUBLE ? Expr.lit(0.0) : Expr.lit(0L), in);
        }
        throw error(e, "unsupported syntax: operator '" + s.getSign() + "'");
      }
      if (e instanceof Addition || e instanceof Subtraction || e instanceof Multiplication || e instanceof Division
          || e instanceof Modulo) {
        BinaryExpression b = (BinaryExpression) e;
        Expr l = expr(b.getLeftExpression());
        Expr r = expr(b.getRightExpression());
        if (!(l.type().isNumeric() || l.type() == Type.NULL) || !(r.type().isNumeric() || r.type() == Type.NULL)) {
          throw error(e, "type mismatch: cannot apply '" + b.getStringExpression() + "' to " + l.type() + " and " + r.type()
              + " in '" + e + "'");
        }
        Expr.ArithOp op = e instanceof Addition ? Expr.ArithOp.ADD
            : e instanceof Subtraction ? Expr.ArithOp.SUB
            : e instanceof Multiplication ? Expr.ArithOp.MUL
            : e instanceof Division ? Expr.ArithOp.DIV : Expr.ArithOp.MOD;
        return new Expr.Arith(op, l, r);
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
        Type a = l.type();
        Type c = r.type();
        boolean ok = a == c || a == Type.NULL || c == Type.NULL || (a.isNumeric() && c.isNumeric());
        if (!ok) {
          throw error(e, "type mismatch: cannot compare " + a + " with " + c + " in '" + e + "'");
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
      if (e instanceof net.sf.jsqlparser.expression.Function f) {
        throw error(e, "unsupported function '" + f.getName() + "'");
      }
      throw error(e, "unsupported syntax: expression '" + e + "'");
    }

    /**
     * A quoted literal compared with a BIGINT, DOUBLE, BOOLEAN or TIMESTAMP operand is read as that
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
          case BOOLEAN -> t.equalsIgnoreCase("true") || t.equalsIgnoreCase("t") ? Expr.lit(true)
              : t.equalsIgnoreCase("false") || t.equalsIgnoreCase("f") ? Expr.lit(false) : e;
          case TIMESTAMP -> new Expr.Lit(timestampMicros(t), Type.TIMESTAMP);
          default -> e;
        };
      } catch (NumberFormatException | java.time.DateTimeException | ArithmeticException ex) {
        return e;
      }
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
        throw error(e, "type mismatch: '" + e + "' is " + x.type() + ", not BOOLEAN");
      }
      return x;
    }

    private void numeric(Expression e, Expr x) {
      if (!x.type().isNumeric() && x.type() != Type.NULL) {
        throw error(e, "type mismatch: '" + e + "' is " + x.type() + ", not a number");
      }
    }
  }

  /** GROUP BY / aggregates: pre-Map → Reduce → HAVING → Map(select list). */
  private final class AggregatePlan {
    final Scope rowScope;
    final PlainSelect ps;
    final List<Expr> groups = new ArrayList<>();
    final List<String> groupNames = new ArrayList<>();
    final List<String> aggKeys = new ArrayList<>(); // normalized text of each aggregate call
    final List<Aggregate.Kind> aggKinds = new ArrayList<>();
    final List<Expr> aggArgs = new ArrayList<>(); // null for COUNT(*)
    final List<String> aggNames = new ArrayList<>();
    int[] keyCols;

    AggregatePlan(Scope rowScope, PlainSelect ps) {
      this.rowScope = rowScope;
      this.ps = ps;
    }

    Plan plan(Plan input) {
      Translator row = new Translator(rowScope, null);
      if (ps.getGroupBy() != null) {
        ExpressionList<?> list = ps.getGroupBy().getGroupByExpressionList();
        if (ps.getGroupBy().getGroupingSets() != null && !ps.getGroupBy().getGroupingSets().isEmpty()) {
          throw error(ps.getGroupBy(), "unsupported syntax: GROUPING SETS");
        }
        for (Object o : list) {
          Expression g = (Expression) o;
          if (g instanceof LongValue) {
            throw error(g, "unsupported syntax: GROUP BY a column number (name the column)");
          }
          groups.add(row.expr(g));
          groupNames.add(g instanceof net.sf.jsqlparser.schema.Column c ? unquote(c.getColumnName()) : "group" + groups.size());
        }
      }
      for (SelectItem<?> item : ps.getSelectItems()) {
        if (item.getExpression() instanceof AllColumns) {
          throw error(item, "unsupported syntax: * with GROUP BY or aggregates (name the columns)");
        }
        collect(item.getExpression(), row);
      }
      if (ps.getHaving() != null) {
        collect(ps.getHaving(), row);
      }
      // pre-map: group keys, then aggregate inputs
      List<Expr> pre = new ArrayList<>(groups);
      List<String> preNames = new ArrayList<>();
      for (int i = 0; i < groups.size(); i++) {
        preNames.add("g" + i);
      }
      int[] argCol = new int[aggArgs.size()];
      for (int a = 0; a < aggArgs.size(); a++) {
        if (aggArgs.get(a) == null) {
          argCol[a] = -1;
        } else {
          argCol[a] = pre.size();
          pre.add(aggArgs.get(a));
          preNames.add("a" + a);
        }
      }
      Plan mapped = project(input, pre, preNames);
      List<Aggregate> aggs = new ArrayList<>();
      List<Column> cols = new ArrayList<>();
      int[] groupBy = new int[groups.size()];
      for (int i = 0; i < groups.size(); i++) {
        groupBy[i] = i;
        cols.add(new Column("g" + i, groups.get(i).type()));
      }
      for (int a = 0; a < aggArgs.size(); a++) {
        Type in = aggArgs.get(a) == null ? Type.BIGINT : aggArgs.get(a).type();
        Aggregate g = new Aggregate(aggKinds.get(a), argCol[a], in);
        aggs.add(g);
        cols.add(new Column("agg" + a, g.resultType()));
      }
      Plan reduce = new Plan.Reduce(mapped, groupBy, aggs, new Schema(cols));
      Translator post = new Translator(rowScope, this);
      if (ps.getHaving() != null) {
        Expr h = post.expr(ps.getHaving());
        requireBoolean(ps.getHaving(), h, "HAVING");
        reduce = new Plan.Filter(reduce, h);
      }
      List<Expr> exprs = new ArrayList<>();
      List<String> names = new ArrayList<>();
      for (SelectItem<?> item : ps.getSelectItems()) {
        exprs.add(post.expr(item.getExpression()));
        names.add(outputName(item, names.size()));
      }
      // arrange by the group columns when the view outputs all of them
      List<Integer> keys = new ArrayList<>();
      for (int g = 0; g < groups.size(); g++) {
        int found = -1;
        for (int i = 0; i < exprs.size() && found < 0; i++) {
          if (exprs.get(i) instanceof Expr.Col c && c.index() == g) {
            found = i;
          }
        }
        keys.add(found);
      }
      keyCols = !keys.isEmpty() && !keys.contains(-1) ? keys.stream().mapToInt(i -> i).toArray() : null;
      return project(reduce, exprs, names);
    }

    private void collect(Expression e, Translator row) {
      if (isAggregate(e)) {
        net.sf.jsqlparser.expression.Function f = (net.sf.jsqlparser.expression.Function) e;
        String key = f.toString().toLowerCase(Locale.ROOT).replaceAll("\\s+", "");
        if (aggKeys.contains(key)) {
          return;
        }
        Aggregate.Kind kind = Aggregate.Kind.valueOf(f.getName().toUpperCase(Locale.ROOT));
        if (f.isDistinct() || f.isUnique()) {
          throw error(e, "unsupported syntax: " + f.getName() + "(DISTINCT ...)");
        }
        Expr arg;
        if (f.isAllColumns() || (f.getParameters() != null && f.getParameters().size() == 1
            && f.getParameters().get(0) instanceof AllColumns)) {
          if (kind != Aggregate.Kind.COUNT) {
            throw error(e, "unsupported syntax: " + f.getName() + "(*) (only COUNT takes *)");
          }
          arg = null;
        } else {
          if (f.getParameters() == null || f.getParameters().size() != 1) {
            throw error(e, f.getName() + " takes exactly one argument");
          }
          Expression p = (Expression) f.getParameters().get(0);
          if (containsAggregate(p)) {
            throw error(p, "aggregate calls cannot be nested");
          }
          arg = row.expr(p);
          if ((kind == Aggregate.Kind.SUM || kind == Aggregate.Kind.AVG) && !arg.type().isNumeric() && arg.type() != Type.NULL) {
            throw error(e, "type mismatch: " + f.getName().toUpperCase(Locale.ROOT) + " needs a number, but '" + p + "' is " + arg.type());
          }
        }
        aggKeys.add(key);
        aggKinds.add(kind);
        aggArgs.add(arg);
        aggNames.add(f.getName().toLowerCase(Locale.ROOT));
        return;
      }
      if (e instanceof BinaryExpression b) {
        collect(b.getLeftExpression(), row);
        collect(b.getRightExpression(), row);
      } else if (e instanceof ParenthesedExpressionList<?> p) {
        for (Object o : p) {
          collect((Expression) o, row);
        }
      } else if (e instanceof SignedExpression s) {
        collect(s.getExpression(), row);
      } else if (e instanceof NotExpression n) {
        collect(n.getExpression(), row);
      } else if (e instanceof IsNullExpression n) {
        collect(n.getLeftExpression(), row);
      }
    }

    /** The Reduce-output column for an aggregate call or a group-by expression, or null. */
    Expr slot(Expression e) {
      if (isAggregate(e)) {
        String key = e.toString().toLowerCase(Locale.ROOT).replaceAll("\\s+", "");
        int a = aggKeys.indexOf(key);
        Type t = new Aggregate(aggKinds.get(a), aggArgs.get(a) == null ? -1 : 0,
            aggArgs.get(a) == null ? Type.BIGINT : aggArgs.get(a).type()).resultType();
        return Expr.col(groups.size() + a, t);
      }
      if (e instanceof LongValue || e instanceof DoubleValue || e instanceof StringValue || e instanceof NullValue) {
        return null;
      }
      try {
        Expr asRow = new Translator(rowScope, null).expr(e);
        int g = groups.indexOf(asRow);
        return g >= 0 ? Expr.col(g, groups.get(g).type()) : null;
      } catch (SqlException notARowExpression) {
        return null;
      }
    }
  }
}
