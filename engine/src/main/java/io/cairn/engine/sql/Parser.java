package io.cairn.engine.sql;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.sql.Lexer.Kind;
import io.cairn.engine.sql.Lexer.Token;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The hand-written part of cairn's SQL: statement kinds and CREATE SOURCE / DROP / SHOW / EXPLAIN.
 *
 * <pre>
 * CREATE SOURCE [IF NOT EXISTS] name FROM connector-words [(option = value, ...)]
 *     [FORMAT word] [ENVELOPE NONE|UPSERT|DEBEZIUM] [(col TYPE [PRIMARY KEY], ..., PRIMARY KEY (col, ...))]
 *   option: name [=] value; value: 'string' | number | word | SECRET 'ENV_VAR_NAME'
 *   connector-words: LOAD GENERATOR → "load-generator", KAFKA → "kafka", POSTGRES → "postgres"
 * CREATE MATERIALIZED VIEW [IF NOT EXISTS] name AS SELECT ...
 * CREATE SINK [IF NOT EXISTS] name FROM relation INTO KAFKA (option = value, ...) [KEY (col, ...)]
 *     FORMAT JSON ENVELOPE UPSERT|DEBEZIUM
 * DROP SOURCE|VIEW|MATERIALIZED VIEW|SINK [IF EXISTS] name [CASCADE|RESTRICT]
 * SHOW SOURCES | SHOW VIEWS | SHOW MATERIALIZED VIEWS | SHOW SINKS
 * EXPLAIN [VIEW name | SELECT ... | CREATE MATERIALIZED VIEW name AS SELECT ...]
 * SELECT ...
 * </pre>
 *
 * Names are case-insensitive (stored lower-case). A secret is kept in the options as {@link
 * Secrets#reference} of the variable's name; its value is never read here.
 */
final class Parser {
  private static final Pattern SECRET_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private final String sql;
  private final List<Token> tokens;
  private int at;

  private Parser(String sql, StatementBudget budget) {
    this.sql = sql;
    this.tokens = Lexer.tokenize(sql, budget);
  }

  /** Strips surrounding blanks and trailing semicolons: the text stored in the catalog. */
  static String normalize(String sql) {
    String s = sql.strip();
    while (s.endsWith(";")) {
      s = s.substring(0, s.length() - 1).strip();
    }
    return s;
  }

  /** Parses one normalized statement. */
  static Statement parse(String sql) {
    return parse(sql, StatementBudget.unlimited());
  }

  /** Parses one normalized statement, checking {@code budget} while the text is tokenized. */
  static Statement parse(String sql, StatementBudget budget) {
    return new Parser(sql, budget).statement();
  }

  private Token peek() {
    return tokens.get(at);
  }

  private Token peek(int ahead) {
    return tokens.get(Math.min(at + ahead, tokens.size() - 1));
  }

  private Token next() {
    Token t = tokens.get(at);
    if (t.kind() != Kind.END) {
      at++;
    }
    return t;
  }

  private boolean accept(String word) {
    if (peek().is(word)) {
      at++;
      return true;
    }
    return false;
  }

  private boolean acceptSymbol(String s) {
    if (peek().isSymbol(s)) {
      at++;
      return true;
    }
    return false;
  }

  private SqlException error(Token t, String what) {
    return new SqlException("Cannot parse statement: " + what, t.line(), t.column());
  }

  private SqlException unexpected(Token t, String expected) {
    return error(t, "expected " + expected + " but found " + t.describe());
  }

  private void expect(String word) {
    if (!accept(word)) {
      throw unexpected(peek(), word.toUpperCase(Locale.ROOT));
    }
  }

  private void expectSymbol(String s) {
    if (!acceptSymbol(s)) {
      throw unexpected(peek(), "'" + s + "'");
    }
  }

  private void expectEnd() {
    if (peek().kind() != Kind.END) {
      throw error(peek(), "unexpected " + peek().describe() + " after the end of the statement");
    }
  }

  private Token name(String what) {
    Token t = next();
    if (t.kind() != Kind.WORD && t.kind() != Kind.QUOTED) {
      throw unexpected(t, what);
    }
    if (t.text().isBlank()) {
      throw error(t, what + " is empty");
    }
    return t;
  }

  static String nameOf(Token t) {
    return t.text().toLowerCase(Locale.ROOT);
  }

  /** The statement text from {@code t} on, with everything before it blanked (newlines kept). */
  private String restFrom(Token t) {
    StringBuilder sb = new StringBuilder(sql.length());
    for (int i = 0; i < t.offset(); i++) {
      sb.append(sql.charAt(i) == '\n' ? '\n' : ' ');
    }
    sb.append(sql, t.offset(), sql.length());
    return sb.toString();
  }

  private Statement statement() {
    Token first = peek();
    if (first.kind() == Kind.END) {
      throw new SqlException("Cannot parse statement: it is empty");
    }
    if (accept("create")) {
      if (accept("source")) {
        return createSource();
      }
      if (accept("materialized")) {
        expect("view");
        return createView();
      }
      if (accept("sink")) {
        return createSink();
      }
      throw error(peek(), "unsupported syntax: CREATE " + peek().describe() + " (supported: CREATE SOURCE, CREATE MATERIALIZED VIEW, CREATE SINK)");
    }
    if (accept("drop")) {
      return drop();
    }
    if (accept("show")) {
      Statement.ObjectKind kind;
      if (accept("sources")) {
        kind = Statement.ObjectKind.SOURCE;
      } else if (accept("sinks")) {
        kind = Statement.ObjectKind.SINK;
      } else if (accept("views") || (accept("materialized") && acceptViews())) {
        kind = Statement.ObjectKind.VIEW;
      } else {
        throw error(peek(), "unsupported syntax: SHOW " + peek().describe() + " (supported: SHOW SOURCES, SHOW VIEWS, SHOW SINKS)");
      }
      expectEnd();
      return new Statement.Show(kind);
    }
    if (accept("explain")) {
      if (accept("view") || (peek().is("materialized") && peek(1).is("view") && accept("materialized") && accept("view"))) {
        Token n = name("a view name");
        expectEnd();
        return new Statement.ExplainView(nameOf(n), n);
      }
      if (peek().is("select")) {
        return new Statement.ExplainSelect(null, restFrom(peek()));
      }
      if (accept("create")) {
        expect("materialized");
        expect("view");
        Statement.CreateView cv = createView();
        return new Statement.ExplainSelect(cv.name(), cv.select());
      }
      throw error(peek(), "unsupported syntax: EXPLAIN " + peek().describe() + " (supported: EXPLAIN VIEW name, EXPLAIN SELECT ..., EXPLAIN CREATE MATERIALIZED VIEW ...)");
    }
    if (first.is("select")) {
      return new Statement.Select(restFrom(first));
    }
    throw error(first, "unsupported statement " + first.describe()
        + " (supported: CREATE SOURCE, CREATE MATERIALIZED VIEW, DROP, SHOW, EXPLAIN, SELECT)");
  }

  private boolean acceptViews() {
    if (!accept("views")) {
      throw unexpected(peek(), "VIEWS");
    }
    return true;
  }

  private Statement.CreateView createView() {
    boolean ifNotExists = ifNotExists();
    Token n = name("a view name");
    expect("as");
    if (!peek().is("select")) {
      throw unexpected(peek(), "SELECT");
    }
    return new Statement.CreateView(nameOf(n), n, ifNotExists, restFrom(peek()));
  }

  private boolean ifNotExists() {
    if (peek().is("if") && peek(1).is("not")) {
      next();
      next();
      expect("exists");
      return true;
    }
    return false;
  }

  private Statement drop() {
    Statement.ObjectKind kind;
    if (accept("source")) {
      kind = Statement.ObjectKind.SOURCE;
    } else if (accept("view")) {
      kind = Statement.ObjectKind.VIEW;
    } else if (accept("materialized")) {
      expect("view");
      kind = Statement.ObjectKind.VIEW;
    } else if (accept("sink")) {
      kind = Statement.ObjectKind.SINK;
    } else {
      throw error(peek(), "unsupported syntax: DROP " + peek().describe() + " (supported: DROP SOURCE, DROP VIEW, DROP SINK)");
    }
    boolean ifExists = false;
    if (accept("if")) {
      expect("exists");
      ifExists = true;
    }
    Token n = name("a " + kind.lower() + " name");
    boolean cascade = false;
    if (accept("cascade")) {
      cascade = true;
    } else {
      accept("restrict");
    }
    expectEnd();
    return new Statement.Drop(kind, nameOf(n), n, ifExists, cascade);
  }

  private Statement createSink() {
    boolean ifNotExists = ifNotExists();
    Token n = name("a sink name");
    expect("from");
    Token from = name("the name of a view or source");
    expect("into");
    Token c = next();
    if (c.kind() != Kind.WORD) {
      throw unexpected(c, "a sink connector (KAFKA)");
    }
    String connector = c.text().toLowerCase(Locale.ROOT);
    Map<String, String> options = new LinkedHashMap<>();
    if (acceptSymbol("(")) {
      options(options);
    }
    List<String> key = null;
    String format = null;
    io.cairn.engine.sink.SinkEnvelope envelope = null;
    while (peek().kind() != Kind.END) {
      Token t = peek();
      if (accept("key")) {
        if (key != null) {
          throw error(t, "KEY given twice");
        }
        key = new ArrayList<>();
        expectSymbol("(");
        do {
          String k = nameOf(name("a column name"));
          if (key.contains(k)) {
            throw error(t, "key column '" + k + "' is given twice");
          }
          key.add(k);
        } while (acceptSymbol(","));
        expectSymbol(")");
        accept("not");
        accept("enforced");
      } else if (accept("format")) {
        Token f = next();
        if (f.kind() != Kind.WORD || format != null) {
          throw error(f, format != null ? "FORMAT given twice" : "expected a format name (JSON) but found " + f.describe());
        }
        format = f.text().toLowerCase(Locale.ROOT);
      } else if (accept("envelope")) {
        Token e = next();
        if (envelope != null) {
          throw error(t, "ENVELOPE given twice");
        }
        try {
          envelope = io.cairn.engine.sink.SinkEnvelope.valueOf(e.text().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException ex) {
          throw error(e, "unknown sink envelope " + e.describe() + " (supported: UPSERT, DEBEZIUM)");
        }
      } else {
        throw error(t, "unexpected " + t.describe() + " (expected KEY, FORMAT or ENVELOPE)");
      }
    }
    if (envelope == null) {
      throw error(peek(), "a sink needs ENVELOPE UPSERT or ENVELOPE DEBEZIUM");
    }
    return new Statement.CreateSink(nameOf(n), n, ifNotExists, nameOf(from), from, connector, options, key,
        format == null ? "json" : format, envelope);
  }

  private Statement createSource() {
    boolean ifNotExists = ifNotExists();
    Token n = name("a source name");
    expect("from");
    List<String> words = new ArrayList<>();
    while (peek().kind() == Kind.WORD && !peek().is("format") && !peek().is("envelope")) {
      words.add(next().text());
    }
    if (words.isEmpty()) {
      throw unexpected(peek(), "a connector (LOAD GENERATOR, KAFKA, POSTGRES)");
    }
    String connector = String.join("-", words);
    Map<String, String> options = new LinkedHashMap<>();
    if (acceptSymbol("(")) {
      options(options);
    }
    Envelope envelope = null;
    Schema schema = null;
    List<String> pk = new ArrayList<>();
    while (peek().kind() != Kind.END) {
      Token t = peek();
      if (accept("format")) {
        Token f = next();
        if (f.kind() != Kind.WORD) {
          throw unexpected(f, "a format name (JSON)");
        }
        if (options.put("format", f.text()) != null) {
          throw error(f, "FORMAT given twice");
        }
      } else if (accept("envelope")) {
        Token e = next();
        if (envelope != null) {
          throw error(t, "ENVELOPE given twice");
        }
        try {
          envelope = Envelope.valueOf(e.text().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException ex) {
          throw error(e, "unknown envelope " + e.describe() + " (supported: NONE, UPSERT, DEBEZIUM)");
        }
      } else if (acceptSymbol("(")) {
        if (schema != null) {
          throw error(t, "the column list is given twice");
        }
        schema = columns(pk);
      } else {
        throw error(t, "unexpected " + t.describe() + " (expected FORMAT, ENVELOPE or a column list)");
      }
    }
    return new Statement.CreateSource(nameOf(n), n, ifNotExists, connector, options, schema, pk, envelope);
  }

  private void options(Map<String, String> out) {
    if (acceptSymbol(")")) {
      return;
    }
    do {
      Token k = peek();
      String key = optionKey();
      acceptSymbol("="); // optional: (TOPIC 'x') as Materialize writes it, or (topic = 'x')
      String value = optionValue();
      if (out.put(key, value) != null) {
        throw error(k, "option '" + key + "' is given twice");
      }
    } while (acceptSymbol(","));
    expectSymbol(")");
  }

  private String optionKey() {
    Token t = next();
    if (t.kind() == Kind.QUOTED || t.kind() == Kind.STRING) {
      return t.text().toLowerCase(Locale.ROOT);
    }
    if (t.kind() != Kind.WORD) {
      throw unexpected(t, "an option name");
    }
    StringBuilder sb = new StringBuilder(t.text());
    // dotted or dashed names: delete-percent, properties.security.protocol
    while ((peek().isSymbol("-") || peek().isSymbol(".")) && (peek(1).kind() == Kind.WORD || peek(1).kind() == Kind.NUMBER)) {
      sb.append(next().text()).append(next().text().toLowerCase(Locale.ROOT));
    }
    return sb.toString();
  }

  private String optionValue() {
    Token t = next();
    switch (t.kind()) {
      case STRING:
        return t.text();
      case NUMBER:
        return t.text();
      case SYMBOL:
        if (t.isSymbol("-") && peek().kind() == Kind.NUMBER) {
          return "-" + next().text();
        }
        throw unexpected(t, "an option value");
      case WORD:
        if (t.is("secret")) {
          Token ref = next();
          if (ref.kind() != Kind.STRING && ref.kind() != Kind.QUOTED) {
            throw unexpected(ref, "the name of an environment variable in quotes after SECRET");
          }
          if (!SECRET_NAME.matcher(ref.text()).matches()) {
            throw error(ref, "SECRET takes the name of an environment variable (letters, digits, '_'), not a value");
          }
          return Secrets.reference(ref.text());
        }
        return t.text();
      default:
        throw unexpected(t, "an option value");
    }
  }

  private Schema columns(List<String> pk) {
    List<Column> cols = new ArrayList<>();
    do {
      if (peek().is("primary")) {
        Token p = next();
        expect("key");
        if (!pk.isEmpty()) {
          throw error(p, "PRIMARY KEY is given twice");
        }
        expectSymbol("(");
        do {
          pk.add(nameOf(name("a column name")));
        } while (acceptSymbol(","));
        expectSymbol(")");
        continue;
      }
      Token c = name("a column name");
      Token typeTok = next();
      int[] precisionScale = {Column.NONE, Column.NONE};
      Type type = type(typeTok, precisionScale);
      for (Column existing : cols) {
        if (existing.name().equals(nameOf(c))) {
          throw error(c, "column '" + nameOf(c) + "' is declared twice");
        }
      }
      try {
        cols.add(new Column(nameOf(c), type, precisionScale[0], precisionScale[1]));
      } catch (IllegalArgumentException e) {
        throw error(typeTok, e.getMessage().replaceFirst("^Cannot create column '[^']*': ", ""));
      }
      if (accept("not")) {
        expect("null");
      }
      if (peek().is("primary")) {
        Token p = next();
        expect("key");
        if (!pk.isEmpty()) {
          throw error(p, "PRIMARY KEY is given twice");
        }
        pk.add(nameOf(c));
      }
    } while (acceptSymbol(","));
    expectSymbol(")");
    for (String k : pk) {
      if (cols.stream().noneMatch(c -> c.name().equals(k))) {
        throw new SqlException("Cannot parse statement: primary key column '" + k + "' is not in the column list");
      }
    }
    return new Schema(cols);
  }

  private int digits(Token t, String what) {
    if (t.kind() != Kind.NUMBER || !t.text().matches("\\d{1,4}")) {
      throw unexpected(t, what);
    }
    return Integer.parseInt(t.text());
  }

  /** The type {@code t} names; a NUMERIC's {@code (precision[, scale])} goes into {@code precisionScale}. */
  private Type type(Token t, int[] precisionScale) {
    if (t.kind() != Kind.WORD) {
      throw unexpected(t, "a column type");
    }
    switch (t.text()) {
      case "bigint", "int", "integer", "int8", "int4", "smallint", "long":
        return Type.BIGINT;
      case "double":
        accept("precision");
        return Type.DOUBLE;
      case "float", "float8", "real":
        return Type.DOUBLE;
      case "numeric", "decimal":
        if (acceptSymbol("(")) { // (precision[, scale]): values are rounded to the scale and shown with it
          precisionScale[0] = digits(next(), "a NUMERIC's precision");
          precisionScale[1] = acceptSymbol(",") ? digits(next(), "a NUMERIC's scale") : 0;
          expectSymbol(")");
        }
        return Type.NUMERIC;
      case "text", "varchar", "string", "char":
        if (acceptSymbol("(")) {
          next();
          expectSymbol(")");
        }
        return Type.TEXT;
      case "boolean", "bool":
        return Type.BOOLEAN;
      case "timestamp", "timestamptz":
        return Type.TIMESTAMP;
      case "date":
        return Type.DATE;
      case "interval":
        return Type.INTERVAL;
      default:
        throw error(t, "unknown type " + t.describe() + " (supported: BIGINT, DOUBLE, NUMERIC, TEXT, BOOLEAN, TIMESTAMP, DATE, INTERVAL)");
    }
  }
}
