package io.cairn.pgwire;

import io.cairn.engine.sql.SqlScanner;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The compatibility layer: answers, without the engine, what drivers and tools send that is not
 * cairn SQL. Everything not listed here goes to the engine.
 *
 * <ul>
 *   <li>{@code SET ...}, {@code RESET ...}, {@code DISCARD ...}: accepted; a {@code SET name = value}
 *       is remembered for {@code SHOW name} in that session, and changes nothing else.
 *   <li>{@code SHOW name} (not SOURCES, VIEWS, SINKS or FRESHNESS, which are cairn's): the session's value, else the
 *       server's ({@link #SERVER_PARAMETERS}, {@code transaction_isolation} = read committed);
 *       an unknown name is 42704.
 *   <li>{@code BEGIN}/{@code START TRANSACTION}, {@code COMMIT}/{@code END}, {@code
 *       ROLLBACK}/{@code ABORT}: no-ops with their tags (queries read the last closed tick; there
 *       is nothing to commit). The connection tracks the transaction status byte.
 *   <li>{@code SELECT version()}, {@code current_schema()}, {@code current_database()},
 *       {@code current_catalog}, {@code current_user}, {@code session_user}, {@code pg_backend_pid()}.
 *   <li>Catalog queries ({@link CatalogQueries}): psql's {@code \d}, {@code \dt}, {@code \dv},
 *       {@code \dm}, {@code \dn}, {@code \d NAME}, and pgjdbc's {@code DatabaseMetaData.getTables},
 *       {@code getColumns}, {@code getSchemas} and {@code getCatalogs}, answered from the node's
 *       sources (tables) and views (materialized views) in schema {@code public}. Any other
 *       statement that reads {@code pg_catalog} or {@code information_schema} is refused with
 *       0A000, never answered by a guess.
 * </ul>
 *
 * <p>A statement is recognized by its first word ({@link SqlScanner#firstWord}: comments before it
 * are skipped); a {@code SET} value that is one string literal is stored as its content.
 *
 * <p>pgjdbc 42.7 needs nothing more for queries, prepared statements and cancel: types of the
 * columns it is sent (int8, float8, bool, text, timestamp) are in its built-in table, so it issues
 * no pg_catalog query.
 */
final class Compat {
  private static final Logger LOG = LoggerFactory.getLogger(Compat.class);
  static final String SERVER_VERSION = "15.0 (cairn)";

  /** ParameterStatus values sent at startup (and answered by SHOW). */
  static final Map<String, String> SERVER_PARAMETERS;

  static {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("server_version", SERVER_VERSION);
    p.put("server_encoding", "UTF8");
    p.put("client_encoding", "UTF8");
    p.put("DateStyle", "ISO, MDY");
    p.put("IntervalStyle", "postgres");
    p.put("integer_datetimes", "on");
    p.put("standard_conforming_strings", "on");
    p.put("TimeZone", "UTC");
    p.put("is_superuser", "off");
    SERVER_PARAMETERS = java.util.Collections.unmodifiableMap(p);
  }

  private static final Map<String, String> SHOW_ONLY = Map.of(
      "transaction_isolation", "read committed",
      "default_transaction_isolation", "read committed",
      "transaction_read_only", "on",
      "max_identifier_length", "63",
      "search_path", "public",
      "server_version_num", "150000");

  private static final Pattern SET = Pattern.compile("set\\s+(?:session\\s+|local\\s+)?([a-z_][a-z0-9_.]*)\\s*(?:=|\\s+to\\s+)\\s*(.*)",
      Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern SHOW = Pattern.compile("show\\s+(.+)", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern FUNCTION = Pattern.compile(
      "select\\s+(?:pg_catalog\\.)?(version\\(\\)|current_schema(?:\\(\\))?|current_database\\(\\)|current_catalog|current_user|session_user|pg_backend_pid\\(\\))\\s*",
      Pattern.CASE_INSENSITIVE);

  private Compat() {}

  /** The answer to {@code statement} (stripped, no trailing semicolon), or empty to let the engine run it. */
  static Optional<PgResult> answer(String statement, Session s) {
    String first = SqlScanner.firstWord(statement);
    String lower = statement.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ").strip();
    switch (first) {
      case "set" -> {
        Matcher m = SET.matcher(statement.strip());
        if (m.matches()) {
          String v = settingValue(m.group(2).strip());
          s.parameters().put(m.group(1).toLowerCase(Locale.ROOT), v);
        }
        return Optional.of(PgResult.command("SET"));
      }
      case "reset" -> {
        return Optional.of(PgResult.command("RESET"));
      }
      case "discard" -> {
        return Optional.of(PgResult.command("DISCARD ALL"));
      }
      case "begin" -> {
        return Optional.of(PgResult.command("BEGIN"));
      }
      case "commit", "end" -> {
        return Optional.of(PgResult.command("COMMIT"));
      }
      case "rollback", "abort" -> {
        return Optional.of(PgResult.command("ROLLBACK"));
      }
      case "start" -> {
        if (lower.startsWith("start transaction")) {
          return Optional.of(PgResult.command("BEGIN"));
        }
      }
      case "show" -> {
        if (lower.equals("show sources") || lower.equals("show views") || lower.equals("show materialized views")
            || lower.equals("show sinks") || lower.equals("show freshness")) {
          return Optional.empty();
        }
        Matcher m = SHOW.matcher(statement.strip());
        if (m.matches()) {
          String name = m.group(1).strip().toLowerCase(Locale.ROOT).replaceAll("\\s+", " ");
          if (name.equals("transaction isolation level")) {
            name = "transaction_isolation";
          }
          String value = show(name, s);
          if (value == null) {
            throw new SqlStates.PgError(SqlStates.UNDEFINED_OBJECT, "unrecognized configuration parameter \"" + name + "\"");
          }
          return Optional.of(PgResult.text(name, "SHOW", value));
        }
      }
      case "select" -> {
        Matcher m = FUNCTION.matcher(statement.strip());
        if (m.matches()) {
          String f = m.group(1).toLowerCase(Locale.ROOT);
          String col = f.replace("()", "");
          return Optional.of(switch (col) {
            case "version" -> PgResult.text(col, null, "PostgreSQL " + SERVER_VERSION + " on cairn, compiled by javac");
            case "current_schema" -> PgResult.text(col, null, "public");
            case "current_database", "current_catalog" -> PgResult.text(col, null, s.database());
            case "current_user", "session_user" -> PgResult.text(col, null, s.user());
            default -> new PgResult(java.util.List.of(col), java.util.List.of(PgType.INT8),
                java.util.List.of(java.util.List.of((long) s.pid())), "SELECT 1");
          });
        }
      }
      default -> {
        // the engine's
      }
    }
    try {
      return CatalogQueries.answer(statement, s.relations(), s);
    } catch (SqlStates.PgError e) {
      LOG.debug("pgwire: catalog query not answered by the compatibility layer: {}", statement);
      throw e;
    }
  }

  /** A SET value as given: the content of a single string literal ('5s' → 5s), else the text as written. */
  private static String settingValue(String v) {
    SqlScanner.Token t = SqlScanner.first(v);
    if (t != null && t.kind() == SqlScanner.Kind.STRING && t.closed() && t.end() == v.length()) {
      return t.value();
    }
    return v;
  }

  private static String show(String name, Session s) {
    String v = s.parameters().get(name);
    if (v != null) {
      return v;
    }
    for (Map.Entry<String, String> e : SERVER_PARAMETERS.entrySet()) {
      if (e.getKey().equalsIgnoreCase(name)) {
        return e.getValue();
      }
    }
    return SHOW_ONLY.get(name);
  }

  /** What the compatibility layer knows of a session. */
  record Session(String user, String database, int pid, Map<String, String> parameters,
      java.util.function.Supplier<java.util.List<CatalogRelation>> relations) {}
}
