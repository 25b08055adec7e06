package io.cairn.pgwire;

import io.cairn.engine.sql.Statements;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.sql.SqlException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Text handling of the wire protocol: values, statement splitting, parameter literals, SQLSTATEs. */
class PgWireTextTest {
  @Test
  void valuesAsText() {
    assertThat(PgType.FLOAT8.text(Double.NaN)).isEqualTo("NaN");
    assertThat(PgType.FLOAT8.text(Double.POSITIVE_INFINITY)).isEqualTo("Infinity");
    assertThat(PgType.FLOAT8.text(Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
    assertThat(Double.parseDouble(PgType.FLOAT8.text(0.1 + 0.2))).isEqualTo(0.1 + 0.2);
    assertThat(PgType.INT8.text(Long.MIN_VALUE)).isEqualTo("-9223372036854775808");
    assertThat(PgType.BOOL.text(true)).isEqualTo("t");
    assertThat(PgType.TIMESTAMP.text(0L)).isEqualTo("1970-01-01 00:00:00");
    assertThat(PgType.TIMESTAMP.text(1_700_000_000_123_400L)).isEqualTo("2023-11-14 22:13:20.1234");
    assertThat(PgType.TIMESTAMP.text(-1L)).isEqualTo("1969-12-31 23:59:59.999999");
    assertThat(ByteBuffer.wrap(PgType.TIMESTAMP.binary(946_684_800_000_000L)).getLong()).isZero();
    // DATE: days since 1970-01-01; ISO text, binary days since 2000-01-01 (int4)
    assertThat(PgType.of(io.cairn.engine.row.Type.DATE).oid).isEqualTo(1082);
    assertThat(PgType.DATE.text(0L)).isEqualTo("1970-01-01");
    assertThat(PgType.DATE.text(19_782L)).isEqualTo("2024-02-29");
    assertThat(PgType.DATE.text(-1L)).isEqualTo("1969-12-31");
    assertThat(ByteBuffer.wrap(PgType.DATE.binary(10_957L)).getInt()).isZero();
    assertThat(ByteBuffer.wrap(PgType.DATE.binary(0L)).getInt()).isEqualTo(-10_957);
    assertThat(ByteBuffer.wrap(PgType.FLOAT8.binary(1.5)).getDouble()).isEqualTo(1.5);
  }

  @Test
  void splitsStatementsOutsideQuotesAndComments() {
    List<Statements.Piece> p = Statements.pieces(" SELECT 'a;b' FROM t; -- c;\n SELECT \"x;\" FROM u /* ; */ ;; ");
    assertThat(p).extracting(Statements.Piece::text).containsExactly("SELECT 'a;b' FROM t", "-- c;\n SELECT \"x;\" FROM u /* ; */");
    assertThat(p.get(0).offset()).isEqualTo(1);
    assertThat(Statements.pieces(" ; -- nothing\n")).isEmpty();
  }

  @Test
  void commentsHideParametersAndCasts() {
    assertThat(SqlText.maxParameter("SELECT $1 -- and $7\n FROM t /* $9 */ WHERE a = $2")).isEqualTo(2);
    assertThat(SqlText.maxParameter("SELECT 1 /* unterminated $3")).isZero();
    String sql = "SELECT a -- '1'::bigint\n FROM t";
    assertThat(SqlText.rewriteCasts(sql)).isEqualTo(sql);
  }

  @Test
  void parametersBecomeLiterals() {
    String sql = "SELECT * FROM t WHERE a = $1 AND b = '$1' AND c - $2 > 0 AND d = $3 AND e = $4";
    assertThat(SqlText.maxParameter(sql)).isEqualTo(4);
    List<String> lits = List.of(
        SqlText.literal(25, 0, "it's".getBytes(StandardCharsets.UTF_8)),
        SqlText.literal(20, 0, "-5".getBytes(StandardCharsets.UTF_8)),
        SqlText.literal(16, 1, new byte[] {1}),
        SqlText.literal(701, 0, null));
    assertThat(SqlText.substitute(sql, lits))
        .isEqualTo("SELECT * FROM t WHERE a = 'it''s' AND b = '$1' AND c -  -5 > 0 AND d = TRUE AND e = NULL");
    assertThatThrownBy(() -> SqlText.literal(20, 0, "1; DROP VIEW v".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("invalid input syntax");
    assertThatThrownBy(() -> SqlText.literal(701, 0, "NaN".getBytes(StandardCharsets.UTF_8)))
        .hasMessageContaining("invalid input syntax");
    assertThat(SqlText.literal(20, 1, ByteBuffer.allocate(8).putLong(42).array())).isEqualTo("42");
    assertThat(SqlText.literal(701, 0, "1.5e3".getBytes(StandardCharsets.UTF_8))).isEqualTo("1.5e3");
  }

  @Test
  void inlinedCastsBecomePlainLiterals() {
    assertThat(SqlText.rewriteCasts("SELECT * FROM t WHERE a = '1'::int8 AND b = ('x''y'::varchar) AND c = '-2.5'::float8"))
        .isEqualTo("SELECT * FROM t WHERE a = 1 AND b = ('x''y') AND c =  -2.5");
    assertThat(SqlText.rewriteCasts("SELECT '1; x'::int8, 't'::bool, 'a'::double precision, 'q'::date FROM t"))
        .isEqualTo("SELECT '1; x'::int8, TRUE, 'a'::double precision, 'q'::date FROM t");
    assertThat(SqlText.rewriteCasts("SELECT a FROM t")).isEqualTo("SELECT a FROM t");
  }

  @Test
  void sqlStatesAndPositions() {
    assertThat(SqlStates.of(new SqlException("Cannot plan query: unknown table 'x'", 1, 15))).isEqualTo("42P01");
    assertThat(SqlStates.of(new SqlException("Cannot plan query: unknown column 'x'", 1, 8))).isEqualTo("42703");
    assertThat(SqlStates.of(new SqlException("Cannot parse statement: expected AS but found 'x'", 1, 3))).isEqualTo("42601");
    assertThat(SqlStates.of(new SqlException("Cannot parse statement: unsupported syntax: CREATE TABLE", 1, 8))).isEqualTo("0A000");
    assertThat(SqlStates.of(new SqlException("Cannot create view 'v': duplicate name: a view named 'v' already exists")))
        .isEqualTo("42P07");
    assertThat(SqlStates.of(new IllegalStateException("boom"))).isEqualTo("XX000");
    assertThat(SqlStates.position(new SqlException("x", 2, 3), "SELECT\n  nope FROM t")).isEqualTo(10);
    assertThat(SqlStates.position(new IllegalArgumentException("bad at line 1, column 4"), "SELECT")).isEqualTo(4);
  }

  @Test
  void aListenerOffLoopbackNeedsAPassword() {
    PgWireServer.Backend none = new PgWireServer.Backend() {
      @Override
      public List<io.cairn.engine.sql.Result> execute(String statement) {
        return List.of();
      }

      @Override
      public long catalogPosition() {
        return 0;
      }
    };
    assertThatThrownBy(() -> PgWireServer.start(PgWireServer.Settings.of("0.0.0.0", 0, 4, null), none))
        .hasMessageContaining("password");
  }

  @Test
  void queryShapesIgnoreWhitespaceButNotQuotedText() {
    assertThat(QueryShape.normalize(" SELECT a ,\n\t b FROM ( t )  WHERE x = 'a  b' AND \"c  d\" = 1 ;"))
        .isEqualTo("SELECT a,b FROM (t) WHERE x = 'a  b' AND \"c  d\" = 1");
    QueryShape shape = QueryShape.of("t", "SELECT x FROM t WHERE id = '{oid}'{more}");
    assertThat(shape.match(QueryShape.normalize("SELECT x\nFROM t WHERE id = '42' AND y"))).hasValue(
        java.util.Map.of("oid", "42", "more", " AND y"));
    assertThat(shape.match("SELECT y FROM t WHERE id = '42'")).isEmpty();
    java.util.List<java.util.regex.Pattern> allowed = List.of(QueryShape.clause("AND a = (\\d+)"), QueryShape.clause("AND b"));
    assertThat(QueryShape.clauses(" AND a = 1 AND b", allowed)).extracting(QueryShape.Clause::kind).containsExactly(0, 1);
    assertThat(QueryShape.clauses(" AND a = 1 OR b", allowed)).isNull();
    // a catalog word inside a string is no catalog query: the statement goes to the engine
    Compat.Session session = new Compat.Session("u", "d", 1, new java.util.HashMap<>(), List::of);
    assertThat(CatalogQueries.answer("SELECT * FROM t WHERE name = 'pg_catalog.pg_class'", List::of, session)).isEmpty();
    assertThatThrownBy(() -> CatalogQueries.answer("SELECT * FROM pg_catalog.pg_class", List::of, session))
        .isInstanceOf(SqlStates.PgError.class).hasMessageContaining("Cannot answer this catalog query");
  }

  @Test
  void explainedSchemaIsParsed() {
    assertThat(ResultTypes.parseSchema("Map [#0, #1]  -> (a b BIGINT, c TEXT, t TIMESTAMP, n NULL, d DATE)"))
        .containsExactly(new ResultTypes.Column("a b", PgType.INT8), new ResultTypes.Column("c", PgType.TEXT),
            new ResultTypes.Column("t", PgType.TIMESTAMP), new ResultTypes.Column("n", PgType.TEXT), new ResultTypes.Column("d", PgType.DATE));
    assertThat(ResultTypes.parseSchema("Get t")).isNull();
    assertThat(ResultTypes.tag("SELECT 3 (key lookup)")).isEqualTo("SELECT 3");
    assertThat(ResultTypes.tag("SHOW SOURCES")).isEqualTo("SHOW");
  }
}
