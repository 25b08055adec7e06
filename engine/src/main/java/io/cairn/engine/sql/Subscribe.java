package io.cairn.engine.sql;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.sink.ChangeFeed;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code SUBSCRIBE [TO] name [WITH (SNAPSHOT = true|false, PROGRESS = true|false)]}: a standing
 * read of a view's (or a source's) changes, and the rows it sends.
 *
 * <p>Rows: {@code (tick, progressed, diff, columns…)}. First, unless {@code SNAPSHOT = false},
 * the contents as of the tick the subscription starts at (diff = each row's multiplicity); then
 * each tick's consolidated changes in tick order (a row whose diffs cancel out within a tick is not
 * sent). With {@code PROGRESS = true} a row {@code (T, true, NULL, NULL…)} follows the changes of
 * every tick T, including a tick with none: it says everything up to T has been sent. Without it
 * a tick with no change sends nothing.
 *
 * @param name the view or source
 * @param snapshot whether the contents at the start come first (default true)
 * @param progress whether each closed tick sends a progress row (default false)
 */
public record Subscribe(String name, boolean snapshot, boolean progress) {
  private static final Pattern SYNTAX = Pattern.compile(
      "(?is)\\s*subscribe\\s+(?:to\\s+)?(\"(?:[^\"]|\"\")+\"|[a-z_][a-z0-9_$]*)\\s*(?:with\\s*\\((.*)\\))?\\s*;?\\s*");
  private static final Pattern OPTION = Pattern.compile("(?is)\\s*([a-z_]+)\\s*(?:=\\s*)?([a-z_']+)?\\s*");

  /** A running subscription: the statement, the columns it sends ({@link #columns}) and its reader, closed by whoever started it. */
  public record Running(Subscribe statement, Schema columns, ChangeFeed.Subscription reader) {}

  /** Whether {@code sql} is a SUBSCRIBE statement (its first word), comments and white space aside. */
  public static boolean is(String sql) {
    return SqlScanner.firstWord(sql).equals("subscribe");
  }

  /**
   * Parses a SUBSCRIBE statement.
   *
   * @throws SqlException (42601) naming what is wrong
   */
  public static Subscribe parse(String sql) {
    if (sql.length() > 10_000) {
      throw new SqlException("Cannot parse SUBSCRIBE: the statement is " + sql.length() + " characters long (at most 10,000)");
    }
    Matcher m = SYNTAX.matcher(sql);
    if (!m.matches()) {
      throw new SqlException("Cannot parse SUBSCRIBE: expected SUBSCRIBE [TO] <view> [WITH (SNAPSHOT = true|false, PROGRESS = "
          + "true|false)], got: " + clip(sql));
    }
    String name = m.group(1);
    name = name.startsWith("\"") ? name.substring(1, name.length() - 1).replace("\"\"", "\"") : name.toLowerCase(Locale.ROOT);
    boolean snapshot = true;
    boolean progress = false;
    if (m.group(2) != null && !m.group(2).isBlank()) {
      for (String opt : m.group(2).split(",")) {
        Matcher o = OPTION.matcher(opt);
        if (!o.matches()) {
          throw new SqlException("Cannot parse SUBSCRIBE option '" + clip(opt.strip()) + "': expected SNAPSHOT = true|false or PROGRESS = "
              + "true|false");
        }
        boolean value = bool(o.group(1), o.group(2));
        switch (o.group(1).toLowerCase(Locale.ROOT)) {
          case "snapshot" -> snapshot = value;
          case "progress" -> progress = value;
          default -> throw new SqlException("Cannot parse SUBSCRIBE: unknown option '" + clip(o.group(1))
              + "' (SNAPSHOT and PROGRESS are known)");
        }
      }
    }
    return new Subscribe(name, snapshot, progress);
  }

  private static boolean bool(String option, String v) {
    if (v == null) {
      return true; // WITH (PROGRESS) means true, as in PostgreSQL's options
    }
    return switch (v.toLowerCase(Locale.ROOT).replace("'", "")) {
      case "true", "on", "1" -> true;
      case "false", "off", "0" -> false;
      default -> throw new SqlException("Cannot parse SUBSCRIBE option " + option + ": '" + clip(v) + "' is not true or false");
    };
  }

  private static String clip(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "…";
  }

  /** The columns a subscription sends: {@code tick}, {@code progressed}, {@code diff}, then the view's. */
  public static Schema columns(Schema view) {
    List<Column> out = new ArrayList<>();
    out.add(new Column("tick", Type.BIGINT));
    out.add(new Column("progressed", Type.BOOLEAN));
    out.add(new Column("diff", Type.BIGINT));
    for (Column c : view.columns()) {
      out.add(c.renamed(c.name().equals("tick") || c.name().equals("progressed") || c.name().equals("diff") ? "_" + c.name() : c.name()));
    }
    return new Schema(out);
  }

  /**
   * The rows one tick's changes send (see the class comment); {@code columns} are the
   * subscription's ({@link #columns}): a NUMERIC of a column with a scale is sent with it.
   */
  public List<List<Object>> rows(ChangeFeed.Changes c, Schema columns) {
    int viewColumns = columns.size() - 3;
    List<List<Object>> out = new ArrayList<>(c.size() + 1);
    for (int i = 0; i < c.size(); i++) {
      List<Object> r = new ArrayList<>(3 + viewColumns);
      r.add(c.tick());
      r.add(false);
      r.add(c.diffs()[i]);
      Row row = c.rows().get(i);
      for (int k = 0; k < viewColumns; k++) {
        r.add(io.cairn.engine.row.Numeric.display(row.get(k), columns.column(3 + k).scale()));
      }
      out.add(r);
    }
    if (progress) {
      List<Object> r = new ArrayList<>(3 + viewColumns);
      r.add(c.tick());
      r.add(true);
      for (int i = 0; i < 1 + viewColumns; i++) {
        r.add(null);
      }
      out.add(r);
    }
    return out;
  }

  /** The rows of {@code c} as a {@link Result} with {@code columns}' names and types. */
  public Result result(ChangeFeed.Changes c, Schema columns) {
    List<String> names = columns.columns().stream().map(Column::name).toList();
    List<Type> types = columns.columns().stream().map(Column::type).toList();
    return new Result(names, types, rows(c, columns), "SUBSCRIBE");
  }
}
