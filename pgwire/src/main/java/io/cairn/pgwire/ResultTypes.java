package io.cairn.pgwire;

import io.cairn.engine.row.Type;
import io.cairn.engine.sql.Result;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Column types on the wire. A result carries its columns' types ({@link Result#types()}, the
 * plan's output schema), so an executed statement's RowDescription is {@link #toWire}. A prepared
 * statement described before it runs (Describe of a statement, 'S') has no result yet: its types
 * are read from the plan the engine explains for it ({@code EXPLAIN SELECT ...}: its top line ends
 * with the output schema, "-> (name TYPE, ...)"), within a budget, and cached per statement text
 * while the catalog position is unchanged (at most {@value #CACHE_SIZE} statements).
 */
final class ResultTypes {
  static final int CACHE_SIZE = 512;
  private static final Pattern COLUMN = Pattern.compile("(.+?) (BIGINT|DOUBLE|NUMERIC|TEXT|BOOLEAN|TIMESTAMP|DATE|INTERVAL|NULL)(?:, |$)");

  private final PgWireServer.Backend backend;
  private final Map<String, List<Column>> cache = new LinkedHashMap<>(64, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, List<Column>> e) {
      return size() > CACHE_SIZE;
    }
  };

  /** A described column. */
  record Column(String name, PgType type) {}

  ResultTypes(PgWireServer.Backend backend) {
    this.backend = backend;
  }

  /** The wire result of an engine result: its columns' types (the plan's output schema) as PostgreSQL types. */
  static PgResult toWire(Result r) {
    return new PgResult(r.columns(), r.types().stream().map(PgType::of).toList(), r.rows(), tag(r.message()));
  }

  /**
   * The columns a SELECT returns, from its plan ({@code EXPLAIN}, run within {@code budget}, the
   * statement's own: a cancel or timeout stops it too); empty when it cannot be explained.
   *
   * @throws io.cairn.engine.sql.StatementCanceledException when the budget ended
   */
  Optional<List<Column>> describe(String statement, String cacheKey, io.cairn.engine.sql.StatementBudget budget) {
    if (!isSelect(statement)) {
      return Optional.empty();
    }
    String key = backend.catalogPosition() + "\u0000" + cacheKey;
    synchronized (cache) {
      List<Column> hit = cache.get(key);
      if (hit != null) {
        return Optional.of(hit);
      }
    }
    List<Column> cols;
    try {
      List<Result> plan = backend.execute("EXPLAIN " + statement, budget);
      if (plan.isEmpty() || plan.get(0).rows().isEmpty()) {
        return Optional.empty();
      }
      cols = parseSchema(String.valueOf(plan.get(0).rows().get(0).get(0)));
    } catch (io.cairn.engine.sql.StatementCanceledException e) {
      throw e;
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    if (cols == null) {
      return Optional.empty();
    }
    synchronized (cache) {
      cache.put(key, cols);
    }
    return Optional.of(cols);
  }

  /** The output schema at the end of an EXPLAIN line ("... -> (a BIGINT, b TEXT)"), or null. */
  static List<Column> parseSchema(String line) {
    int at = line.lastIndexOf("  -> (");
    if (at < 0 || !line.endsWith(")")) {
      return null;
    }
    String s = line.substring(at + 6, line.length() - 1);
    List<Column> out = new ArrayList<>();
    Matcher m = COLUMN.matcher(s);
    int pos = 0;
    while (pos < s.length()) {
      if (!m.find(pos) || m.start() != pos) {
        return null;
      }
      out.add(new Column(m.group(1), PgType.of(Type.valueOf(m.group(2)))));
      pos = m.end();
    }
    return out;
  }

  static boolean isSelect(String statement) {
    String s = statement.stripLeading();
    return s.length() >= 6 && s.substring(0, 6).toLowerCase(Locale.ROOT).equals("select")
        && (s.length() == 6 || !Character.isLetterOrDigit(s.charAt(6)));
  }

  /** The CommandComplete tag of an engine message: "SELECT 3 (key lookup)" → "SELECT 3", "SHOW SOURCES" → "SHOW". */
  static String tag(String message) {
    String m = message;
    int paren = m.indexOf(" (");
    if (paren > 0) {
      m = m.substring(0, paren);
    }
    if (m.startsWith("SHOW ")) {
      return "SHOW";
    }
    return m;
  }
}
