package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.sql.Result;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.pgwire.PgWireServer;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PostgreSQL wire protocol against a serving node: the real psql binary and pgjdbc, results
 * compared with the node's own SQL, SQLSTATEs, cancel, concurrency under ingest and snapshots, and
 * the bounds (a malformed startup packet, an oversized message, too many connections).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured under 3 s
class PgWireIT {
  private static final String DAILY = "0 0 0 * * ?";
  @TempDir static Path dir;
  static Node node;
  static int port;

  @BeforeAll
  static void start() {
    Path yaml = Http.config(dir, DAILY, List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 50, categories = 3, seed = 1, limit = 500)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category",
        "CREATE SOURCE big FROM LOAD GENERATOR (keys = 100000, categories = 10, seed = 2, limit = 100000, delete-percent = 0)",
        "CREATE SOURCE live FROM LOAD GENERATOR (keys = 1000, categories = 5, seed = 3, rate = 2000)",
        "CREATE MATERIALIZED VIEW live_by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM live GROUP BY category",
        "CREATE MATERIALIZED VIEW odd AS SELECT id, 'NULL' AS a, NULL AS b, '' AS c, '日本語 ✓ é' AS d, amount / 7e0 AS e, "
            + "9223372036854775807 AS big, amount * 1e-1 AS f, amount > 50 AS flag FROM gen WHERE id < 5"));
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    node = Node.recover(cfg, Node.Options.defaults());
    node.serve();
    port = node.pgwirePort();
    assertThat(port).isPositive();
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
  }

  static Connection connect() throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/cairn?user=cairn&connectTimeout=10&socketTimeout=60");
  }

  static Result engine(String sql) {
    return node.session().execute(sql);
  }

  // ------------------------------------------------------------------ psql

  static String psqlBinary() {
    for (String p : List.of("/usr/lib/postgresql/15/bin/psql", "/usr/bin/psql")) {
      if (new File(p).canExecute()) {
        return p;
      }
    }
    return "psql";
  }

  record Run(int exit, String out, String err) {}

  static Run psql(String sql) throws Exception {
    return psql(port, null, sql);
  }

  static Run psql(int port, String password, String sql) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(psqlBinary(), "-X", "-A", "-t", "-w", "-h", "127.0.0.1", "-p", String.valueOf(port),
        "-U", "cairn", "-d", "cairn", "-v", "ON_ERROR_STOP=1", "-c", sql);
    pb.environment().put("PGCONNECT_TIMEOUT", "10");
    pb.environment().remove("PGPASSWORD");
    if (password != null) {
      pb.environment().put("PGPASSWORD", password);
    }
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
  }

  /** psql's unaligned tuples-only rendering of an engine result: '|' between values, NULL empty, booleans t/f. */
  static String unaligned(Result r) {
    StringBuilder sb = new StringBuilder();
    for (List<Object> row : r.rows()) {
      List<String> cells = new ArrayList<>();
      for (Object v : row) {
        cells.add(v == null ? "" : v instanceof Boolean b ? (b ? "t" : "f") : String.valueOf(v));
      }
      sb.append(String.join("|", cells)).append('\n');
    }
    return sb.toString();
  }

  /**
   * What a BI tool sends the moment it connects: a count, a GROUP BY with ORDER BY and LIMIT, a join;
   * answered over pgjdbc by a transient dataflow, against the engine's own rows of the same sources.
   */
  @Test
  void aggregatesJoinsAndOrderedWindowsAreAnsweredOverJdbc() throws Exception {
    List<List<Object>> bigRows = engine("SELECT category FROM big").rows();
    java.util.Map<Long, Long> perCategory = new java.util.TreeMap<>();
    for (List<Object> r : bigRows) {
      perCategory.merge((Long) r.get(0), 1L, Long::sum);
    }
    List<String> top = perCategory.entrySet().stream()
        .sorted(java.util.Map.Entry.<Long, Long>comparingByValue().reversed().thenComparing(java.util.Map.Entry.comparingByKey()))
        .limit(3).map(e -> e.getKey() + " " + e.getValue()).toList();
    try (Connection c = connect(); Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM big")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getMetaData().getColumnType(1)).isEqualTo(Types.BIGINT);
        assertThat(rs.getLong(1)).isEqualTo(bigRows.size());
      }
      List<String> got = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("SELECT category, count(*) AS n FROM big GROUP BY category ORDER BY n DESC, category LIMIT 3")) {
        while (rs.next()) {
          got.add(rs.getLong(1) + " " + rs.getLong(2));
        }
      }
      assertThat(got).isEqualTo(top);
      List<List<Object>> byCat = engine("SELECT category, n FROM by_cat").rows();
      List<List<Object>> gen = engine("SELECT id, category FROM gen WHERE id < 10").rows();
      List<String> expected = new ArrayList<>();
      for (List<Object> g : gen) {
        for (List<Object> b : byCat) {
          if (g.get(1).equals(b.get(0))) {
            expected.add(g.get(0) + " " + b.get(1));
          }
        }
      }
      got.clear();
      try (ResultSet rs = st.executeQuery("SELECT gen.id, by_cat.n FROM gen JOIN by_cat ON gen.category = by_cat.category"
          + " WHERE gen.id < 10 ORDER BY id")) {
        while (rs.next()) {
          got.add(rs.getLong(1) + " " + rs.getLong(2));
        }
      }
      assertThat(got).isEqualTo(expected);
      // a DATE column: pgjdbc reads it as a date, by text and (a named statement past prepareThreshold) by binary
      long id = (Long) gen.get(0).get(0);
      java.time.LocalDate due = java.time.LocalDate.parse("2020-01-01").plusDays((Long) engine("SELECT amount FROM gen WHERE id = " + id).rows().get(0).get(0) % 400);
      try (ResultSet rs = st.executeQuery("SELECT DATE '2020-01-01' + amount % 400 AS due, DATE '2024-02-29' - 1 AS d FROM gen WHERE id = " + id)) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getMetaData().getColumnType(1)).isEqualTo(Types.DATE);
        assertThat(rs.getMetaData().getColumnTypeName(1)).isEqualTo("date");
        assertThat(rs.getObject(1, java.time.LocalDate.class)).isEqualTo(due);
        assertThat(rs.getString(2)).isEqualTo("2024-02-28");
      }
      // NUMERIC: exact over the wire, by text and by binary (numeric's base-10000 digits)
      try (var ps = c.prepareStatement("SELECT amount * 0.01 AS price, -0.000123 AS tiny, 12345678.9 - amount AS big FROM gen WHERE id = ?")) {
        long amount = (Long) engine("SELECT amount FROM gen WHERE id = " + id).rows().get(0).get(0);
        for (int i = 0; i < 7; i++) {
          ps.setLong(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getMetaData().getColumnTypeName(1)).isEqualTo("numeric");
            assertThat(rs.getBigDecimal(1).compareTo(java.math.BigDecimal.valueOf(amount, 2))).as("execution %d", i).isZero();
            assertThat(rs.getBigDecimal(2)).isEqualByComparingTo("-0.000123");
            assertThat(rs.getBigDecimal(3).compareTo(new java.math.BigDecimal("12345678.9").subtract(java.math.BigDecimal.valueOf(amount)))).isZero();
          }
        }
      }
      // INTERVAL: oid 1186, PostgreSQL's text, which pgjdbc's PGInterval reads into the same fields
      try (var ps = c.prepareStatement("SELECT INTERVAL '1 month' - INTERVAL '1 day' * (amount % 40) + INTERVAL '1 second' * amount / 1000 AS took"
          + " FROM gen WHERE id = ?")) {
        long amount = (Long) engine("SELECT amount FROM gen WHERE id = " + id).rows().get(0).get(0);
        io.cairn.engine.row.Interval want = new io.cairn.engine.row.Interval(1, (int) -(amount % 40), 0)
            .plus(new io.cairn.engine.row.Interval(0, 0, amount * 1_000_000L).dividedBy(1000));
        for (int i = 0; i < 7; i++) {
          ps.setLong(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getMetaData().getColumnTypeName(1)).isEqualTo("interval");
            assertThat(rs.getString(1)).as("execution %d", i).isEqualTo(want.toString());
            org.postgresql.util.PGInterval pi = (org.postgresql.util.PGInterval) rs.getObject(1);
            assertThat(List.of(pi.getYears() * 12 + pi.getMonths(), pi.getDays())).isEqualTo(List.of(want.months(), want.days()));
          }
        }
      }
      try (var ps = c.prepareStatement("SELECT DATE '2020-01-01' + amount % 400 AS due FROM gen WHERE id = ?")) {
        for (int i = 0; i < 7; i++) {
          ps.setLong(1, id);
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getObject(1, java.time.LocalDate.class)).as("execution %d", i).isEqualTo(due);
          }
        }
      }
    }
  }

  @Test
  void psqlAnswersLikeTheNode() throws Exception {
    for (String q : List.of("SELECT * FROM by_cat", "SELECT * FROM gen", "SELECT * FROM odd", "SELECT id, amount FROM gen WHERE id = 7",
        "SHOW VIEWS")) {
      Run r = psql(q);
      assertThat(r.exit()).as(q + ": " + r.err()).isZero();
      assertThat(r.out()).as(q).isEqualTo(unaligned(engine(q)));
    }
    Run two = psql("SELECT * FROM by_cat; SELECT id FROM gen WHERE id = 3");
    assertThat(two.out()).isEqualTo(unaligned(engine("SELECT * FROM by_cat")) + unaligned(engine("SELECT id FROM gen WHERE id = 3")));
    Run bad = psql("SELECT * FROM nope");
    assertThat(bad.exit()).isNotZero();
    assertThat(bad.err()).contains("ERROR").contains("unknown table 'nope'");
    Run version = psql("SELECT version()");
    assertThat(version.out()).startsWith("PostgreSQL 15.0 (cairn)");
  }

  // ------------------------------------------------------------------ pgjdbc

  @Test
  void jdbcValuesRoundTripExactly() throws Exception {
    Result want = engine("SELECT * FROM odd");
    assertThat(want.rows()).isNotEmpty();
    try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM odd")) {
      ResultSetMetaData md = rs.getMetaData();
      assertThat(md.getColumnCount()).isEqualTo(want.columns().size());
      assertThat(md.getColumnType(1)).isEqualTo(Types.BIGINT);
      assertThat(md.getColumnTypeName(2)).isEqualTo("text");
      assertThat(md.getColumnType(6)).isEqualTo(Types.DOUBLE);
      assertThat(md.getColumnType(9)).isEqualTo(Types.BIT); // pgjdbc reports bool as BIT
      int row = 0;
      while (rs.next()) {
        List<Object> w = want.rows().get(row++);
        for (int i = 0; i < w.size(); i++) {
          Object got = rs.getObject(i + 1);
          assertThat(got).as("row %d column %s", row, want.columns().get(i)).isEqualTo(w.get(i));
        }
      }
      assertThat(row).isEqualTo(want.rows().size());
    }
    // special doubles and exact round trip of every double in a bigger result
    try (Connection c = connect(); Statement s = c.createStatement();
        // doubles (an exponent makes a DOUBLE literal; 3.0 would be a NUMERIC, as in PostgreSQL)
        ResultSet rs = s.executeQuery("SELECT id, amount / 3e0 AS third, amount * 11e-1 AS more FROM gen")) {
      Result w = engine("SELECT id, amount / 3e0 AS third, amount * 11e-1 AS more FROM gen");
      int row = 0;
      while (rs.next()) {
        assertThat(rs.getLong(1)).isEqualTo(w.rows().get(row).get(0));
        assertThat(Double.doubleToLongBits(rs.getDouble(2))).isEqualTo(Double.doubleToLongBits((Double) w.rows().get(row).get(1)));
        assertThat(Double.doubleToLongBits(rs.getDouble(3))).isEqualTo(Double.doubleToLongBits((Double) w.rows().get(row).get(2)));
        row++;
      }
      assertThat(row).isEqualTo(w.rows().size());
    }
  }

  @Test
  void preparedStatementsWithParameters() throws Exception {
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("SELECT id, category, amount FROM gen WHERE id = ?")) {
      // more executions than pgjdbc's prepareThreshold (5): the later ones use a named statement and binary results
      for (long id = 0; id < 12; id++) {
        ps.setLong(1, id);
        Result w = engine("SELECT id, category, amount FROM gen WHERE id = " + id);
        try (ResultSet rs = ps.executeQuery()) {
          for (List<Object> row : w.rows()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(row.get(0));
            assertThat(rs.getLong(2)).isEqualTo(row.get(1));
            assertThat(rs.getLong(3)).isEqualTo(row.get(2));
          }
          assertThat(rs.next()).isFalse();
        }
      }
    }
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("SELECT id, d FROM odd WHERE d = ? AND id >= ?")) {
      ps.setString(1, "日本語 ✓ é");
      ps.setInt(2, 0);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(2)).isEqualTo("日本語 ✓ é");
      }
      ps.setString(1, "x' OR 'a' = 'a"); // a quote cannot end the literal
      ps.setInt(2, 0);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isFalse();
      }
    }
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("SELECT id FROM gen WHERE amount > ? AND id < ?")) {
      ps.setDouble(1, 10.5);
      ps.setLong(2, -5); // a negative number next to an operator
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isFalse();
      }
    }
  }

  @Test
  void psqlBrowsesTheCatalog() throws Exception {
    Run list = psql("\\d");
    assertThat(list.err()).isEmpty();
    assertThat(list.out()).isEqualTo("""
        public|big|table|cairn
        public|by_cat|materialized view|cairn
        public|gen|table|cairn
        public|live|table|cairn
        public|live_by_cat|materialized view|cairn
        public|odd|materialized view|cairn
        """);
    assertThat(psql("\\dm").out()).isEqualTo("""
        public|by_cat|materialized view|cairn
        public|live_by_cat|materialized view|cairn
        public|odd|materialized view|cairn
        """);
    assertThat(psql("\\dt").out()).isEqualTo("public|big|table|cairn\npublic|gen|table|cairn\npublic|live|table|cairn\n");
    Run views = psql("\\dv"); // cairn's views are all materialized
    assertThat(views.exit()).isZero();
    assertThat(views.out()).isEmpty();
    assertThat(views.err()).contains("Did not find any relations.");
    Run byCat = psql("\\d by_cat");
    assertThat(byCat.err()).isEmpty();
    assertThat(byCat.out()).isEqualTo("category|bigint|||\nn|bigint|||\ntotal|bigint|||\n");
    assertThat(psql("\\d odd").out()).isEqualTo("""
        id|bigint|||
        a|text|||
        b|text|||
        c|text|||
        d|text|||
        e|double precision|||
        big|bigint|||
        f|double precision|||
        flag|boolean|||
        """);
    assertThat(psql("\\d+ gen").out()).isEqualTo("id|bigint||||plain|||\ncategory|bigint||||plain|||\namount|bigint||||plain|||\n");
    Run other = psql("SELECT relname FROM pg_catalog.pg_class");
    assertThat(other.exit()).isNotZero();
    assertThat(other.err()).contains("Cannot answer this catalog query");
  }

  @Test
  void jdbcMetadataListsViewsAndColumns() throws Exception {
    try (Connection c = connect()) {
      java.sql.DatabaseMetaData md = c.getMetaData();
      assertThat(metadata(md.getSchemas(), "TABLE_SCHEM")).containsExactly("public");
      assertThat(metadata(md.getTables(null, "public", "%", new String[] {"MATERIALIZED VIEW"}), "TABLE_NAME"))
          .containsExactly("by_cat", "live_by_cat", "odd");
      assertThat(metadata(md.getTables(null, null, "%", null), "TABLE_TYPE", "TABLE_SCHEM", "TABLE_NAME")).containsExactly(
          "MATERIALIZED VIEW public by_cat", "MATERIALIZED VIEW public live_by_cat", "MATERIALIZED VIEW public odd",
          "TABLE public big", "TABLE public gen", "TABLE public live");
      assertThat(metadata(md.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"}), "TABLE_NAME"))
          .containsExactly("big", "gen", "live");
      assertThat(metadata(md.getColumns(null, "public", "odd", "%"), "ORDINAL_POSITION", "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME"))
          .containsExactly("1 id -5 int8", "2 a 12 text", "3 b 12 text", "4 c 12 text", "5 d 12 text", "6 e 8 float8",
              "7 big -5 int8", "8 f 8 float8", "9 flag -7 bool");
      // what a BI tool does next: query the view it found, by the names and types it was given
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT category, n, total FROM by_cat")) {
        assertThat(rs.getMetaData().getColumnType(3)).isEqualTo(Types.BIGINT);
      }
    }
  }

  @Test
  void stringAndUntypedParametersCompareWithNumberColumns() throws Exception {
    Result want = engine("SELECT id, category, amount FROM gen WHERE id = 3");
    assertThat(want.rows()).hasSize(1);
    for (String url : List.of("", "&stringtype=unspecified")) {
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/cairn?user=cairn" + url);
          PreparedStatement ps = c.prepareStatement("SELECT id, category, amount FROM gen WHERE id = ?")) {
        for (int i = 0; i < 7; i++) { // past prepareThreshold: a named statement too
          if (i % 2 == 0) {
            ps.setString(1, "3");
          } else {
            ps.setObject(1, "3");
          }
          try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(List.<Object>of(rs.getLong(1), rs.getLong(2), rs.getLong(3))).isEqualTo(want.rows().get(0));
            assertThat(rs.next()).isFalse();
          }
        }
        ps.setString(1, "three"); // not a number: a clear error, not a wrong answer
        assertThatThrownBy(ps::executeQuery).isInstanceOf(SQLException.class).hasMessageContaining("type mismatch");
      }
    }
  }

  static List<String> metadata(ResultSet rs, String... columns) throws SQLException {
    return io.cairn.pgwire.PgCatalogIT.rows(rs, columns);
  }

  @Test
  void whatDriversAskAfterConnecting() throws Exception {
    try (Connection c = connect()) {
      assertThat(c.getMetaData().getDatabaseProductName()).isEqualTo("PostgreSQL");
      assertThat(c.getMetaData().getDatabaseProductVersion()).startsWith("15.0");
      assertThat(c.getSchema()).isEqualTo("public");
      assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_READ_COMMITTED);
      c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      c.setReadOnly(true);
      c.setReadOnly(false);
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM by_cat")) {
        ResultSetMetaData md = rs.getMetaData();
        assertThat(md.getColumnClassName(1)).isEqualTo("java.lang.Long");
        assertThat(md.getPrecision(1)).isEqualTo(19);
        md.isNullable(1);
        md.getTableName(1);
        md.isAutoIncrement(1);
        assertThat(rs.next()).isTrue();
      }
    }
  }

  @Test
  void fetchSizeBinaryResultsAndSimpleQueryMode() throws Exception {
    Result want = engine("SELECT * FROM big");
    try (Connection c = connect()) {
      c.setAutoCommit(false); // pgjdbc fetches in batches only inside a transaction
      try (Statement s = c.createStatement()) {
        s.setFetchSize(1000);
        int n = 0;
        try (ResultSet rs = s.executeQuery("SELECT * FROM big")) {
          while (rs.next()) {
            assertThat(rs.getLong(1)).isEqualTo(want.rows().get(n++).get(0));
          }
        }
        assertThat(n).isEqualTo(want.rows().size()).isPositive();
      }
      c.commit();
    }
    // always server-prepared: pgjdbc asks for binary int8, float8 and bool results from the first execution
    Result odd = engine("SELECT id, e, f, flag, big, d, b FROM odd");
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/cairn?user=cairn&prepareThreshold=-1");
        PreparedStatement ps = c.prepareStatement("SELECT id, e, f, flag, big, d, b FROM odd");
        ResultSet rs = ps.executeQuery()) {
      int row = 0;
      while (rs.next()) {
        List<Object> w = odd.rows().get(row++);
        for (int i = 0; i < w.size(); i++) {
          assertThat(rs.getObject(i + 1)).isEqualTo(w.get(i));
        }
      }
      assertThat(row).isEqualTo(odd.rows().size());
    }
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/cairn?user=cairn&preferQueryMode=simple");
        PreparedStatement ps = c.prepareStatement("SELECT id, d FROM odd WHERE d = ? AND id = ?")) {
      ps.setString(1, "日本語 ✓ é");
      ps.setLong(2, 1);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isEqualTo(!engine("SELECT id FROM odd WHERE id = 1").rows().isEmpty());
      }
    }
  }

  static String sqlState(String sql) {
    try (Connection c = connect(); Statement s = c.createStatement()) {
      s.execute(sql);
      return "00000";
    } catch (SQLException e) {
      return e.getSQLState();
    }
  }

  @Test
  void errorsCarrySqlStates() throws Exception {
    assertThat(sqlState("SELEC id FROM gen")).isEqualTo("42601");
    assertThat(sqlState("SELECT * FROM nope")).isEqualTo("42P01");
    assertThat(sqlState("SELECT nope FROM gen")).isEqualTo("42703");
    assertThat(sqlState("CREATE SOURCE gen FROM LOAD GENERATOR (keys = 5)")).isEqualTo("42P07");
    assertThat(sqlState("SELECT a.id FROM gen a CROSS JOIN gen b")).isEqualTo("0A000");
    assertThat(sqlState("SHOW nonsense")).isEqualTo("42704");
    try (Connection c = connect(); Statement s = c.createStatement()) {
      assertThatThrownBy(() -> s.executeQuery("SELECT nope FROM gen"))
          .isInstanceOfSatisfying(org.postgresql.util.PSQLException.class,
              e -> assertThat(e.getServerErrorMessage().getPosition()).isEqualTo(8));
      // the connection is usable after an error
      try (ResultSet rs = s.executeQuery("SELECT * FROM by_cat")) {
        assertThat(rs.next()).isTrue();
      }
      // what drivers send on connect
      s.execute("SET extra_float_digits = 3");
      s.execute("SET application_name = 'x'");
      try (ResultSet rs = s.executeQuery("SHOW transaction_isolation")) {
        assertThat(rs.next()).isTrue();
      }
      try (ResultSet rs = s.executeQuery("SELECT current_schema()")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getString(1)).isEqualTo("public");
      }
      c.setAutoCommit(false);
      try (ResultSet rs = s.executeQuery("SELECT * FROM by_cat")) {
        assertThat(rs.next()).isTrue();
      }
      c.commit();
      c.setAutoCommit(true);
    }
  }

  @Test
  void cancelAbandonsTheRunningQuery() throws Exception {
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 400; i++) {
      many.append("SELECT id FROM big WHERE amount < 0;");
    }
    try (Connection c = connect(); Statement s = c.createStatement()) {
      ExecutorService ex = Executors.newSingleThreadExecutor();
      try {
        Future<?> canceller = ex.submit(() -> {
          Thread.sleep(500);
          s.cancel();
          return null;
        });
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> s.execute(many.toString()))
            .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("57014"));
        canceller.get(30, TimeUnit.SECONDS);
        assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(20_000);
      } finally {
        ex.shutdownNow();
      }
      try (ResultSet rs = s.executeQuery("SELECT * FROM by_cat")) {
        assertThat(rs.next()).as("the connection serves the next query").isTrue();
      }
    }
  }

  @Test
  void cancelAbandonsASingleSlowStatementAtOnce() throws Exception {
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    PgWireServer.Backend slow = new PgWireServer.Backend() {
      @Override
      public List<Result> execute(String statement) {
        if (statement.contains("slow")) {
          try {
            release.await(60, TimeUnit.SECONDS); // a statement the engine takes long over
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return List.of(new Result(List.of("x"), List.of(List.of(1L)), "SELECT 1"));
      }

      @Override
      public long catalogPosition() {
        return 0;
      }
    };
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try (PgWireServer server = PgWireServer.start(PgWireServer.Settings.of("127.0.0.1", 0, 4, null), slow);
        Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/cairn?user=cairn");
        Statement s = c.createStatement()) {
      Future<?> canceller = ex.submit(() -> {
        Thread.sleep(300);
        s.cancel();
        return null;
      });
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> s.executeQuery("SELECT slow FROM t"))
          .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("57014"));
      assertThat((System.nanoTime() - t0) / 1_000_000).as("answered before the statement ends").isLessThan(10_000);
      canceller.get(10, TimeUnit.SECONDS);
      try (ResultSet rs = s.executeQuery("SELECT x FROM t")) {
        assertThat(rs.next()).isTrue();
      }
    } finally {
      release.countDown();
      ex.shutdownNow();
    }
  }

  @Test
  void aCancelReachesAStatementRunOnTheConnectionsOwnThreadWhenTheQueryPoolIsFull() throws Exception {
    // one session: a query pool of 1 + RESERVE threads. Abandoned statements that ignore their
    // budget fill it; the next statement then runs on the connection's thread, and the cancel
    // request must end it there through its budget (before, it ran until its budget ran out)
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicReference<String> ranOn = new java.util.concurrent.atomic.AtomicReference<>();
    PgWireServer.Backend backend = new PgWireServer.Backend() {
      @Override
      public List<Result> execute(String statement) {
        throw new AssertionError("every statement comes with its budget");
      }

      @Override
      public List<Result> execute(String statement, io.cairn.engine.sql.StatementBudget budget) {
        if (statement.contains("hang")) {
          try {
            release.await(60, TimeUnit.SECONDS); // ignores its budget: holds its pool thread
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        } else if (statement.contains("budgeted")) {
          ranOn.set(Thread.currentThread().getName());
          long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(20); // so that a failing run ends
          while (System.nanoTime() < giveUp) {
            budget.check();
            Thread.onSpinWait();
          }
        }
        return List.of(new Result(List.of("x"), List.of(List.of(1L)), "SELECT 1"));
      }

      @Override
      public Duration statementTimeout() {
        return null; // no timeout: only the cancel can end the statement
      }

      @Override
      public long catalogPosition() {
        return 0;
      }
    };
    ExecutorService ex = Executors.newSingleThreadExecutor();
    try (PgWireServer server = PgWireServer.start(PgWireServer.Settings.of("127.0.0.1", 0, 1, null), backend);
        Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/cairn?user=cairn");
        Statement s = c.createStatement()) {
      for (int i = 0; i < 1 + PgWireServer.RESERVE + 1; i++) {
        String sql = i <= PgWireServer.RESERVE ? "SELECT hang FROM t" : "SELECT budgeted FROM t";
        Future<?> canceller = ex.submit(() -> {
          Thread.sleep(200);
          s.cancel();
          return null;
        });
        Future<?> run = Executors.newSingleThreadExecutor().submit(() -> s.executeQuery(sql));
        assertThatThrownBy(() -> run.get(10, TimeUnit.SECONDS)).as("%s answered within 10 s of its cancel", sql)
            .hasCauseInstanceOf(SQLException.class)
            .satisfies(e -> assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("57014"));
        canceller.get(10, TimeUnit.SECONDS);
      }
      assertThat(ranOn.get()).as("the last statement ran on the connection's own thread").doesNotContain("query");
    } finally {
      release.countDown();
      ex.shutdownNow();
    }
  }

  @Test
  void fiftyConnectionsWhileIngestingAndSnapshotting() throws Exception {
    ExecutorService ex = Executors.newFixedThreadPool(50);
    try {
      List<Future<Integer>> fs = new ArrayList<>();
      for (int t = 0; t < 50; t++) {
        int id = t;
        fs.add(ex.submit(() -> {
          int rows = 0;
          try (Connection c = connect(); Statement s = c.createStatement();
              PreparedStatement ps = c.prepareStatement("SELECT id, amount FROM live WHERE id = ?")) {
            for (int i = 0; i < 20; i++) {
              try (ResultSet rs = s.executeQuery("SELECT * FROM live_by_cat")) {
                while (rs.next()) {
                  rows++;
                }
              }
              ps.setLong(1, (id * 20L + i) % 1000);
              try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                  rows++;
                }
              }
            }
          }
          return rows;
        }));
      }
      node.snapshotNow();
      node.snapshotNow();
      long total = 0;
      for (Future<Integer> f : fs) {
        total += f.get(120, TimeUnit.SECONDS);
      }
      assertThat(total).isPositive();
    } finally {
      ex.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ bounds

  /** Reads until the server closes; returns the bytes read (fails if it stays open for 10 s). */
  static byte[] readToClose(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    try {
      return s.getInputStream().readAllBytes();
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the server did not close the connection", e);
    }
  }

  static void startup(DataOutputStream out) throws IOException {
    byte[] params = "user\0cairn\0database\0cairn\0\0".getBytes(StandardCharsets.UTF_8);
    out.writeInt(8 + params.length);
    out.writeInt(196608);
    out.write(params);
    out.flush();
  }

  /** Reads backend messages until ReadyForQuery. */
  static void untilReady(DataInputStream in) throws IOException {
    while (true) {
      int type = in.read();
      assertThat(type).isNotNegative();
      int len = in.readInt();
      in.readFully(new byte[len - 4]);
      if (type == 'Z') {
        return;
      }
    }
  }

  static void assertNodeAnswers() throws SQLException {
    try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT * FROM by_cat")) {
      assertThat(rs.next()).isTrue();
    }
  }

  @Test
  void malformedStartupPacketClosesOnlyThatConnection() throws Exception {
    try (Connection other = connect()) {
      try (Socket s = new Socket("127.0.0.1", port)) {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(0x7fffffff); // absurd length
        out.flush();
        readToClose(s);
      }
      try (Socket s = new Socket("127.0.0.1", port)) {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(12);
        out.writeInt(0x00020000); // protocol 2.0
        out.writeInt(0);
        out.flush();
        byte[] got = readToClose(s);
        assertThat(got.length).isPositive();
        assertThat((char) got[0]).isEqualTo('E');
      }
      try (Statement st = other.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM by_cat")) {
        assertThat(rs.next()).as("an open connection is unaffected").isTrue();
      }
    }
    assertNodeAnswers();
  }

  @Test
  void oversizedMessageClosesOnlyThatConnection() throws Exception {
    try (Connection other = connect(); Socket s = new Socket("127.0.0.1", port)) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      startup(out);
      untilReady(in);
      out.write('Q');
      out.writeInt(4 + (2 << 20)); // 2 MiB announced; the body is never sent
      out.flush();
      byte[] got = readToClose(s);
      String text = new String(got, StandardCharsets.UTF_8);
      assertThat((char) got[0]).isEqualTo('E');
      assertThat(text).contains("54000").contains("over the limit");
      try (Statement st = other.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM by_cat")) {
        assertThat(rs.next()).isTrue();
      }
    }
    assertNodeAnswers();
  }

  @Test
  void cancelRequestOnARawSocketIsHarmlessWithAWrongSecret() throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      out.writeInt(16);
      out.writeInt(80877102);
      out.writeInt(1);
      out.writeInt(12345);
      out.flush();
      assertThat(readToClose(s)).isEmpty();
    }
    assertNodeAnswers();
  }

  static final PgWireServer.Backend ONE =
      new PgWireServer.Backend() {
        @Override
        public List<Result> execute(String statement) {
          return List.of(new Result(List.of("x"), List.of(List.of(1L)), "SELECT 1"));
        }

        @Override
        public long catalogPosition() {
          return 0;
        }
      };

  @Test
  void anIdleConnectionIsClosed() throws Exception {
    PgWireServer.Settings settings = new PgWireServer.Settings("127.0.0.1", 0, 4, PgWireServer.DEFAULT_MAX_MESSAGE_BYTES,
        java.time.Duration.ofMillis(500), null);
    try (PgWireServer server = PgWireServer.start(settings, ONE); Socket s = new Socket("127.0.0.1", server.port())) {
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      startup(out);
      untilReady(in);
      String rest = new String(readToClose(s), StandardCharsets.UTF_8);
      assertThat(rest).contains("57P05");
      assertThat(server.sessions()).isZero();
    }
  }

  @Test
  void aClientThatStopsReadingIsClosed() throws Exception {
    List<List<Object>> many = new ArrayList<>();
    for (long i = 0; i < 200_000; i++) {
      many.add(List.of(i, "a row long enough to fill the socket buffers quickly " + i));
    }
    PgWireServer.Backend big = new PgWireServer.Backend() {
      @Override
      public List<Result> execute(String statement) {
        return List.of(new Result(List.of("id", "text"), many, "SELECT " + many.size()));
      }

      @Override
      public long catalogPosition() {
        return 0;
      }
    };
    PgWireServer.Settings settings = new PgWireServer.Settings("127.0.0.1", 0, 4, PgWireServer.DEFAULT_MAX_MESSAGE_BYTES,
        java.time.Duration.ofSeconds(1), null);
    try (PgWireServer server = PgWireServer.start(settings, big); Socket s = new Socket()) {
      s.setReceiveBufferSize(4096);
      s.connect(new java.net.InetSocketAddress("127.0.0.1", server.port()));
      DataOutputStream out = new DataOutputStream(s.getOutputStream());
      DataInputStream in = new DataInputStream(s.getInputStream());
      startup(out);
      untilReady(in);
      byte[] q = "SELECT * FROM t\0".getBytes(StandardCharsets.UTF_8);
      out.write('Q');
      out.writeInt(4 + q.length);
      out.write(q);
      out.flush();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (server.sessions() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(100); // not reading
      }
      assertThat(server.sessions()).as("the session of a client that stopped reading is closed").isZero();
    }
  }

  @Test
  void aConfiguredPasswordIsRequired() throws Exception {
    try (PgWireServer locked = PgWireServer.start(PgWireServer.Settings.of("127.0.0.1", 0, 4, "s3cret"), ONE)) {
      String url = "jdbc:postgresql://127.0.0.1:" + locked.port() + "/cairn?user=cairn&connectTimeout=10";
      assertThatThrownBy(() -> DriverManager.getConnection(url + "&password=wrong").close())
          .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("28P01"));
      try (Connection c = DriverManager.getConnection(url + "&password=s3cret"); Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT x FROM t")) {
        assertThat(rs.next()).isTrue();
      }
      // psql (libpq) through SCRAM-SHA-256 as well
      Run ok = psql(locked.port(), "s3cret", "SELECT x FROM t");
      assertThat(ok.exit()).as(ok.err()).isZero();
      assertThat(ok.out()).isEqualTo("1\n");
      Run bad = psql(locked.port(), "nope", "SELECT x FROM t");
      assertThat(bad.exit()).isNotZero();
      assertThat(bad.err()).contains("password authentication failed");
      Run none = psql(locked.port(), null, "SELECT x FROM t");
      assertThat(none.exit()).isNotZero();
    }
  }

  @Test
  void describeBeforeExecute() throws Exception {
    try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("SELECT id, e, flag FROM odd WHERE id = ?")) {
      ResultSetMetaData md = ps.getMetaData(); // Parse + Describe statement, nothing executed
      assertThat(md.getColumnCount()).isEqualTo(3);
      assertThat(md.getColumnName(2)).isEqualTo("e");
      assertThat(md.getColumnType(1)).isEqualTo(Types.BIGINT);
      assertThat(md.getColumnType(2)).isEqualTo(Types.DOUBLE);
      assertThat(ps.getParameterMetaData().getParameterCount()).isEqualTo(1);
    }
  }

  @Test
  void tooManyConnectionsAre53300() throws Exception {
    PgWireServer.Backend backend = new PgWireServer.Backend() {
      @Override
      public List<Result> execute(String statement) {
        return List.of(new Result(List.of("x"), List.of(List.of(1L)), "SELECT 1"));
      }

      @Override
      public long catalogPosition() {
        return 0;
      }
    };
    try (PgWireServer small = PgWireServer.start(PgWireServer.Settings.of("127.0.0.1", 0, 2, null), backend)) {
      String url = "jdbc:postgresql://127.0.0.1:" + small.port() + "/cairn?user=cairn&connectTimeout=10";
      try (Connection a = DriverManager.getConnection(url); Connection b = DriverManager.getConnection(url)) {
        assertThatThrownBy(() -> DriverManager.getConnection(url).close())
            .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("53300"));
        try (Statement s = a.createStatement(); ResultSet rs = s.executeQuery("SELECT x FROM t")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getLong(1)).isEqualTo(1L);
        }
      }
      // slots are released on close
      try (Connection c = DriverManager.getConnection(url)) {
        assertThat(c.isValid(5)).isTrue();
      }
    }
  }
}
