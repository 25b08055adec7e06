package io.cairn.pgwire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.sql.Result;
import io.cairn.engine.sql.SqlException;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Catalog browsing through the compatibility layer, against a listener whose backend has a fixed
 * catalog (one source of every type, one view): the real psql's {@code \d} family and pgjdbc's
 * {@code DatabaseMetaData}, with what PostgreSQL 15 itself prints for the same relations.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured under 1 s
public class PgCatalogIT {
  static PgWireServer server;

  static final List<CatalogRelation> RELATIONS = List.of(
      new CatalogRelation(0, "gen", false, Schema.of(new Column("id", Type.BIGINT), new Column("category", Type.BIGINT),
          new Column("amount", Type.DOUBLE), new Column("ts", Type.TIMESTAMP), new Column("note", Type.TEXT),
          new Column("flag", Type.BOOLEAN))),
      new CatalogRelation(1, "by_cat", true, Schema.of(new Column("category", Type.BIGINT), new Column("n", Type.BIGINT),
          new Column("total", Type.DOUBLE), Column.numeric("price", 15, 2))));

  @BeforeAll
  static void start() {
    server = PgWireServer.start(PgWireServer.Settings.of("127.0.0.1", 0, 8, null), new PgWireServer.Backend() {
      @Override
      public List<Result> execute(String statement) {
        throw new SqlException("Cannot run '" + statement + "': this backend has no engine");
      }

      @Override
      public long catalogPosition() {
        return 2;
      }

      @Override
      public List<CatalogRelation> relations() {
        return RELATIONS;
      }
    });
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  record Run(int exit, String out, String err) {}

  /** psql in its default (aligned) format, as a person sees it. */
  static Run psql(String command) throws Exception {
    String bin = new File("/usr/lib/postgresql/15/bin/psql").canExecute() ? "/usr/lib/postgresql/15/bin/psql" : "psql";
    ProcessBuilder pb = new ProcessBuilder(bin, "-X", "-w", "-h", "127.0.0.1", "-p", String.valueOf(server.port()),
        "-U", "cairn", "-d", "cairn", "-v", "ON_ERROR_STOP=1", "-c", command);
    pb.environment().put("PGCONNECT_TIMEOUT", "10");
    pb.environment().remove("PGPASSWORD");
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    byte[] err = p.getErrorStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
  }

  @Test
  void psqlListsRelations() throws Exception {
    Run r = psql("\\d");
    assertThat(r.err()).isEmpty();
    assertThat(r.out()).isEqualTo("""
                      List of relations
         Schema |  Name  |       Type        | Owner\s
        --------+--------+-------------------+-------
         public | by_cat | materialized view | cairn
         public | gen    | table             | cairn
        (2 rows)

        """);
    assertThat(psql("\\dm").out()).contains("by_cat | materialized view").doesNotContain("gen");
    assertThat(psql("\\dt").out()).contains("public | gen  | table").doesNotContain("by_cat");
    assertThat(psql("\\dv").err()).contains("Did not find any relations.");
    assertThat(psql("\\dm+ by*").out()).contains("by_cat | materialized view | cairn | permanent").doesNotContain("gen");
    assertThat(psql("\\dt public.g*").out()).contains("gen");
    assertThat(psql("\\dt other.*").err()).contains("Did not find any relation");
    assertThat(psql("\\dn").out()).contains("public | cairn");
  }

  @Test
  void psqlDescribesARelation() throws Exception {
    Run r = psql("\\d by_cat");
    assertThat(r.err()).isEmpty();
    assertThat(r.out()).isEqualTo("""
                      Materialized view "public.by_cat"
          Column  |       Type       | Collation | Nullable | Default\s
        ----------+------------------+-----------+----------+---------
         category | bigint           |           |          |\s
         n        | bigint           |           |          |\s
         total    | double precision |           |          |\s
         price    | numeric(15,2)    |           |          |\s

        """);
    Run g = psql("\\d gen");
    assertThat(g.err()).isEmpty();
    assertThat(g.out()).contains("Table \"public.gen\"")
        .contains(" id       | bigint                      |")
        .contains(" amount   | double precision            |")
        .contains(" ts       | timestamp without time zone |")
        .contains(" note     | text                        |")
        .contains(" flag     | boolean                     |");
    Run verbose = psql("\\d+ by_cat");
    assertThat(verbose.err()).isEmpty();
    assertThat(verbose.out()).contains("Materialized view \"public.by_cat\"").contains(" total    | double precision |");
    assertThat(psql("\\d nothing").err()).contains("Did not find any relation named \"nothing\".");
  }

  @Test
  void jdbcMetadataListsTablesAndColumns() throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/cairn?user=cairn")) {
      DatabaseMetaData md = c.getMetaData();
      assertThat(rows(md.getSchemas(), "TABLE_SCHEM")).containsExactly("public");
      assertThat(rows(md.getSchemas(null, "pub%"), "TABLE_SCHEM")).containsExactly("public");
      assertThat(rows(md.getSchemas(null, "x%"), "TABLE_SCHEM")).isEmpty();
      assertThat(rows(md.getCatalogs(), "TABLE_CAT")).containsExactly("cairn");
      assertThat(rows(md.getTables(null, null, "%", null), "TABLE_NAME", "TABLE_TYPE", "TABLE_SCHEM", "TABLE_CAT"))
          .containsExactly("by_cat MATERIALIZED VIEW public cairn", "gen TABLE public cairn");
      assertThat(rows(md.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"}), "TABLE_NAME")).containsExactly("gen");
      assertThat(rows(md.getTables(null, "public", "by_cat", new String[] {"MATERIALIZED VIEW"}), "TABLE_NAME"))
          .containsExactly("by_cat");
      assertThat(rows(md.getTables(null, "pg_catalog", "%", null), "TABLE_NAME")).isEmpty();
      List<String> types = new ArrayList<>();
      try (ResultSet rs = md.getTableTypes()) {
        while (rs.next()) {
          types.add(rs.getString(1));
        }
      }
      assertThat(rows(md.getTables(null, null, "%", types.toArray(new String[0])), "TABLE_NAME")).containsExactly("by_cat", "gen");
      assertThat(rows(md.getTables(null, null, "%", new String[] {"SYSTEM TABLE"}), "TABLE_NAME")).isEmpty();

      assertThat(rows(md.getColumns(null, "public", "by_cat", null), "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME", "ORDINAL_POSITION"))
          .containsExactly("category " + Types.BIGINT + " int8 1", "n " + Types.BIGINT + " int8 2",
              "total " + Types.DOUBLE + " float8 3", "price " + Types.NUMERIC + " numeric 4");
      assertThat(rows(md.getColumns(null, "public", "by_cat", "price"), "COLUMN_NAME", "COLUMN_SIZE", "DECIMAL_DIGITS"))
          .as("NUMERIC(15, 2)'s precision and scale").containsExactly("price 15 2");
      assertThat(rows(md.getColumns(null, null, "gen", "%"), "COLUMN_NAME", "DATA_TYPE", "TYPE_NAME"))
          .containsExactly("id " + Types.BIGINT + " int8", "category " + Types.BIGINT + " int8",
              "amount " + Types.DOUBLE + " float8", "ts " + Types.TIMESTAMP + " timestamp", "note " + Types.VARCHAR + " text",
              "flag " + Types.BIT + " bool");
      assertThat(rows(md.getColumns(null, null, "%", "n%"), "TABLE_NAME", "COLUMN_NAME")).containsExactly("by_cat n", "gen note");
    }
  }

  @Test
  void otherCatalogQueriesAreRefused() throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + server.port() + "/cairn?user=cairn");
        Statement s = c.createStatement()) {
      assertThatThrownBy(() -> s.executeQuery("SELECT relname FROM pg_catalog.pg_class"))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("0A000"));
      assertThatThrownBy(() -> s.executeQuery("SELECT count(*) FROM pg_catalog.pg_policy WHERE polrelid = '16385'"))
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("0A000"));
    }
    Run r = psql("\\di");
    assertThat(r.exit()).isNotZero();
    assertThat(r.err()).contains("Cannot answer");
  }

  /** The named columns of every row, space-separated, one string per row; closes {@code rs}. */
  public static List<String> rows(ResultSet rs, String... columns) throws SQLException {
    List<String> out = new ArrayList<>();
    try (rs) {
      while (rs.next()) {
        List<String> cells = new ArrayList<>();
        for (String c : columns) {
          cells.add(rs.getString(c));
        }
        out.add(String.join(" ", cells));
      }
    }
    return out;
  }
}
