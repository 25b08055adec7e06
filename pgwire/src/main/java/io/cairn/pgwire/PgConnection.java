package io.cairn.pgwire;

import io.cairn.engine.sql.Statements;
import io.cairn.engine.sql.Result;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: startup, authentication, then the simple and extended query protocols.
 *
 * <p>Owns: the socket and its buffered streams ({@code in}, {@link Out}), the session the
 * compatibility layer sees ({@link Compat.Session}: user, database, pid, {@code SET} values), the
 * transaction status byte ({@code txStatus}: {@code I} idle, {@code T} in a block, {@code E} in a
 * failed block), the prepared statements and portals of the extended protocol, and the
 * skip-until-Sync flag.
 *
 * <p>Threading: owned by one thread (the pool thread running {@link #run}); nothing above is read
 * or written by another. The only other entries are {@link #cancel}, which sets {@code
 * cancelRequested} while a query is in progress ({@code busy}) and cancels the budget of the
 * read-only statement in progress ({@code cancellable}), and {@link #stuckWriting}, which reads
 * when the write in progress started; those fields are volatile. The flag is checked before each
 * statement runs, while a read-only statement runs (it is abandoned: see {@link
 * PgWireServer#executeCancellable}), and again before its rows are sent; the client gets 57014. A
 * DDL statement is not abandoned: it completes, and the cancel takes effect before the next
 * statement. {@link #ready} clears the flag, so a cancel never outlives the query it was sent for.
 *
 * <p>Invariants and failure semantics:
 * <ul>
 *   <li>Statement text is split by the engine's {@link Statements} and otherwise read only through
 *       {@link SqlText}, {@link Compat} and {@link CatalogQueries}, all on the engine's tokenizer;
 *       this class scans no SQL itself beyond asking for a statement's first word.
 *   <li>A failed statement answers ErrorResponse (SQLSTATE from {@link SqlStates}, position
 *       relative to the text the client sent) and ends the rest of a simple query; a statement
 *       failing in a transaction block makes it failed ({@code E}), where only ROLLBACK or COMMIT
 *       (answered ROLLBACK) are accepted. After an error in the extended protocol, messages are
 *       skipped until Sync, as the protocol requires.
 *   <li>Portals live at most until the Sync that ends their transaction; a portal runs its
 *       statement (parameters substituted as literals, see {@link SqlText}) at its first Describe
 *       or Execute and keeps the rows, so Execute with a row limit returns PortalSuspended and
 *       resumes.
 *   <li>Only Terminate, a malformed or oversized message, an idle timeout, a client that stops
 *       reading (closed by the server's watchdog) or an I/O failure closes the connection (after a
 *       FATAL ErrorResponse where the protocol allows one); a statement's failure, even a
 *       StackOverflowError (54001), does not.
 * </ul>
 */
final class PgConnection {
  private static final Logger LOG = LoggerFactory.getLogger(PgConnection.class);
  private static final int SSL_REQUEST = 80877103;
  private static final int GSSENC_REQUEST = 80877104;
  private static final int CANCEL_REQUEST = 80877102;
  private static final int MAX_STARTUP_BYTES = 10_000;
  private static final int MAX_ERROR_CHARS = 2000;

  private final PgWireServer server;
  private final Socket socket;
  private final Map<String, Prepared> statements = new HashMap<>();
  private final Map<String, Portal> portals = new HashMap<>();
  /** This connection's SUBSCRIBE streams and cursors. */
  private final PgSubscriptions subscriptions;
  private DataInputStream in;
  private volatile Out out;
  private int pid;
  private volatile int secret;
  private boolean registered;
  private Compat.Session session;
  private char txStatus = 'I';
  private boolean skipUntilSync;
  private volatile boolean busy;
  private volatile boolean cancelRequested;
  /** The budget of the read-only statement in progress, which a cancel request ends at once; null when none. */
  private volatile io.cairn.engine.sql.StatementBudget cancellable;

  /** A parsed statement: its text and the parameter types the client declared (0: unspecified). */
  private record Prepared(String sql, int[] paramOids) {}

  /** A bound statement and, once run, its result and how many rows were sent. */
  private static final class Portal {
    final String sql;
    final short[] resultFormats;
    final boolean hasParams;
    PgResult result;
    int sent;

    Portal(String sql, short[] resultFormats, boolean hasParams) {
      this.sql = sql;
      this.resultFormats = resultFormats;
      this.hasParams = hasParams;
    }
  }

  /** A statement canceled by a CancelRequest. */
  private static final class Canceled extends RuntimeException {
    Canceled() {
      super("canceling statement due to user request", null, false, false);
    }
  }

  PgConnection(PgWireServer server, Socket socket) {
    this.server = server;
    this.socket = socket;
    this.subscriptions = new PgSubscriptions(server.backend());
  }

  void run() {
    try {
      in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 8192));
      out = new Out(socket.getOutputStream());
      socket.setSoTimeout(PgWireServer.STARTUP_TIMEOUT_MILLIS);
      if (!startup()) {
        return;
      }
      socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, server.settings().idleTimeout().toMillis()));
      loop();
    } catch (SocketTimeoutException e) {
      if (registered) {
        try {
          sendError(new SqlStates.PgError(SqlStates.IDLE_SESSION_TIMEOUT, "terminating connection due to idle-session timeout", true), "");
          out.flush();
        } catch (IOException ignored) {
          // closing anyway
        }
      }
    } catch (EOFException e) {
      LOG.debug("pgwire connection {} closed by the client", pid);
    } catch (IOException e) {
      LOG.debug("pgwire connection {} failed: {}", pid, e.getMessage());
    } catch (RuntimeException | StackOverflowError e) {
      LOG.warn("pgwire connection {} failed", pid, e);
    } finally {
      subscriptions.closeAll();
      if (registered) {
        server.closeSession(pid);
      }
      closeSocket();
    }
  }

  void closeSocket() {
    PgWireServer.closeQuietly(socket);
  }

  /** Whether a write to the client has been blocked for longer than {@code limitNanos} (the client stopped reading). */
  boolean stuckWriting(long nowNanos, long limitNanos) {
    Out o = out;
    long since = o == null ? 0 : o.writingSince;
    return since != 0 && nowNanos - since > limitNanos;
  }

  /** A CancelRequest for this connection: effective only while a query is in progress. */
  void cancel(int secretGiven) {
    if (MessageDigest.isEqual(ByteBuffer.allocate(4).putInt(secretGiven).array(), ByteBuffer.allocate(4).putInt(secret).array())
        && busy) {
      cancelRequested = true;
      io.cairn.engine.sql.StatementBudget b = cancellable;
      if (b != null) {
        // wherever the statement runs (the query pool, or this connection's thread when that
        // pool is full), it stops at its next budget check
        b.cancel(io.cairn.engine.sql.StatementCanceledException.USER_REQUEST);
      }
      LOG.info("pgwire: cancel request for connection {}", pid);
    }
  }

  // ------------------------------------------------------------------ startup

  /** Returns true when a session is established; false when the connection is to be closed. */
  private boolean startup() throws IOException {
    for (int attempt = 0; attempt < 3; attempt++) {
      int len = in.readInt();
      if (len < 8 || len > MAX_STARTUP_BYTES) {
        LOG.debug("pgwire: malformed startup packet (length {}), closing", len);
        return false;
      }
      byte[] body = new byte[len - 4];
      in.readFully(body);
      ByteBuffer b = ByteBuffer.wrap(body);
      int code = b.getInt();
      if (code == SSL_REQUEST || code == GSSENC_REQUEST) {
        out.raw('N');
        out.flush();
        continue;
      }
      if (code == CANCEL_REQUEST) {
        if (len == 16) {
          server.cancel(b.getInt(), b.getInt());
        }
        return false;
      }
      if ((code >>> 16) != 3) {
        sendError(new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "unsupported frontend protocol "
            + (code >>> 16) + "." + (code & 0xffff) + ": server supports 3.0", true), "");
        out.flush();
        return false;
      }
      Map<String, String> params = new HashMap<>();
      try {
        while (true) {
          String k = cstring(b);
          if (k.isEmpty()) {
            break;
          }
          params.put(k, cstring(b));
        }
      } catch (RuntimeException e) {
        LOG.debug("pgwire: malformed startup packet parameters, closing");
        return false;
      }
      return open(params);
    }
    return false;
  }

  private boolean open(Map<String, String> params) throws IOException {
    if (!server.tryOpenSession()) {
      sendError(new SqlStates.PgError(SqlStates.TOO_MANY_CONNECTIONS, "sorry, too many clients already (pgwire.max-connections = "
          + server.settings().maxConnections() + ")", true), "");
      out.flush();
      return false;
    }
    int[] ids = server.register(this);
    pid = ids[0];
    secret = ids[1];
    registered = true;
    String user = params.getOrDefault("user", "cairn");
    if (server.requirePassword()) {
      try {
        if (!scram(user)) {
          return false;
        }
      } catch (SqlStates.PgError e) {
        sendError(e, "");
        out.flush();
        return false;
      }
    }
    out.begin('R').int32(0).end();
    Map<String, String> status = new java.util.LinkedHashMap<>(Compat.SERVER_PARAMETERS);
    status.put("application_name", params.getOrDefault("application_name", ""));
    status.put("session_authorization", user);
    for (Map.Entry<String, String> e : status.entrySet()) {
      out.begin('S').cstring(e.getKey()).cstring(e.getValue()).end();
    }
    out.begin('K').int32(pid).int32(secret).end();
    session = new Compat.Session(user, params.getOrDefault("database", user), pid, new HashMap<>(), server.backend()::relations);
    ready();
    return true;
  }

  /** SCRAM-SHA-256 over AuthenticationSASL; true when the client proved it knows the password. */
  private boolean scram(String user) throws IOException {
    out.begin('R').int32(10).cstring(ScramSha256.MECHANISM).byte1(0).end();
    out.flush();
    if (in.read() != 'p') {
      return false;
    }
    byte[] first = readBody();
    if (first == null) {
      return false;
    }
    ByteBuffer b = ByteBuffer.wrap(first);
    String mechanism = cstring(b);
    if (!mechanism.equals(ScramSha256.MECHANISM)) {
      throw new SqlStates.PgError("28000", "SASL mechanism " + mechanism + " is not supported (use " + ScramSha256.MECHANISM + ")", true);
    }
    int len = b.getInt();
    if (len < 0 || len > b.remaining()) {
      throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "malformed SASL initial response", true);
    }
    byte[] clientFirst = new byte[len];
    b.get(clientFirst);
    ScramSha256.Exchange x = server.scram().start();
    out.begin('R').int32(11).bytes(x.serverFirst(new String(clientFirst, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8)).end();
    out.flush();
    if (in.read() != 'p') {
      return false;
    }
    byte[] fin = readBody();
    if (fin == null) {
      return false;
    }
    String serverFinal = x.serverFinal(new String(fin, StandardCharsets.UTF_8));
    if (serverFinal == null) {
      LOG.warn("pgwire: password authentication failed for user {} from {}", user, socket.getRemoteSocketAddress());
      throw new SqlStates.PgError(SqlStates.INVALID_PASSWORD, "password authentication failed for user \"" + user + "\"", true);
    }
    out.begin('R').int32(12).bytes(serverFinal.getBytes(StandardCharsets.UTF_8)).end();
    return true;
  }

  // ------------------------------------------------------------------ messages

  private void loop() throws IOException {
    while (true) {
      int type = in.read();
      if (type < 0) {
        return;
      }
      byte[] body = readBody();
      if (body == null) {
        return;
      }
      ByteBuffer b = ByteBuffer.wrap(body);
      if (type == 'X') {
        return;
      }
      busy = true;
      try {
        switch (type) {
          case 'Q' -> simpleQuery(cstring(b));
          case 'S' -> {
            skipUntilSync = false;
            if (txStatus == 'I') {
              portals.clear(); // portals end with their transaction: no result is held past it
            }
            ready();
          }
          case 'H' -> out.flush();
          case 'P', 'B', 'D', 'E', 'C' -> {
            if (!skipUntilSync) {
              extended((char) type, b);
            }
          }
          case 'd', 'c', 'f' -> {
            // COPY data outside COPY: ignored, as PostgreSQL does
          }
          case 'F' -> {
            sendError(new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "function calls are not supported"), "");
            ready();
          }
          default -> {
            sendError(new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "invalid frontend message type " + type, true), "");
            out.flush();
            return;
          }
        }
      } catch (java.nio.BufferUnderflowException e) {
        sendError(new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "invalid message format (message '" + (char) type + "' is too short)", true), "");
        out.flush();
        return;
      }
    }
  }

  /** The body of the message whose type byte was read; null (after an ErrorResponse) when its length is out of bounds. */
  private byte[] readBody() throws IOException {
    int len = in.readInt();
    int max = server.settings().maxMessageBytes();
    if (len < 4 || len - 4 > max) {
      sendError(new SqlStates.PgError(len < 4 ? SqlStates.PROTOCOL_VIOLATION : SqlStates.PROGRAM_LIMIT_EXCEEDED,
          len < 4 ? "invalid message length " + len
              : "message of " + (len - 4) + " bytes is over the limit of " + max + " bytes; closing the connection", true), "");
      out.flush();
      return null;
    }
    byte[] body = new byte[len - 4];
    in.readFully(body);
    return body;
  }

  private void ready() throws IOException {
    busy = false;
    cancelRequested = false;
    out.begin('Z').byte1(txStatus).end();
    out.flush();
  }

  // ------------------------------------------------------------------ simple query

  private void simpleQuery(String sql) throws IOException {
    List<Statements.Piece> pieces = Statements.pieces(sql);
    if (pieces.isEmpty()) {
      out.begin('I').end();
    }
    for (Statements.Piece p : pieces) {
      try {
        checkCanceled();
        if (PgSubscriptions.kind(p.text()) == PgSubscriptions.Kind.STREAM) {
          subscriptions.stream(p.text(), copyWire(), () -> cancelRequested, this::checkCanceled);
          continue; // (a stream ends by an error: a cancel, its subscription's end)
        }
        PgResult r = run(p.text());
        checkCanceled();
        if (r.hasColumns()) {
          rowDescription(r, new short[0]);
        }
        dataRows(r, new short[0], 0, r.rows().size());
        out.begin('C').cstring(r.tag()).end();
      } catch (java.io.UncheckedIOException e) {
        throw e.getCause();
      } catch (RuntimeException | StackOverflowError e) {
        fail(e);
        sendError(e, p.text(), p.offset());
        break;
      }
    }
    ready();
  }

  // ------------------------------------------------------------------ extended query

  private void extended(char type, ByteBuffer b) throws IOException {
    try {
      switch (type) {
        case 'P' -> parse(b);
        case 'B' -> bind(b);
        case 'D' -> describe(b);
        case 'E' -> execute(b);
        default -> close(b);
      }
    } catch (java.io.UncheckedIOException e) {
      throw e.getCause();
    } catch (RuntimeException | StackOverflowError e) {
      if (e instanceof java.nio.BufferUnderflowException bu) {
        throw bu;
      }
      fail(e);
      sendError(e, "");
      skipUntilSync = true;
    }
  }

  private void parse(ByteBuffer b) {
    String name = cstring(b);
    String query = cstring(b);
    int n = b.getShort();
    int[] oids = new int[Math.max(0, n)];
    for (int i = 0; i < oids.length; i++) {
      oids[i] = b.getInt();
    }
    List<Statements.Piece> pieces = Statements.pieces(query);
    if (pieces.size() > 1) {
      throw new SqlStates.PgError(SqlStates.SYNTAX_ERROR, "cannot insert multiple commands into a prepared statement");
    }
    String sql = pieces.isEmpty() ? "" : pieces.get(0).text();
    int max = SqlText.maxParameter(sql);
    if (max > oids.length) {
      oids = java.util.Arrays.copyOf(oids, max);
    }
    if (!name.isEmpty() && statements.containsKey(name)) {
      throw new SqlStates.PgError(SqlStates.DUPLICATE_PREPARED_STATEMENT, "prepared statement \"" + name + "\" already exists");
    }
    statements.put(name, new Prepared(sql, oids));
    out.begin('1').end();
  }

  private void bind(ByteBuffer b) {
    String portal = cstring(b);
    String stmtName = cstring(b);
    short[] paramFormats = shorts(b);
    int n = b.getShort();
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int len = b.getInt();
      if (len < 0) {
        values.add(null);
      } else {
        byte[] v = new byte[len];
        b.get(v);
        values.add(v);
      }
    }
    short[] resultFormats = shorts(b);
    Prepared p = statements.get(stmtName);
    if (p == null) {
      throw new SqlStates.PgError(SqlStates.INVALID_STATEMENT_NAME, "prepared statement \"" + stmtName + "\" does not exist");
    }
    if (n != p.paramOids().length) {
      throw new SqlStates.PgError(SqlStates.PROTOCOL_VIOLATION, "bind message supplies " + n + " parameters, but prepared statement \""
          + stmtName + "\" requires " + p.paramOids().length);
    }
    List<String> literals = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      literals.add(SqlText.literal(p.paramOids()[i], format(paramFormats, i), values.get(i)));
    }
    String sql = n == 0 ? p.sql() : SqlText.substitute(p.sql(), literals);
    if (!portal.isEmpty() && portals.containsKey(portal)) {
      throw new SqlStates.PgError("42P03", "cursor \"" + portal + "\" already exists");
    }
    portals.put(portal, new Portal(sql, resultFormats, n > 0));
    out.begin('2').end();
  }

  private void describe(ByteBuffer b) {
    byte what = b.get();
    String name = cstring(b);
    if (what == 'S') {
      Prepared p = statements.get(name);
      if (p == null) {
        throw new SqlStates.PgError(SqlStates.INVALID_STATEMENT_NAME, "prepared statement \"" + name + "\" does not exist");
      }
      out.begin('t').int16(p.paramOids().length);
      for (int oid : p.paramOids()) {
        out.int32(oid == 0 ? PgType.TEXT.oid : oid);
      }
      out.end();
      List<String> nulls = new ArrayList<>();
      for (int i = 0; i < p.paramOids().length; i++) {
        nulls.add("NULL");
      }
      Optional<PgResult> cursor = subscriptions.describe(p.sql());
      if (cursor.isPresent()) {
        if (cursor.get().hasColumns()) {
          rowDescription(cursor.get(), new short[0]);
        } else {
          out.begin('n').end();
        }
        return;
      }
      String probe = nulls.isEmpty() ? p.sql() : SqlText.substitute(p.sql(), nulls);
      Optional<PgResult> compat = p.sql().isEmpty() ? Optional.empty() : Compat.answer(probe, session);
      if (compat.isPresent() && compat.get().hasColumns()) {
        rowDescription(compat.get(), new short[0]);
        return;
      }
      Optional<List<ResultTypes.Column>> cols = Optional.empty();
      if (compat.isEmpty()) {
        io.cairn.engine.sql.StatementBudget budget = io.cairn.engine.sql.StatementBudget.of(statementTimeout());
        cancellable = budget;
        try {
          cols = server.types().describe(probe, p.sql(), budget);
        } finally {
          cancellable = null;
        }
      }
      if (cols.isPresent()) {
        List<String> names = cols.get().stream().map(ResultTypes.Column::name).toList();
        List<PgType> types = cols.get().stream().map(ResultTypes.Column::type).toList();
        rowDescription(new PgResult(names, types, List.of(), ""), new short[0]);
      } else {
        out.begin('n').end();
      }
      return;
    }
    Portal portal = portal(name);
    runPortal(portal);
    if (portal.result.hasColumns()) {
      rowDescription(portal.result, portal.resultFormats);
    } else {
      out.begin('n').end();
    }
  }

  private void execute(ByteBuffer b) {
    String name = cstring(b);
    int maxRows = b.getInt();
    Portal portal = portal(name);
    if (portal.sql.isEmpty()) {
      out.begin('I').end();
      return;
    }
    runPortal(portal);
    checkCanceled();
    PgResult r = portal.result;
    int total = r.rows().size();
    int end = maxRows > 0 ? (int) Math.min(total, (long) portal.sent + maxRows) : total;
    int from = portal.sent;
    dataRows(r, portal.resultFormats, from, end);
    portal.sent = end;
    if (end < total) {
      out.begin('s').end();
    } else if (r.tag().startsWith("SELECT ")) {
      out.begin('C').cstring("SELECT " + (end - from)).end();
    } else {
      out.begin('C').cstring(r.tag()).end();
    }
  }

  private void close(ByteBuffer b) {
    byte what = b.get();
    String name = cstring(b);
    if (what == 'S') {
      statements.remove(name);
    } else {
      portals.remove(name);
    }
    out.begin('3').end();
  }

  private Portal portal(String name) {
    Portal p = portals.get(name);
    if (p == null) {
      throw new SqlStates.PgError(SqlStates.INVALID_CURSOR_NAME, "portal \"" + name + "\" does not exist");
    }
    return p;
  }

  private void runPortal(Portal p) {
    if (p.result == null) {
      checkCanceled();
      if (p.sql.isEmpty()) {
        p.result = PgResult.command("");
        return;
      }
      try {
        p.result = run(p.sql);
      } catch (RuntimeException e) {
        if (!p.hasParams) {
          throw new PositionedError(e, SqlStates.position(e, p.sql));
        }
        throw e;
      }
    }
  }

  /** An error with its position in the statement the client sent. */
  private static final class PositionedError extends RuntimeException {
    final int position;

    PositionedError(RuntimeException cause, int position) {
      super(cause.getMessage(), cause, false, false);
      this.position = position;
    }
  }

  // ------------------------------------------------------------------ running statements

  /** Runs one statement: the compatibility layer's answer, or the engine's. */
  private PgResult run(String statement) {
    switch (PgSubscriptions.kind(statement)) {
      case DECLARE -> {
        return subscriptions.declare(statement, txStatus == 'T');
      }
      case FETCH -> {
        return subscriptions.fetch(statement, statementTimeout(), () -> cancelRequested, this::checkCanceled);
      }
      case CLOSE -> {
        return subscriptions.close(statement);
      }
      case STREAM -> throw new SqlStates.PgError(SqlStates.FEATURE_NOT_SUPPORTED, "Cannot run SUBSCRIBE here: it streams as COPY data, "
          + "which a prepared statement cannot receive; send COPY (SUBSCRIBE ...) TO STDOUT as a simple query, or use "
          + "DECLARE c CURSOR FOR SUBSCRIBE ... and FETCH");
      default -> {
        // a statement for the compatibility layer or the engine
      }
    }
    String sql = SqlText.rewriteCasts(statement);
    Optional<PgResult> compat = Compat.answer(sql, session);
    if (txStatus == 'E' && !(compat.isPresent() && (compat.get().tag().equals("ROLLBACK") || compat.get().tag().equals("COMMIT")))) {
      throw new SqlStates.PgError(SqlStates.IN_FAILED_TRANSACTION,
          "current transaction is aborted, commands ignored until end of transaction block");
    }
    if (compat.isPresent()) {
      PgResult r = compat.get();
      switch (r.tag()) {
        case "BEGIN" -> txStatus = 'T';
        case "COMMIT" -> {
          subscriptions.closeAll(); // cursors end with their transaction
          if (txStatus == 'E') {
            txStatus = 'I';
            return PgResult.command("ROLLBACK");
          }
          txStatus = 'I';
        }
        case "ROLLBACK" -> {
          subscriptions.closeAll();
          txStatus = 'I';
        }
        default -> {
          // not a transaction command
        }
      }
      return r;
    }
    List<Result> results;
    io.cairn.engine.sql.StatementBudget budget = io.cairn.engine.sql.StatementBudget.of(statementTimeout());
    boolean read = readOnly(sql);
    if (read) {
      cancellable = budget;
      if (cancelRequested) {
        budget.cancel(io.cairn.engine.sql.StatementCanceledException.USER_REQUEST);
      }
    }
    try {
      if (read) {
        results = server.executeCancellable(sql, budget, () -> cancelRequested);
      } else {
        results = server.backend().execute(sql, budget);
      }
      if (results.size() != 1) {
        throw new SqlStates.PgError(SqlStates.INTERNAL_ERROR, "statement returned " + results.size() + " results");
      }
      return ResultTypes.toWire(results.get(0));
    } catch (java.util.concurrent.CancellationException e) {
      cancelRequested = false;
      throw new Canceled();
    } finally {
      cancellable = null;
    }
  }

  /**
   * The session's {@code statement_timeout} ({@code SET statement_timeout = 5000}, {@code '5s'},
   * {@code '1min'}; 0 turns it off), else the server's default. A value that cannot be read is an
   * error naming it, as in PostgreSQL.
   */
  private java.time.Duration statementTimeout() {
    String v = session.parameters().get("statement_timeout");
    if (v == null || v.equalsIgnoreCase("default")) {
      return server.backend().statementTimeout();
    }
    java.util.regex.Matcher m = TIMEOUT.matcher(v.strip().toLowerCase(java.util.Locale.ROOT));
    if (!m.matches()) {
      session.parameters().remove("statement_timeout");
      throw new SqlStates.PgError(SqlStates.INVALID_PARAMETER_VALUE, "invalid value for parameter \"statement_timeout\": \"" + v
          + "\" (use milliseconds, or a number with ms, s, min or h; 0 for none)");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "ms" : m.group(2);
    return switch (unit) {
      case "s" -> java.time.Duration.ofSeconds(n);
      case "min" -> java.time.Duration.ofMinutes(n);
      case "h" -> java.time.Duration.ofHours(n);
      default -> java.time.Duration.ofMillis(n);
    };
  }

  private static final java.util.regex.Pattern TIMEOUT = java.util.regex.Pattern.compile("(\\d{1,12})\\s*(ms|s|min|h)?");

  /** Whether the statement only reads (SELECT, SHOW, EXPLAIN): it may be abandoned by a cancel. */
  private static boolean readOnly(String sql) {
    String first = io.cairn.engine.sql.SqlScanner.firstWord(sql);
    return first.equals("select") || first.equals("show") || first.equals("explain");
  }

  private void checkCanceled() {
    if (cancelRequested) {
      cancelRequested = false;
      throw new Canceled();
    }
  }

  /** A statement failed: a transaction block becomes failed. */
  private void fail(Throwable e) {
    if (txStatus == 'T') {
      txStatus = 'E';
    }
  }

  // ------------------------------------------------------------------ output

  /** COPY TO STDOUT's messages: CopyOutResponse (text), CopyData per row. */
  private PgSubscriptions.Wire copyWire() {
    return new PgSubscriptions.Wire() {
      @Override
      public void copyOutStart(int columns) {
        out.begin('H').byte1(0).int16(columns);
        for (int i = 0; i < columns; i++) {
          out.int16(0);
        }
        out.end();
      }

      @Override
      public void copyData(byte[] line) {
        out.begin('d').bytes(line).end();
      }

      @Override
      public void flush() throws IOException {
        out.flush();
      }
    };
  }

  private void rowDescription(PgResult r, short[] formats) {
    out.begin('T').int16(r.columns().size());
    for (int i = 0; i < r.columns().size(); i++) {
      PgType t = r.types().get(i);
      out.cstring(r.columns().get(i)).int32(0).int16(0).int32(t.oid).int16(t.length).int32(-1).int16(format(formats, i));
    }
    out.end();
  }

  private void dataRows(PgResult r, short[] formats, int from, int to) {
    int n = r.columns().size();
    for (int row = from; row < to; row++) {
      List<Object> values = r.rows().get(row);
      out.begin('D').int16(n);
      for (int i = 0; i < n; i++) {
        Object v = values.get(i);
        if (v == null) {
          out.int32(-1);
        } else {
          PgType t = r.types().get(i);
          byte[] bytes = format(formats, i) == 1 ? t.binary(v) : t.text(v).getBytes(StandardCharsets.UTF_8);
          out.int32(bytes.length).bytes(bytes);
        }
      }
      out.end();
    }
  }

  private void sendError(Throwable e, String statement) {
    sendError(e, statement, 0);
  }

  private void sendError(Throwable e, String statement, int offset) {
    Throwable cause = e instanceof PositionedError pe ? pe.getCause() : e;
    String code;
    String message;
    if (cause instanceof Canceled) {
      code = SqlStates.QUERY_CANCELED;
      message = cause.getMessage();
    } else if (cause instanceof StackOverflowError) {
      code = "54001";
      message = "Cannot execute statement: it is nested too deeply";
    } else {
      code = SqlStates.of(cause);
      message = String.valueOf(cause.getMessage());
      if (code.equals(SqlStates.INTERNAL_ERROR)) {
        LOG.warn("pgwire: statement failed", cause);
        message = cause.getClass().getSimpleName() + ": " + message;
      }
    }
    if (message.length() > MAX_ERROR_CHARS) {
      message = message.substring(0, MAX_ERROR_CHARS) + "... (" + (message.length() - MAX_ERROR_CHARS) + " more characters)";
    }
    int position = e instanceof PositionedError pe ? pe.position
        : statement.isEmpty() ? 0 : SqlStates.position(cause, statement);
    boolean fatal = cause instanceof SqlStates.PgError pg && pg.fatal();
    String severity = fatal ? "FATAL" : "ERROR";
    out.begin('E').byte1('S').cstring(severity).byte1('V').cstring(severity).byte1('C').cstring(code).byte1('M').cstring(message);
    if (position > 0) {
      out.byte1('P').cstring(Integer.toString(position + offset));
    }
    out.byte1(0).end();
  }

  private static int format(short[] formats, int i) {
    return formats.length == 0 ? 0 : formats.length == 1 ? formats[0] : i < formats.length ? formats[i] : 0;
  }

  private static short[] shorts(ByteBuffer b) {
    int n = b.getShort();
    short[] s = new short[Math.max(0, n)];
    for (int i = 0; i < s.length; i++) {
      s[i] = b.getShort();
    }
    return s;
  }

  /** A NUL-terminated UTF-8 string. */
  private static String cstring(ByteBuffer b) {
    int start = b.position();
    int end = start;
    while (b.get(end) != 0) {
      end++;
    }
    String s = new String(b.array(), b.arrayOffset() + start, end - start, StandardCharsets.UTF_8);
    b.position(end + 1);
    return s;
  }

  /** The output buffer: messages are built in place (length patched at the end) and written when large or flushed. */
  private static final class Out {
    private static final int WRITE_AT = 64 * 1024;
    private final OutputStream stream;
    /** When the write in progress started (System.nanoTime), 0 when none: a client that stops reading is found by it. */
    private volatile long writingSince;
    private byte[] buf = new byte[16 * 1024];
    private int len;
    private int start;

    Out(OutputStream stream) {
      this.stream = stream;
    }

    void raw(char c) {
      ensure(1);
      buf[len++] = (byte) c;
    }

    Out begin(char type) {
      ensure(5);
      buf[len++] = (byte) type;
      start = len;
      len += 4;
      return this;
    }

    Out byte1(int v) {
      ensure(1);
      buf[len++] = (byte) v;
      return this;
    }

    Out int16(int v) {
      ensure(2);
      buf[len++] = (byte) (v >>> 8);
      buf[len++] = (byte) v;
      return this;
    }

    Out int32(int v) {
      ensure(4);
      buf[len++] = (byte) (v >>> 24);
      buf[len++] = (byte) (v >>> 16);
      buf[len++] = (byte) (v >>> 8);
      buf[len++] = (byte) v;
      return this;
    }

    Out bytes(byte[] b) {
      ensure(b.length);
      System.arraycopy(b, 0, buf, len, b.length);
      len += b.length;
      return this;
    }

    Out cstring(String s) {
      bytes(s.replace("\0", "").getBytes(StandardCharsets.UTF_8));
      return byte1(0);
    }

    void end() {
      int l = len - start;
      buf[start] = (byte) (l >>> 24);
      buf[start + 1] = (byte) (l >>> 16);
      buf[start + 2] = (byte) (l >>> 8);
      buf[start + 3] = (byte) l;
      if (len >= WRITE_AT) {
        try {
          write();
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
    }

    void flush() throws IOException {
      write();
      stream.flush();
    }

    private void write() throws IOException {
      writingSince = Math.max(1, System.nanoTime());
      try {
        stream.write(buf, 0, len);
      } finally {
        writingSince = 0;
      }
      len = 0;
    }

    private void ensure(int n) {
      if (len + n > buf.length) {
        buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }
  }
}
