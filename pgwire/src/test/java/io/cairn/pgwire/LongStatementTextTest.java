package io.cairn.pgwire;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.sql.Statements;
import java.util.HashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Guards pgwire's statement text handling against a megabyte quoted literal or comment: a regex
 * such as {@code '(?:[^']|'')*'} recursed once per character and overflowed the stack, and a
 * hole search that backtracked could take quadratic time. Every step now runs on the engine's
 * tokenizer in one pass; the megabyte inputs would not finish in a test run otherwise.
 */
class LongStatementTextTest {
  private static final int MB = 1 << 20;
  /** A megabyte of text with quotes, parentheses and would-be parameters and casts in it. */
  private static final String BIG = "a'b) $1 '1'::int8 pg_class -- ".repeat(MB / 30);

  private static final List<CatalogRelation> RELATIONS = List.of(
      new CatalogRelation(1, "orders", false, Schema.of(Column.of("id", Type.BIGINT))));
  private static final Compat.Session SESSION = new Compat.Session("u", "d", 1, new HashMap<>(), () -> RELATIONS);

  private static String literal(String s) {
    return "'" + s.replace("'", "''") + "'";
  }

  @Test
  void megabyteLiteralGoesThroughTextHandling() {
    String sql = "SELECT * FROM orders WHERE note = " + literal(BIG) + " AND id = $1 AND k = '7'::int8";
    assertThat(SqlText.maxParameter(sql)).isEqualTo(1);
    String bound = SqlText.substitute(sql, List.of("42"));
    assertThat(bound).hasSize(sql.length()).endsWith("AND id = 42 AND k = '7'::int8");
    assertThat(SqlText.rewriteCasts(bound)).isEqualTo(bound.replace("'7'::int8", "7"));
    assertThat(Statements.pieces(sql + ";SELECT 2")).extracting(Statements.Piece::text).containsExactly(sql, "SELECT 2");
    assertThat(QueryShape.normalize("  " + sql + " ;")).isEqualTo(sql);
    assertThat(CatalogQueries.readsCatalog(sql)).isFalse();
    assertThat(Compat.answer(sql, SESSION)).isEmpty();
  }

  @Test
  void megabyteCommentGoesThroughTextHandling() {
    String blockComment = "/* " + BIG.replace("*/", "") + " */";
    String lineComment = "-- " + BIG + "\n";
    String sql = "SELECT id " + blockComment + " FROM orders " + lineComment + "WHERE id = $2";
    assertThat(SqlText.maxParameter(sql)).isEqualTo(2);
    assertThat(SqlText.substitute(sql, List.of("1", "2"))).isEqualTo(sql.replace("= $2", "= 2"));
    assertThat(SqlText.rewriteCasts(sql)).isEqualTo(sql);
    assertThat(Statements.pieces(sql)).extracting(Statements.Piece::text).containsExactly(sql);
    assertThat(QueryShape.normalize(sql)).isEqualTo("SELECT id FROM orders WHERE id = $2");
    assertThat(Compat.answer(sql, SESSION)).isEmpty();
  }

  /** psql's {@code \d NAME} with a megabyte name pattern: answered (no such relation), not overflowed. */
  @Test
  void catalogQueryWithMegabytePatternIsAnswered() {
    String name = "x)".repeat(MB / 2);
    String sql = """
        SELECT c.oid, n.nspname, c.relname
        FROM pg_catalog.pg_class c
             LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname OPERATOR(pg_catalog.~) '^(%s)$' COLLATE pg_catalog.default
          AND pg_catalog.pg_table_is_visible(c.oid)
        ORDER BY 2, 3""".formatted(name.replace(")", "\\)"));
    PgResult r = Compat.answer(sql, SESSION).orElseThrow();
    assertThat(r.rows()).isEmpty();
    assertThat(r.columns()).containsExactly("oid", "nspname", "relname");
    PgResult orders = Compat.answer(sql.replace(name.replace(")", "\\)"), "orders"), SESSION).orElseThrow();
    assertThat(orders.rows()).extracting(row -> row.get(2)).containsExactly("orders");
  }

  /** pgjdbc's getTables with a megabyte LIKE pattern (and a table-types clause): answered, not overflowed. */
  @Test
  void jdbcGetTablesWithMegabytePatternIsAnswered() {
    String sql = """
        SELECT NULL AS "TABLE_CAT", n.nspname AS "TABLE_SCHEM", c.relname AS "TABLE_NAME",
         CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema' WHEN true THEN CASE WHEN n.nspname = 'pg_catalog' OR \
        n.nspname = 'information_schema' THEN CASE c.relkind WHEN 'r' THEN 'SYSTEM TABLE' WHEN 'v' THEN 'SYSTEM VIEW' ELSE NULL END \
        ELSE NULL END WHEN false THEN CASE c.relkind WHEN 'r' THEN 'TABLE' WHEN 'p' THEN 'PARTITIONED TABLE' WHEN 'm' THEN \
        'MATERIALIZED VIEW' ELSE NULL END ELSE NULL END AS "TABLE_TYPE",
         d.description AS "REMARKS",  '' as "TYPE_CAT", '' as "TYPE_SCHEM", '' as "TYPE_NAME",
         '' AS "SELF_REFERENCING_COL_NAME", '' AS "REF_GENERATION"
         FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c
         LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)
         WHERE c.relnamespace = n.oid  AND c.relname LIKE %s AND (false  OR ( c.relkind = 'r' AND n.nspname !~ '^pg_' AND \
        n.nspname <> 'information_schema' )  OR ( c.relkind IN ('m') AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' ) ) \
        ORDER BY "TABLE_TYPE","TABLE_SCHEM","TABLE_NAME\"""";
    PgResult none = Compat.answer(sql.formatted(literal("%" + BIG)), SESSION).orElseThrow();
    assertThat(none.rows()).isEmpty();
    PgResult orders = Compat.answer(sql.formatted("'ord%'"), SESSION).orElseThrow();
    assertThat(orders.rows()).extracting(row -> row.get(2) + " " + row.get(3)).containsExactly("orders TABLE");
  }
}
