package io.cairn.pgwire;

import io.cairn.engine.sink.ChangeFeed;
import io.cairn.engine.sql.Subscribe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One connection's {@code SUBSCRIBE}s, in the two forms Materialize's users know: {@code COPY
 * (SUBSCRIBE …) TO STDOUT} (and a bare {@code SUBSCRIBE}, sent the same way), which streams rows as
 * COPY data until the client cancels it; and {@code DECLARE c CURSOR FOR SUBSCRIBE …} inside a
 * transaction block, then {@code FETCH [n | ALL] [FROM] c [WITH (TIMEOUT = '1s')]} and {@code
 * CLOSE c}; the cursor statements also as prepared statements (pgjdbc's default).
 *
 * <p>Design: used by the connection's own thread only. A stream writes each tick's rows as it
 * takes them and flushes; it waits for the next tick in steps of {@value #POLL_MILLIS} ms, checking
 * the connection's cancel flag between them, so a cancel ends it within that. A client that stops
 * reading blocks the write, never the engine: its subscription falls behind its bound and is
 * ended. A FETCH waits for the first row up to its TIMEOUT (by default the session's statement
 * timeout) and then returns every row waiting, or {@code n} of them (the rest wait for the next
 * FETCH); a FETCH that finds none in time returns no rows. Cursors end with their transaction.
 */
final class PgSubscriptions {
  static final int POLL_MILLIS = 100;
  private static final Pattern COPY = Pattern.compile("(?is)\\s*copy\\s*\\((.*)\\)\\s*to\\s+stdout\\s*(?:with\\s*\\(\\s*format\\s+text\\s*\\))?\\s*;?\\s*");
  private static final Pattern DECLARE = Pattern.compile("(?is)\\s*declare\\s+([a-z_][a-z0-9_]*)\\s+(?:no\\s+scroll\\s+)?cursor\\s+"
      + "(?:without\\s+hold\\s+)?for\\s+(.*)");
  private static final Pattern FETCH = Pattern.compile("(?is)\\s*fetch\\s+(?:forward\\s+)?(all|\\d{1,9})?\\s*(?:from\\s+|in\\s+)?"
      + "([a-z_][a-z0-9_]*)\\s*(?:with\\s*\\(\\s*timeout\\s*=?\\s*'?([^')]*)'?\\s*\\))?\\s*;?\\s*");
  private static final Pattern CLOSE = Pattern.compile("(?is)\\s*close\\s+([a-z_][a-z0-9_]*|all)\\s*;?\\s*");

  /** What a statement is to this class. */
  enum Kind { NONE, STREAM, DECLARE, FETCH, CLOSE }

  /** Writes COPY's messages for the connection. */
  interface Wire {
    void copyOutStart(int columns);

    void copyData(byte[] line);

    void flush() throws java.io.IOException;
  }

  private record Cursor(Subscribe.Running running, PgResult header, java.util.ArrayDeque<List<Object>> waiting) {}

  private final PgWireServer.Backend backend;
  private final Map<String, Cursor> cursors = new LinkedHashMap<>();

  PgSubscriptions(PgWireServer.Backend backend) {
    this.backend = backend;
  }

  static Kind kind(String sql) {
    String first = io.cairn.engine.sql.SqlScanner.firstWord(sql);
    return switch (first) {
      case "subscribe" -> Kind.STREAM;
      case "copy" -> COPY.matcher(sql).matches() && Subscribe.is(inner(sql)) ? Kind.STREAM : Kind.NONE;
      case "declare" -> Kind.DECLARE;
      case "fetch" -> Kind.FETCH;
      case "close" -> Kind.CLOSE;
      default -> Kind.NONE;
    };
  }

  private static String inner(String sql) {
    Matcher m = COPY.matcher(sql);
    return m.matches() ? m.group(1) : sql;
  }

  /**
   * Streams a subscription as COPY data until {@code canceled} says so (the client gets 57014), the
   * subscription ends (its error is thrown) or the client goes (the write throws).
   */
  void stream(String sql, Wire wire, BooleanSupplier canceled, Runnable throwCanceled) throws java.io.IOException {
    String text = kind(sql) == Kind.STREAM && io.cairn.engine.sql.SqlScanner.firstWord(sql).equals("copy") ? inner(sql) : sql;
    Subscribe.Running running = backend.subscribe(Subscribe.parse(text));
    try {
      int n = running.columns().columns().size();
      PgResult header = ResultTypes.toWire(running.statement().result(new ChangeFeed.Changes(0, List.of(), new long[0]), running.columns()));
      wire.copyOutStart(n);
      wire.flush();
      while (true) {
        if (canceled.getAsBoolean()) {
          throwCanceled.run();
        }
        ChangeFeed.Changes c;
        try {
          c = running.reader().next(POLL_MILLIS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throwCanceled.run();
          return;
        }
        if (c == null) {
          continue;
        }
        for (List<Object> row : running.statement().rows(c, running.columns())) {
          wire.copyData(line(row, header.types()));
        }
        wire.flush();
      }
    } finally {
      running.reader().close();
    }
  }

  /** One row in COPY's text format: tab-separated, {@code \N} for NULL, backslash escapes, a newline at the end. */
  static byte[] line(List<Object> row, List<PgType> types) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < row.size(); i++) {
      if (i > 0) {
        sb.append('\t');
      }
      Object v = row.get(i);
      if (v == null) {
        sb.append("\\N");
        continue;
      }
      String t = types.get(i).text(v);
      for (int k = 0; k < t.length(); k++) {
        char ch = t.charAt(k);
        switch (ch) {
          case '\\' -> sb.append("\\\\");
          case '\n' -> sb.append("\\n");
          case '\r' -> sb.append("\\r");
          case '\t' -> sb.append("\\t");
          default -> sb.append(ch);
        }
      }
    }
    sb.append('\n');
    return sb.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  /** {@code DECLARE c CURSOR FOR SUBSCRIBE …}, in a transaction block ({@code inTransaction}). */
  PgResult declare(String sql, boolean inTransaction) {
    Matcher m = DECLARE.matcher(sql);
    if (!m.matches()) {
      throw new SqlStates.PgError(SqlStates.SYNTAX_ERROR, "Cannot parse DECLARE: expected DECLARE <name> CURSOR FOR SUBSCRIBE <view> …");
    }
    if (!Subscribe.is(m.group(2))) {
      throw new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "Cannot declare cursor " + m.group(1)
          + ": only SUBSCRIBE cursors are supported (run a SELECT directly)");
    }
    if (!inTransaction) {
      throw new SqlStates.PgError("25P01", "DECLARE CURSOR can only be used in transaction blocks (BEGIN first)");
    }
    String name = m.group(1).toLowerCase(Locale.ROOT);
    if (cursors.containsKey(name)) {
      throw new SqlStates.PgError("42P03", "cursor \"" + name + "\" already exists");
    }
    Subscribe.Running running = backend.subscribe(Subscribe.parse(m.group(2)));
    PgResult header = ResultTypes.toWire(running.statement().result(new ChangeFeed.Changes(0, List.of(), new long[0]), running.columns()));
    cursors.put(name, new Cursor(running, header, new java.util.ArrayDeque<>()));
    return PgResult.command("DECLARE CURSOR");
  }

  /** {@code FETCH [n | ALL] [FROM] c [WITH (TIMEOUT = '…')]}: waits for a first row up to the timeout, within {@code canceled}. */
  PgResult fetch(String sql, Duration statementTimeout, BooleanSupplier canceled, Runnable throwCanceled) {
    Matcher m = FETCH.matcher(sql);
    if (!m.matches()) {
      throw new SqlStates.PgError(SqlStates.SYNTAX_ERROR, "Cannot parse FETCH: expected FETCH [<count> | ALL] [FROM] <cursor> "
          + "[WITH (TIMEOUT = '<duration>')]");
    }
    String name = m.group(2).toLowerCase(Locale.ROOT);
    Cursor c = cursors.get(name);
    if (c == null) {
      throw new SqlStates.PgError(SqlStates.INVALID_CURSOR_NAME, "cursor \"" + name + "\" does not exist");
    }
    long limit = m.group(1) == null ? 1 : m.group(1).equalsIgnoreCase("all") ? Long.MAX_VALUE : Long.parseLong(m.group(1));
    Duration timeout = m.group(3) == null ? (statementTimeout == null ? Duration.ofSeconds(30) : statementTimeout) : timeout(m.group(3));
    long deadline = System.nanoTime() + timeout.toNanos();
    int n = c.header().columns().size();
    try {
      while (c.waiting().isEmpty()) {
        if (canceled.getAsBoolean()) {
          throwCanceled.run();
        }
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
          break;
        }
        ChangeFeed.Changes ch = c.running().reader().next(Math.min(left, POLL_MILLIS));
        if (ch != null) {
          c.waiting().addAll(c.running().statement().rows(ch, c.running().columns()));
        }
      }
      // what else is waiting already comes along, without waiting more
      ChangeFeed.Changes more;
      while (c.waiting().size() < limit && (more = c.running().reader().next(0)) != null) {
        c.waiting().addAll(c.running().statement().rows(more, c.running().columns()));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throwCanceled.run();
    } catch (ChangeFeed.Ended e) {
      cursors.remove(name);
      throw e;
    }
    List<List<Object>> rows = new ArrayList<>();
    while (rows.size() < limit && !c.waiting().isEmpty()) {
      rows.add(c.waiting().pollFirst());
    }
    return new PgResult(c.header().columns(), c.header().types(), rows, "FETCH " + rows.size());
  }

  private static Duration timeout(String v) {
    Matcher m = Pattern.compile("(?i)\\s*(\\d{1,9})\\s*(ms|s|min)?\\s*").matcher(v);
    if (!m.matches()) {
      throw new SqlStates.PgError(SqlStates.INVALID_PARAMETER_VALUE, "invalid FETCH timeout '" + v + "' (use e.g. '500ms', '1s', '0s')");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
    return switch (unit) {
      case "ms" -> Duration.ofMillis(n);
      case "min" -> Duration.ofMinutes(n);
      default -> Duration.ofSeconds(n);
    };
  }

  /**
   * What a prepared DECLARE, FETCH or CLOSE returns, without running it: a FETCH of an open cursor
   * has the subscription's columns, the others none. Empty for any other statement (and for a FETCH
   * of a cursor that does not exist: running it says so).
   */
  Optional<PgResult> describe(String sql) {
    return switch (kind(sql)) {
      case DECLARE, CLOSE -> Optional.of(PgResult.command(""));
      case FETCH -> {
        Matcher m = FETCH.matcher(sql);
        Cursor c = m.matches() ? cursors.get(m.group(2).toLowerCase(Locale.ROOT)) : null;
        yield c == null ? Optional.empty() : Optional.of(c.header());
      }
      default -> Optional.empty();
    };
  }

  /** {@code CLOSE c} or {@code CLOSE ALL}. */
  PgResult close(String sql) {
    Matcher m = CLOSE.matcher(sql);
    if (!m.matches()) {
      throw new SqlStates.PgError(SqlStates.SYNTAX_ERROR, "Cannot parse CLOSE: expected CLOSE <cursor> or CLOSE ALL");
    }
    String name = m.group(1).toLowerCase(Locale.ROOT);
    if (name.equals("all")) {
      closeAll();
    } else {
      Cursor c = cursors.remove(name);
      if (c == null) {
        throw new SqlStates.PgError(SqlStates.INVALID_CURSOR_NAME, "cursor \"" + name + "\" does not exist");
      }
      c.running().reader().close();
    }
    return PgResult.command("CLOSE CURSOR");
  }

  /** Ends every cursor (the transaction or the connection ended). */
  void closeAll() {
    cursors.values().forEach(c -> c.running().reader().close());
    cursors.clear();
  }
}
