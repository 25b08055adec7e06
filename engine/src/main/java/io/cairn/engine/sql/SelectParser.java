package io.cairn.engine.sql;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.sf.jsqlparser.parser.CCJSqlParser;
import net.sf.jsqlparser.parser.ParseException;
import net.sf.jsqlparser.parser.Provider;
import net.sf.jsqlparser.parser.TokenMgrException;
import net.sf.jsqlparser.statement.select.PlainSelect;

/**
 * Parses a SELECT's text with JSqlParser within the statement's {@link StatementBudget}, and
 * turns JSqlParser's failures into {@link SqlException}s.
 *
 * <p>Contract of {@link #parse()}:
 *
 * <ul>
 *   <li>Returns the {@link PlainSelect} once {@link ExpressionDepth} has accepted its expression
 *       trees (a deeper operator chain throws there), so the planner's recursive walks stay
 *       within the stack.
 *   <li>An ended budget (cancel or timeout), also one that ends mid-parse, throws what {@link
 *       StatementBudget#check()} throws, never a syntax error: the text is fed to the parser
 *       {@value #PARSE_CHUNK} characters at a time with the budget checked before each chunk,
 *       and the budget's end also sets the parser's interrupted flag.
 *   <li>A syntax error throws {@code "<what>: syntax error: ..."} at the line and column
 *       JSqlParser reports ("Encountered unexpected token: X" reads "syntax error: unexpected
 *       X"), or without a position when it reports none.
 *   <li>A set operation ({@code UNION}, {@code INTERSECT}, {@code EXCEPT}) is returned as it is,
 *       each of its sides checked as a plain SELECT; anything else (VALUES, a parenthesized query) throws "unsupported
 *       syntax: only a plain SELECT is supported ..." at line 1, column 1; a parser that runs out
 *       of stack throws "it is nested too deeply".
 * </ul>
 */
final class SelectParser {
  /** How many characters the parser reads between two checks of the budget. */
  static final int PARSE_CHUNK = 256;

  private static final Pattern POSITION = Pattern.compile("line (\\d+), column (\\d+)");

  private final PlanErrors errors;
  private final StatementBudget budget;

  /**
   * @param errors the subject and the SELECT text (prefix blanked, so positions match the statement)
   * @param budget checked while the text is read by the parser (every {@value #PARSE_CHUNK} characters)
   */
  SelectParser(PlanErrors errors, StatementBudget budget) {
    this.errors = errors;
    this.budget = budget;
  }

  /**
   * The statement text fed to JSqlParser in chunks, checking the budget before each: the parser
   * reads its input as it goes, so a cancel or a timeout stops a parse within one chunk's work
   * (JSqlParser 5.4 parses in time about linear in the input; {@link Nesting} has refused deep
   * nesting before this runs). An ended budget throws {@link ParseStopped}, an {@link Error}: the
   * parser's token manager takes any {@code Exception} from its input for the end of the input,
   * and would go on to build a syntax error (which for a long statement takes as long again).
   */
  private static final class BudgetedText implements Provider {
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

  /** The parsed SELECT; see the class javadoc for what throws. */
  net.sf.jsqlparser.statement.select.Select parse() {
    String what = errors.what();
    net.sf.jsqlparser.statement.Statement st;
    try {
      CCJSqlParser parser = new CCJSqlParser(new BudgetedText(errors.sql(), budget));
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
    if (st instanceof net.sf.jsqlparser.statement.select.SetOperationList set) {
      for (net.sf.jsqlparser.statement.select.Select branch : set.getSelects()) {
        if (!(branch instanceof PlainSelect ps)) {
          throw new SqlException(what + ": unsupported syntax: each side of UNION, INTERSECT or EXCEPT must be a plain SELECT"
              + " (no VALUES or parenthesized query)", 1, 1);
        }
        ExpressionDepth.check(what, ps, budget);
      }
      return set;
    }
    if (!(st instanceof PlainSelect ps)) {
      throw new SqlException(what + ": unsupported syntax: only SELECT, and SELECTs combined by UNION, INTERSECT or EXCEPT, are"
          + " supported (no VALUES or parenthesized query)", 1, 1);
    }
    ExpressionDepth.check(what, ps, budget);
    return ps;
  }
}
