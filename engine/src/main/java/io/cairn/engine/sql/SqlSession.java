package io.cairn.engine.sql;

import io.cairn.engine.catalog.CatalogConflictException;
import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import net.sf.jsqlparser.expression.LongValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SQL front end of one node: executes statements against an {@link Engine}, with every DDL
 * statement sequenced through the {@link CatalogLog}.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>One order. The catalog is the only sequencer: a statement changes the engine only as the
 *       entry at some position N, and every node applies entries in position order. The dataflow a
 *       CREATE entry makes has id N — there is no other counter — so its arrangement names (derived
 *       from the id) are the same on every node and after every restart, which is what lets a
 *       snapshot's batches be found again.
 *   <li>Executing DDL. (1) Parse; a syntax error changes nothing. (2) Catch up: apply the entries
 *       other writers appended since this session's {@link #position()}. (3) Inside {@link
 *       Engine#betweenTicks}: plan and validate against the engine as of position N; for CREATE,
 *       build the dataflow (so a failure — unknown column, connector refusing its options,
 *       unresolvable secret — leaves nothing behind) and then append the entry at N; for DROP,
 *       append and then drop. (4) If another writer took N ({@link CatalogConflictException}), undo
 *       the CREATE, and go back to (2): the statement is re-planned against the new state. An
 *       append whose outcome is unknown (the store failed) is undone locally and rethrown; if the
 *       entry was in fact written, the next catch-up applies it, as for any other writer's entry.
 *   <li>Replay. {@link #replay} applies entries without appending, with the same planning code, so
 *       replaying a catalog into a fresh engine re-creates every dataflow with the same id and plan
 *       (including the drops a CASCADE made: they are re-derived from the same state).
 *   <li>Why drop is safe (the question raised about timely's drop_dataflow: on what basis?). Create
 *       and drop are both applied between ticks — under the engine lock that every tick holds from
 *       start to end — and in catalog order, on all workers at once: a tick either runs before the
 *       command, on the old set of dataflows, or after it, on the new set. So no worker meets a
 *       half-built or half-dropped dataflow, and a drop can never run mid-construction: both are
 *       single commands of the same sequencer. Dataflows share nothing but arrangements read
 *       through their collections, and a drop is refused while another dataflow reads the
 *       dropped one (the reference count is the engine's readers list); DROP ... CASCADE drops
 *       the readers first, newest first, in the same between-ticks section. Given that, dropping
 *       a dataflow is indistinguishable, for every other dataflow, from that dataflow having
 *       failed at this point of the log — and failures are already contained per dataflow (next
 *       point). Dropping stops its operators and releases its arrangements (the memory returns);
 *       an arrangement shared with a reader survives because the drop waits for the last reader.
 *   <li>Failure domains. A runtime error in one dataflow's operator (e.g. division by zero) marks
 *       that dataflow FAILED with the error (see {@code SHOW VIEWS}); the engine keeps running the
 *       others.
 *   <li>Secrets. {@code SECRET 'NAME'} stays a reference in the SQL text (the catalog) and in the
 *       source's options (the value {@code SECRET 'NAME'}, see {@link
 *       io.cairn.engine.source.Secrets}); the connector resolves it when the source opens.
 * </ul>
 *
 * <p>Thread-safe. Locks, in this order only: the session's statement lock (this object's monitor),
 * held by DDL and catalog replay so that catalog positions are taken one at a time, then the
 * engine lock (through {@link Engine#betweenTicks}). Queries, SHOW and EXPLAIN take no statement
 * lock — only the engine lock, for the read — so a SELECT never waits for a DDL statement's
 * catalog I/O. {@link #position()} is a volatile value written under the engine lock together with
 * the engine change it stands for: whoever holds the engine lock (a snapshot's capture) reads a
 * position that matches the engine exactly, without taking the statement lock.
 */
public final class SqlSession {
  private static final Logger LOG = LoggerFactory.getLogger(SqlSession.class);
  private static final int MAX_ATTEMPTS = 1000;

  private final Engine engine;
  private final CatalogLog catalog;
  private final Clock clock;
  private final Map<String, SourceDefinition> sources = new java.util.concurrent.ConcurrentHashMap<>(); // validated, for SHOW SOURCES
  /** Views with columns that identify a row (a GROUP BY view's group columns): a sink's default key. */
  private final Map<String, List<String>> uniqueKeys = new java.util.concurrent.ConcurrentHashMap<>();
  private volatile long position = CatalogLog.FIRST_POSITION;
  /** The hash of entry {@code position - 1} ("" before entry 0): written with {@code position}. */
  private volatile String lastHash = "";
  private volatile long epoch;

  public SqlSession(Engine engine, CatalogLog catalog, Clock clock) {
    this.engine = Objects.requireNonNull(engine, "engine");
    this.catalog = Objects.requireNonNull(catalog, "catalog");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * The next catalog position: every entry below it has been applied to the engine. Takes no
   * lock; read under the engine lock it matches the engine's dataflows exactly.
   */
  public long position() {
    return position;
  }

  public Engine engine() {
    return engine;
  }

  /** The hash of the last applied catalog entry ("" when none): a manifest records it with the position. */
  public String lastHash() {
    return lastHash;
  }

  /** Why this session refuses statements that change the catalog, or null when it accepts them. */
  private volatile String readOnly;

  /**
   * A session that refuses every request with a statement that changes the catalog (before
   * anything of it runs), saying {@code why} — a standby's session, whose catalog is the owner's;
   * null accepts them again.
   */
  public void setReadOnly(String why) {
    this.readOnly = why;
  }

  /** A statement that would change the catalog, sent to a read-only session: SQLSTATE 25006 (read_only_sql_transaction). */
  public static final class ReadOnlyException extends SqlException implements SqlState.Carrier {
    public ReadOnlyException(String message) {
      super(message);
    }

    @Override
    public String sqlState() {
      return "25006";
    }
  }

  /** The writer epoch recorded in the entries this session appends (0: none). */
  public void setEpoch(long epoch) {
    this.epoch = epoch;
  }

  public CatalogLog catalog() {
    return catalog;
  }

  /**
   * Applies the catalog entries at positions [{@link #position()}, {@code toExclusive}) to the
   * engine without appending, in order, each between ticks. Returns the new position. Throws
   * {@link SqlException} naming the entry when one cannot be applied (e.g. its connector is not
   * available or a secret is not set); the entries before it stay applied.
   */
  public synchronized long replay(long toExclusive) {
    if (toExclusive <= position) {
      return position;
    }
    for (CatalogEntry e : catalog.read(position)) {
      if (e.position() >= toExclusive) {
        break;
      }
      apply(e);
    }
    return position;
  }

  /** Applies every entry appended since {@link #position()} (also other writers'). */
  public synchronized long replayAll() {
    return replay(Long.MAX_VALUE);
  }

  private void apply(CatalogEntry e) {
    if (e.position() != position) {
      throw new IllegalStateException("Cannot replay catalog entry " + e.position() + ": expected position " + position);
    }
    io.cairn.engine.catalog.CatalogIntegrityException.verifyChain(List.of(e), lastHash, catalog.describe());
    if (e.schemaVersion() > CatalogEntry.SCHEMA_VERSION) {
      throw new SqlException("Cannot replay catalog entry " + e.position() + ": schema version " + e.schemaVersion()
          + " is newer than this build's " + CatalogEntry.SCHEMA_VERSION);
    }
    try {
      Statement st = Parser.parse(e.sql());
      engine.betweenTicks(() -> {
        Prepared p = prepare(st, e.position());
        p.beforeAppend.run();
        p.afterAppend.run();
        lastHash = e.hash();
        position = e.position() + 1;
        return null;
      });
    } catch (SqlException ex) {
      throw new SqlException("Cannot replay catalog entry " + e.position() + " of " + catalog.describe() + ": " + ex.getMessage(), 0, 0, ex);
    }
    LOG.debug("Applied catalog entry {}: {}", e.position(), e.sql());
  }

  /**
   * Executes one statement (a trailing ';' is allowed). DDL is appended to the catalog and applied
   * to the engine; queries, SHOW and EXPLAIN are answered from the engine.
   *
   * @throws SqlException naming the problem and its position; the statement changed nothing
   * @throws RuntimeException from the catalog's store when an append fails: the engine is left
   *     unchanged, but the entry may have been written — the next statement or {@link #replayAll}
   *     applies it if so
   */
  public Result execute(String sql) {
    return execute(sql, StatementBudget.unlimited());
  }

  /** {@link #execute(String)} within {@code budget} (see {@link StatementBudget}). */
  public Result execute(String sql, StatementBudget budget) {
    Objects.requireNonNull(sql, "sql");
    String text = Parser.normalize(sql);
    Statement st = parse(text, budget);
    if (!st.ddl()) {
      return query(st, budget);
    }
    return executeDdl(st, text, budget);
  }

  /** The statement text as the catalog stores it (normalized). */
  public static String normalize(String sql) {
    return Parser.normalize(sql);
  }

  /**
   * Parses {@code sql} as {@link #execute} would, without running it (no engine, no catalog): a
   * statement that cannot parse is refused before anything is written, e.g. a node's init
   * statements when the configuration is read.
   *
   * @throws SqlException naming what did not parse
   */
  public static void checkSyntax(String sql) {
    parse(Parser.normalize(Objects.requireNonNull(sql, "sql")), StatementBudget.unlimited());
  }

  /**
   * The deepest nesting a statement may have: parentheses plus open CASE expressions. A deeper one
   * is refused before any parser runs ({@link Nesting}).
   */
  public static final int MAX_NESTING = Nesting.MAX_DEPTH;

  /**
   * Refuses {@code text} (one or more statements) when it nests deeper than {@link #MAX_NESTING}:
   * one pass over its characters, no parsing, so a server may call it on its I/O thread before
   * the request waits for a worker.
   *
   * @throws SqlException naming the depth limit and where it was passed
   */
  public static void checkNesting(String text) {
    Nesting.check(text);
  }

  private static Statement parse(String text, StatementBudget budget) {
    Nesting.check(text);
    try {
      return Parser.parse(text, budget);
    } catch (StackOverflowError e) {
      throw new SqlException("Cannot parse statement: it is nested too deeply");
    }
  }

  /**
   * Executes the statements of one request as a unit: all are parsed first (a syntax error in
   * any changes nothing), and a request may hold at most one DDL statement (any number of
   * queries), so it is applied all or nothing. Errors name the statement (1-based).
   */
  public List<Result> executeRequest(List<String> statements) {
    return executeRequest(statements, StatementBudget.unlimited());
  }

  /**
   * {@link #executeRequest(List)} within {@code budget}: the budget covers the whole request, and
   * a request that runs out of it (or is cancelled) stops with a {@link
   * StatementCanceledException}; statements before the one stopped stay applied, as the message
   * says.
   */
  public List<Result> executeRequest(List<String> statements, StatementBudget budget) {
    List<Statement> parsed = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    int ddl = -1;
    for (int i = 0; i < statements.size(); i++) {
      String text = Parser.normalize(statements.get(i));
      Statement st;
      try {
        budget.check();
        st = parse(text, budget);
      } catch (SqlException e) {
        throw numbered(i, statements.size(), e, "nothing was applied");
      }
      parsed.add(st);
      texts.add(text);
    }
    for (int i = 0; i < parsed.size(); i++) {
      if (parsed.get(i).ddl()) {
        if (ddl >= 0) {
          throw new SqlException("Cannot execute request: statements " + (ddl + 1) + " and " + (i + 1) + " of "
              + statements.size() + " both change the catalog; a request applies at most one CREATE or DROP (send them one "
              + "by one); nothing was applied");
        }
        ddl = i;
      }
    }
    String ro = readOnly;
    if (ddl >= 0 && ro != null) {
      throw new ReadOnlyException("Cannot execute " + (statements.size() == 1 ? "statement" : "statement " + (ddl + 1) + " of "
          + statements.size()) + ": it changes the catalog, and " + ro + "; nothing was applied");
    }
    List<Result> out = new ArrayList<>();
    for (int i = 0; i < parsed.size(); i++) {
      try {
        Statement st = parsed.get(i);
        out.add(st.ddl() ? executeDdl(st, texts.get(i), budget) : query(st, budget));
      } catch (StatementCanceledException e) {
        throw e;
      } catch (SqlException e) {
        throw numbered(i, parsed.size(), e, ddl >= 0 && ddl < i ? "statement " + (ddl + 1) + " was applied" : "nothing was applied");
      }
    }
    return out;
  }

  private static SqlException numbered(int i, int n, SqlException e, String outcome) {
    if (n == 1 || e instanceof StatementCanceledException) {
      return e;
    }
    return new SqlException("Statement " + (i + 1) + " of " + n + ": " + e.getMessage() + " (" + outcome + ")", e.line(), e.column(), e);
  }

  private Result executeDdl(Statement st, String text, StatementBudget budget) {
    budget.check();
    if (st instanceof Statement.CreateView cv) {
      // the SELECT is parsed again under the engine lock: parse it here first, within the budget,
      // so a text that parses slowly fails before it can hold up a tick
      new Planner("Cannot plan view '" + cv.name() + "'", cv.select(), n -> null, budget).parseOnly();
    }
    budget.check();
    return executeDdl(st, text);
  }

  private synchronized Result executeDdl(Statement st, String text) {
    for (int attempt = 1; ; attempt++) {
      replayAll();
      long p = position;
      try {
        return engine.betweenTicks(() -> {
          Prepared prepared = prepare(st, p);
          if (prepared.noop) {
            return Result.message(prepared.message);
          }
          prepared.beforeAppend.run();
          CatalogEntry entry = CatalogEntry.of(p, text, clock.instant(), lastHash, epoch);
          try {
            catalog.append(entry);
          } catch (RuntimeException ex) {
            prepared.undo.run();
            throw ex;
          }
          prepared.afterAppend.run();
          lastHash = entry.hash();
          position = p + 1;
          LOG.info("Catalog entry {}: {}", p, text);
          return Result.message(prepared.message);
        });
      } catch (CatalogConflictException lost) {
        if (attempt >= MAX_ATTEMPTS) {
          throw new SqlException("Cannot execute statement: lost the race for a catalog position " + attempt + " times");
        }
        LOG.debug("Lost catalog position {} to another writer; re-reading", p);
      }
    }
  }

  // ------------------------------------------------------------------ DDL

  /** A validated DDL statement: engine changes before and after the append, and the undo of the first. */
  private record Prepared(boolean noop, String message, Runnable beforeAppend, Runnable afterAppend, Runnable undo) {
    static Prepared noop(String message) {
      Runnable nothing = () -> {};
      return new Prepared(true, message, nothing, nothing, nothing);
    }
  }

  private Prepared prepare(Statement st, long id) {
    if (st instanceof Statement.CreateSource cs) {
      return createSource(cs, id);
    }
    if (st instanceof Statement.CreateView cv) {
      return createView(cv, id);
    }
    if (st instanceof Statement.CreateSink cs) {
      return createSink(cs, id);
    }
    Statement.Drop d = (Statement.Drop) st;
    return d.kind() == Statement.ObjectKind.SINK ? dropSink(d) : drop(d);
  }

  private Optional<String> existing(String name, Lexer.Token pos, String what, boolean ifNotExists) {
    Optional<Dataflow> d = engine.dataflow(name);
    if (d.isEmpty()) {
      return Optional.empty();
    }
    String kind = d.get().kind() == Dataflow.Kind.SOURCE ? "source" : "view";
    if (ifNotExists) {
      return Optional.of("CREATE " + what.toUpperCase(java.util.Locale.ROOT) + " (skipped: " + kind + " '" + name + "' exists)");
    }
    throw new SqlException("Cannot create " + what + " '" + name + "': duplicate name: a " + kind + " named '" + name + "' already exists",
        pos.line(), pos.column());
  }

  private Prepared createSource(Statement.CreateSource cs, long id) {
    Optional<String> skip = existing(cs.name(), cs.namePos(), "source", cs.ifNotExists());
    if (skip.isPresent()) {
      return Prepared.noop(skip.get());
    }
    Optional<SourceConnector> connector = engine.connector(cs.connector());
    if (connector.isEmpty()) {
      throw new SqlException("Cannot create source '" + cs.name() + "': connector '" + cs.connector()
          + "' is not available (its module is not on the class path)");
    }
    SourceDefinition def =
        new SourceDefinition(cs.name(), cs.connector(), cs.options(), cs.schema(), cs.primaryKey(), cs.envelope());
    SourceDefinition valid;
    try {
      valid = connector.get().validate(def);
    } catch (IllegalArgumentException ex) {
      throw new SqlException(ex.getMessage(), 0, 0, ex);
    }
    Runnable create = () -> {
      try {
        engine.createSource(id, def);
      } catch (IllegalArgumentException | IllegalStateException ex) {
        String m = ex.getMessage();
        throw new SqlException(m.startsWith("Cannot") ? m : "Cannot create source '" + cs.name() + "': " + m, 0, 0, ex);
      }
      sources.put(cs.name(), valid);
    };
    Runnable undo = () -> {
      engine.drop(cs.name());
      sources.remove(cs.name());
    };
    return new Prepared(false, "CREATE SOURCE", create, () -> {}, undo);
  }

  private Prepared createView(Statement.CreateView cv, long id) {
    Optional<String> skip = existing(cv.name(), cv.namePos(), "view", cv.ifNotExists());
    if (skip.isPresent()) {
      return Prepared.noop(skip.get());
    }
    Planner.Planned planned = new Planner("Cannot plan view '" + cv.name() + "'", cv.select(), this::schemaOf, StatementBudget.unlimited()).plan(false);
    Runnable create = () -> {
      try {
        engine.createView(id, cv.name(), planned.plan(), planned.keyCols());
      } catch (IllegalArgumentException | IllegalStateException ex) {
        throw new SqlException("Cannot create view '" + cv.name() + "': " + ex.getMessage(), 0, 0, ex);
      }
      if (planned.keyCols() != null) {
        List<String> names = new ArrayList<>();
        for (int c : planned.keyCols()) {
          names.add(planned.plan().schema().column(c).name());
        }
        uniqueKeys.put(cv.name(), List.copyOf(names));
      }
    };
    return new Prepared(false, "CREATE MATERIALIZED VIEW", create, () -> {}, () -> {
      engine.drop(cv.name());
      uniqueKeys.remove(cv.name());
    });
  }

  private Prepared createSink(Statement.CreateSink cs, long id) {
    if (engine.sink(cs.name()).isPresent()) {
      if (cs.ifNotExists()) {
        return Prepared.noop("CREATE SINK (skipped: sink '" + cs.name() + "' exists)");
      }
      throw new SqlException("Cannot create sink '" + cs.name() + "': duplicate name: a sink named '" + cs.name() + "' already exists",
          cs.namePos().line(), cs.namePos().column());
    }
    Dataflow from = engine.dataflow(cs.from()).orElseThrow(() -> new SqlException("Cannot create sink '" + cs.name()
        + "': unknown view or source '" + cs.from() + "'", cs.fromPos().line(), cs.fromPos().column()));
    if (engine.sinkConnector(cs.connector()).isEmpty()) {
      throw new SqlException("Cannot create sink '" + cs.name() + "': connector '" + cs.connector()
          + "' is not available (its module is not on the class path)");
    }
    List<String> key = cs.key() != null ? cs.key() : defaultKey(from);
    if (key == null) {
      if (cs.envelope() == io.cairn.engine.sink.SinkEnvelope.UPSERT) {
        throw new SqlException("Cannot create sink '" + cs.name() + "': ENVELOPE UPSERT needs a key, and '" + cs.from()
            + "' has none cairn can prove unique (a GROUP BY view is keyed by its group columns, a source by its primary key): "
            + "name the columns that identify a row with KEY (col, ...), or use ENVELOPE DEBEZIUM", cs.fromPos().line(), cs.fromPos().column());
      }
      key = List.of();
    }
    io.cairn.engine.sink.SinkDefinition def = new io.cairn.engine.sink.SinkDefinition(
        id, cs.name(), cs.from(), cs.connector(), cs.options(), cs.format(), cs.envelope(), key);
    Runnable create = () -> {
      try {
        engine.createSink(def);
      } catch (IllegalArgumentException | IllegalStateException ex) {
        String m = ex.getMessage();
        throw new SqlException(m.startsWith("Cannot") ? m : "Cannot create sink '" + cs.name() + "': " + m, 0, 0, ex);
      }
    };
    return new Prepared(false, "CREATE SINK", create, () -> {}, () -> engine.dropSink(cs.name()));
  }

  /**
   * The columns that identify a row of {@code d}, when cairn can tell: a source's primary key, a
   * GROUP BY view's group columns (its first columns); null otherwise.
   */
  private List<String> defaultKey(Dataflow d) {
    if (d.kind() == Dataflow.Kind.SOURCE) {
      List<String> pk = engine.sourceDefinition(d.name()).map(SourceDefinition::primaryKey).orElse(List.of());
      return pk.isEmpty() ? null : pk;
    }
    return uniqueKeys.get(d.name());
  }

  private Prepared dropSink(Statement.Drop d) {
    if (engine.sink(d.name()).isEmpty()) {
      if (d.ifExists()) {
        return Prepared.noop("DROP SINK (skipped: no sink '" + d.name() + "')");
      }
      throw new SqlException("Cannot drop sink '" + d.name() + "': unknown sink '" + d.name() + "'", d.namePos().line(), d.namePos().column());
    }
    return new Prepared(false, "DROP SINK", () -> {}, () -> engine.dropSink(d.name()), () -> {});
  }

  private Prepared drop(Statement.Drop d) {
    String what = d.kind().lower();
    Optional<Dataflow> target = engine.dataflow(d.name());
    Dataflow.Kind want = d.kind() == Statement.ObjectKind.SOURCE ? Dataflow.Kind.SOURCE : Dataflow.Kind.VIEW;
    if (target.isEmpty()) {
      if (d.ifExists()) {
        return Prepared.noop("DROP " + what.toUpperCase(java.util.Locale.ROOT) + " (skipped: no " + what + " '" + d.name() + "')");
      }
      throw new SqlException("Cannot drop " + what + " '" + d.name() + "': unknown " + what + " '" + d.name() + "'",
          d.namePos().line(), d.namePos().column());
    }
    if (target.get().kind() != want) {
      String other = want == Dataflow.Kind.SOURCE ? "view" : "source";
      throw new SqlException("Cannot drop " + what + " '" + d.name() + "': '" + d.name() + "' is a " + other
          + " (use DROP " + other.toUpperCase(java.util.Locale.ROOT) + ")", d.namePos().line(), d.namePos().column());
    }
    List<String> dependents = dependents(d.name());
    if (!dependents.isEmpty() && !d.cascade()) {
      throw new SqlException("Cannot drop " + what + " '" + d.name() + "': dependents exist: " + dependents
          + " read it (drop them first, or use DROP " + what.toUpperCase(java.util.Locale.ROOT) + " " + d.name() + " CASCADE)",
          d.namePos().line(), d.namePos().column());
    }
    List<String> order = new ArrayList<>(dependents);
    order.add(d.name());
    List<String> sinks = new ArrayList<>();
    for (String n : order) {
      sinks.addAll(engine.sinksOf(n));
    }
    if (!sinks.isEmpty() && !d.cascade()) {
      throw new SqlException("Cannot drop " + what + " '" + d.name() + "': sinks " + sinks + " write its changes"
          + (dependents.isEmpty() ? "" : " or those of " + dependents) + " (DROP SINK them first, or use DROP "
          + what.toUpperCase(java.util.Locale.ROOT) + " " + d.name() + " CASCADE)", d.namePos().line(), d.namePos().column());
    }
    Runnable dropAll = () -> {
      sinks.forEach(engine::dropSink);
      for (String n : order) {
        engine.drop(n);
        sources.remove(n);
        uniqueKeys.remove(n);
      }
    };
    List<String> also = new ArrayList<>(dependents);
    sinks.forEach(n -> also.add("sink " + n));
    String message = "DROP " + what.toUpperCase(java.util.Locale.ROOT) + (also.isEmpty() ? "" : " (also dropped " + also + ")");
    return new Prepared(false, message, () -> {}, dropAll, () -> {});
  }

  /** Every dataflow reading {@code name}, directly or not, newest (highest id) first. */
  private List<String> dependents(String name) {
    Set<String> seen = new LinkedHashSet<>();
    Deque<String> todo = new ArrayDeque<>(List.of(name));
    while (!todo.isEmpty()) {
      for (String r : engine.readersOf(todo.pop())) {
        if (seen.add(r)) {
          todo.add(r);
        }
      }
    }
    List<String> out = new ArrayList<>(seen);
    out.sort(Comparator.comparingLong((String n) -> engine.dataflow(n).map(Dataflow::id).orElse(Long.MAX_VALUE)).reversed());
    return out;
  }

  private Schema schemaOf(String name) {
    if (Engine.isTransient(name)) {
      return null; // a one-shot query's dataflow is nobody else's to read
    }
    return engine.dataflow(name).map(Dataflow::schema).orElse(null);
  }

  // ------------------------------------------------------------------ queries

  private Result query(Statement st, StatementBudget budget) {
    if (st instanceof Statement.Show s) {
      return show(s);
    }
    if (st instanceof Statement.ExplainView ev) {
      Dataflow d = engine.dataflow(ev.name()).filter(x -> x.kind() == Dataflow.Kind.VIEW).orElseThrow(
          () -> new SqlException("Cannot explain view '" + ev.name() + "': unknown view '" + ev.name() + "'",
              ev.namePos().line(), ev.namePos().column()));
      List<String> lines = new ArrayList<>();
      lines.add("View " + d.name() + " (dataflow " + d.id() + ", " + d.state() + "), arranged by " + keyNames(d));
      lines.addAll(Plan.explain(io.cairn.engine.plan.FilterPushdown.push(d.plan())).lines().toList()); // its filters where they run
      return lines(lines);
    }
    if (st instanceof Statement.ExplainSelect es) {
      String what = es.viewName() == null ? "Cannot plan query" : "Cannot plan view '" + es.viewName() + "'";
      Planner.Planned p = new Planner(what, es.select(), this::schemaOf, budget).plan(es.viewName() == null);
      List<String> lines = new ArrayList<>();
      if (es.viewName() != null) {
        lines.add("View " + es.viewName() + " (not created), arranged by "
            + (p.keyCols() == null ? "(the whole row)" : names(p.plan().schema(), p.keyCols())));
      }
      lines.addAll(Plan.explain(io.cairn.engine.plan.FilterPushdown.push(p.plan())).lines().toList()); // its filters where they run
      if (es.viewName() == null && !answeredByAnArrangement(p.plan())) {
        long rows = 0;
        for (String input : inputsOf(p.plan())) {
          rows += engine.dataflow(input).map(d -> d.arrangement().updateCount()).orElse(0L);
        }
        lines.add("One-shot: a transient dataflow arranges its inputs " + inputsOf(p.plan()) + ": a copy of at most " + rows
            + " rows (their updates not yet consolidated counted; about " + (transientCopyBytes(p.plan()) >> 20) + " MB), computed at the next tick and dropped after the read"
            + " (a materialized view of it answers without the copy)");
      }
      return lines(lines);
    }
    return select((Statement.Select) st, budget);
  }

  private static Result lines(List<String> lines) {
    List<List<Object>> rows = new ArrayList<>();
    for (String l : lines) {
      rows.add(List.of(l));
    }
    return new Result(List.of("plan"), rows, "EXPLAIN");
  }

  private static String keyNames(Dataflow d) {
    return names(d.schema(), d.layout().keyCols());
  }

  private static String names(Schema s, int[] cols) {
    List<String> n = new ArrayList<>();
    for (int c : cols) {
      n.add(s.column(c).name());
    }
    return "(" + String.join(", ", n) + ")";
  }

  private Result show(Statement.Show s) {
    List<List<Object>> rows = new ArrayList<>();
    if (s.kind() == Statement.ObjectKind.SINK) {
      for (io.cairn.engine.sink.SinkTrack t : engine.sinks()) {
        io.cairn.engine.sink.SinkDefinition def = t.definition();
        rows.add(Arrays.asList(def.name(), def.id(), def.from(), def.connector(), def.envelope().name(), String.join(", ", def.key()),
            def.options().getOrDefault("topic", null), t.lastLabel(), (long) t.pendingRows(), t.failure()));
      }
      return new Result(List.of("name", "id", "from", "connector", "envelope", "key", "topic", "emitted_through", "pending_rows", "error"),
          rows, "SHOW SINKS");
    }
    if (s.kind() == Statement.ObjectKind.SOURCE) {
      for (Dataflow d : engine.dataflows()) {
        if (d.kind() == Dataflow.Kind.SOURCE) {
          SourceDefinition def = sources.get(d.name());
          var status = engine.sourceStatus(d.name());
          String state = d.state() == Dataflow.State.FAILED ? "FAILED" : status.map(x -> x.state().name()).orElse(d.state().name());
          String error = d.error() != null ? d.error() : status.map(x -> x.error()).orElse(null);
          rows.add(Arrays.asList(d.name(), d.id(), def == null ? null : def.connector(),
              def == null ? null : def.envelope().name(), state, error));
        }
      }
      return new Result(List.of("name", "id", "connector", "envelope", "state", "error"), rows, "SHOW SOURCES");
    }
    for (Dataflow d : engine.dataflows()) {
      if (d.kind() == Dataflow.Kind.VIEW) {
        rows.add(Arrays.asList(d.name(), d.id(), d.state().name(), d.error(), (long) d.arrangements().size()));
      }
    }
    return new Result(List.of("name", "id", "state", "error", "arrangements"), rows, "SHOW VIEWS");
  }

  /** Whether a one-shot SELECT of {@code plan} is read from one arrangement (a lookup or a scan, filtered and projected). */
  private static boolean answeredByAnArrangement(Plan plan) {
    if (plan instanceof Plan.Distinct d) {
      plan = d.input();
    }
    if (plan instanceof Plan.Map m) {
      plan = m.input();
    }
    while (plan instanceof Plan.Filter f) {
      plan = f.input();
    }
    return plan instanceof Plan.Get;
  }

  /**
   * A one-shot SELECT over one source or view, answered from its arrangement as of the last
   * closed tick: a key lookup when WHERE pins every key column with {@code =}, else a scan.
   */
  private Result select(Statement.Select s, StatementBudget budget) {
    Planner.Planned planned = new Planner("Cannot plan query", s.select(), this::schemaOf, budget).plan(true);
    Plan plan = planned.plan();
    boolean distinct = false;
    if (plan instanceof Plan.Distinct dd) {
      distinct = true;
      plan = dd.input();
    }
    List<Expr> project = null;
    if (plan instanceof Plan.Map m) {
      project = m.exprs();
      plan = m.input();
    }
    List<Expr> filters = new ArrayList<>();
    while (plan instanceof Plan.Filter f) {
      filters.add(f.predicate());
      plan = f.input();
    }
    ResultWindow window = ResultWindow.of(planned.select(), planned.plan().schema());
    if (!(plan instanceof Plan.Get get)) {
      return transientSelect(planned, window, budget);
    }
    Dataflow d = engine.dataflow(get.name()).orElseThrow(() -> new SqlException("Cannot plan query: unknown table '" + get.name() + "'"));
    awaitComputed(d, budget);
    Row key = lookupKey(d, filters);
    List<Row> in = key != null ? engine.lookup(get.name(), key) : engine.peek(get.name(), budget::check);
    List<Row> out = new ArrayList<>();
    Set<Row> seen = distinct ? new TreeSet<>() : null;
    int sinceCheck = 0;
    for (Row r : in) {
      if (++sinceCheck == Engine.CHECK_EVERY) {
        sinceCheck = 0;
        budget.check();
      }
      boolean keep = true;
      for (Expr f : filters) {
        keep &= Boolean.TRUE.equals(evalRuntime(f, r));
      }
      if (!keep) {
        continue;
      }
      Row o = r;
      if (project != null) {
        Object[] v = new Object[project.size()];
        for (int i = 0; i < v.length; i++) {
          v[i] = evalRuntime(project.get(i), r);
        }
        o = Row.wrap(v);
      }
      if (seen == null || seen.add(o)) {
        out.add(o);
      }
    }
    if (project != null) {
      io.cairn.engine.row.CheckedSort.sort(out, null, budget::check); // else still in the sorted order of the read
    }
    out = window.apply(out, budget::check);
    return result(planned, out, key != null ? " (key lookup)" : "");
  }

  /**
   * A one-shot SELECT that no arrangement answers as it is (a join, an aggregate, DISTINCT over
   * them): evaluated by a transient dataflow over the arrangements of its inputs ({@link
   * Engine#evaluateOnce}), as of the tick that computes it, within the statement's budget.
   */
  private Result transientSelect(Planner.Planned planned, ResultWindow window, StatementBudget budget) {
    for (String input : inputsOf(planned.plan())) {
      engine.dataflow(input).ifPresent(d -> awaitComputed(d, budget)); // a view created moments ago first hydrates
    }
    // bounded in memory: the transient dataflow arranges what it reads, about a copy of its inputs
    long copy = transientCopyBytes(planned.plan());
    Runtime rt = Runtime.getRuntime();
    long free = rt.maxMemory() - (rt.totalMemory() - rt.freeMemory());
    long limit = maxTransientCopyBytes >= 0 ? maxTransientCopyBytes : free / 2;
    if (copy > limit) {
      throw new SqlException("Cannot evaluate query: it would copy " + inputsOf(planned.plan()) + " (about " + (copy >> 20)
          + " MB of state) into a transient dataflow, more than half of the heap this node has free (" + (limit >> 20)
          + " MB); create a materialized view of it and select from the view");
    }
    List<Row> rows;
    try {
      rows = engine.evaluateOnce(planned.plan(), budget::check);
    } catch (IllegalStateException | IllegalArgumentException e) {
      throw new SqlException("Cannot evaluate query: " + e.getMessage(), 0, 0, e);
    }
    return result(planned, window.apply(rows, budget::check), "");
  }

  /** The most state a one-shot query may copy into a transient dataflow; negative: half the free heap at the time. */
  private volatile long maxTransientCopyBytes = -1;

  /** Sets {@link #maxTransientCopyBytes} (a test's small heap). */
  void maxTransientCopyBytes(long bytes) {
    this.maxTransientCopyBytes = bytes;
  }

  /** About how many bytes a transient dataflow of {@code plan} arranges: the state of the sources and views it reads. */
  private long transientCopyBytes(Plan plan) {
    long bytes = 0;
    for (String input : inputsOf(plan)) {
      Dataflow d = engine.dataflow(input).orElse(null);
      if (d != null) {
        for (List<io.cairn.engine.trace.Batch> shard : d.arrangement().published()) {
          for (io.cairn.engine.trace.Batch b : shard) {
            bytes += b.heapBytes();
          }
        }
      }
    }
    return bytes;
  }

  /** The names a plan reads. */
  private static Set<String> inputsOf(Plan plan) {
    Set<String> out = new TreeSet<>();
    java.util.ArrayDeque<Plan> todo = new java.util.ArrayDeque<>(List.of(plan));
    while (!todo.isEmpty()) {
      Plan p = todo.pop();
      if (p instanceof Plan.Get g) {
        out.add(g.name());
      }
      todo.addAll(p.inputs());
    }
    return out;
  }

  private static Result result(Planner.Planned planned, List<Row> out, String note) {
    Schema schema = planned.plan().schema();
    List<String> cols = schema.columns().stream().map(Column::name).toList();
    List<List<Object>> rows = new ArrayList<>();
    for (Row r : out) {
      Object[] values = r.toArray();
      for (int i = 0; i < values.length && i < schema.size(); i++) {
        values[i] = io.cairn.engine.row.Numeric.display(values[i], schema.column(i).scale()); // NUMERIC(15, 2): 8737.50
      }
      rows.add(Arrays.asList(values));
    }
    List<io.cairn.engine.row.Type> types = schema.columns().stream().map(Column::type).toList();
    return new Result(cols, types, rows, "SELECT " + rows.size() + note);
  }

  /**
   * Waits until view {@code d} holds its whole contents as of the read position: a view created
   * moments ago is computed from its inputs by the next tick (it hydrates), and a read before that
   * would see it empty or partial. Waits within the budget; a budget that runs out says the view
   * is still hydrating and how far the engine has come.
   */
  private void awaitComputed(Dataflow d, StatementBudget budget) {
    long since = engine.lastClosedTick();
    long start = System.nanoTime();
    // without a driver nobody else ticks (a test or a recovery ticks by hand): nothing to wait for
    while (engine.ticking() && d.state() == Dataflow.State.RUNNING && d.hydrating()) {
      budget.check(() -> "view '" + d.name() + "' is still being computed from its inputs (hydrating): waited "
          + (System.nanoTime() - start) / 1_000_000 + " ms since tick " + since + "; the last closed tick is "
          + engine.lastClosedTick() + " and the view is complete once the next one closes");
      try {
        engine.awaitTickAfter(engine.lastClosedTick(), Math.min(budget.remainingNanos(), 20_000_000L));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        budget.cancel(StatementCanceledException.USER_REQUEST);
      }
    }
  }

  private static Object evalRuntime(Expr e, Row r) {
    try {
      return e.eval(r);
    } catch (ArithmeticException ex) {
      throw new SqlException("Cannot evaluate query: " + ex.getMessage(), 0, 0, ex);
    }
  }

  /** The arrangement key when the filters pin every key column to a literal, else null. */
  private static Row lookupKey(Dataflow d, List<Expr> filters) {
    int[] keyCols = d.layout().keyCols();
    Object[] key = new Object[keyCols.length];
    boolean[] pinned = new boolean[keyCols.length];
    List<Expr> conj = new ArrayList<>();
    for (Expr f : filters) {
      flatten(f, conj);
    }
    for (Expr c : conj) {
      if (!(c instanceof Expr.Cmp cmp) || cmp.op() != Expr.CmpOp.EQ) {
        continue;
      }
      Expr.Col col = cmp.left() instanceof Expr.Col x ? x : cmp.right() instanceof Expr.Col y ? y : null;
      Expr.Lit lit = cmp.left() instanceof Expr.Lit x ? x : cmp.right() instanceof Expr.Lit y ? y : null;
      if (col == null || lit == null || lit.value() == null) {
        continue;
      }
      for (int k = 0; k < keyCols.length; k++) {
        if (keyCols[k] == col.index()) {
          Type t = d.schema().type(keyCols[k]);
          Object v = lit.value();
          if (t == Type.DOUBLE && v instanceof Long l) {
            v = l.doubleValue();
          }
          if (!t.accepts(v)) {
            return null;
          }
          key[k] = v;
          pinned[k] = true;
        }
      }
    }
    for (boolean p : pinned) {
      if (!p) {
        return null;
      }
    }
    return Row.wrap(key);
  }

  private static void flatten(Expr e, List<Expr> out) {
    if (e instanceof Expr.And a) {
      flatten(a.left(), out);
      flatten(a.right(), out);
    } else {
      out.add(e);
    }
  }
}
