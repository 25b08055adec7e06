package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.runtime.Engine;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every error kind names the problem and its position, and a failed statement changes nothing. */
class SqlErrorsTest {
  Engine engine;
  InMemoryCatalogLog log;
  SqlSession s;

  @BeforeEach
  void setUp() {
    engine = SqlFixture.engine(2);
    log = new InMemoryCatalogLog();
    s = SqlFixture.session(engine, log);
    s.execute(SqlFixture.GEN);
    s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
  }

  @AfterEach
  void tearDown() {
    engine.close();
  }

  /** Runs {@code sql}, expects a SqlException, and checks nothing changed. */
  private SqlException fails(String sql) {
    long end = log.end();
    List<String> before = engine.dataflows().stream().map(d -> d.id() + ":" + d.name()).toList();
    SqlException ex = org.junit.jupiter.api.Assertions.assertThrows(SqlException.class, () -> s.execute(sql));
    assertThat(log.end()).as("catalog unchanged").isEqualTo(end);
    assertThat(s.position()).isEqualTo(end);
    assertThat(engine.dataflows().stream().map(d -> d.id() + ":" + d.name()).toList()).as("engine unchanged").isEqualTo(before);
    return ex;
  }

  @Test
  void unknownTable() {
    SqlException ex = fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM nope");
    assertThat(ex).hasMessage("Cannot plan view 'v': unknown table 'nope' at line 1, column 46");
    assertThat(fails("SELECT * FROM gen g JOIN missing m ON g.id = m.id")).hasMessageContaining("unknown table 'missing'");
    assertThat(fails("SELECT x.id FROM gen")).hasMessageContaining("unknown table 'x'");
  }

  @Test
  void unknownColumn() {
    SqlException ex = fails("CREATE MATERIALIZED VIEW v AS\n  SELECT id, nope FROM gen");
    assertThat(ex).hasMessage("Cannot plan view 'v': unknown column 'nope' at line 2, column 14");
    assertThat(ex.line()).isEqualTo(2);
    assertThat(ex.column()).isEqualTo(14);
    assertThat(fails("SELECT g.nope FROM gen g")).hasMessageContaining("unknown column 'g.nope'");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen WHERE missing > 3"))
        .hasMessage("Cannot plan view 'v': unknown column 'missing' at line 1, column 56");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT category FROM gen a JOIN by_cat b ON a.category = b.category"))
        .hasMessageContaining("column 'category' is ambiguous");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id, COUNT(*) FROM gen GROUP BY category"))
        .hasMessageContaining("column 'id' must appear in the GROUP BY clause");
  }

  @Test
  void typeMismatch() {
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen WHERE id = 'x'"))
        .hasMessage("Cannot plan view 'v': type mismatch: cannot compare BIGINT with TEXT in 'id = 'x'' at line 1, column 56");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id + 'a' FROM gen"))
        .hasMessageContaining("type mismatch: cannot apply '+' to BIGINT and TEXT");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen WHERE amount"))
        .hasMessageContaining("type mismatch: WHERE condition 'amount' is BIGINT, not BOOLEAN");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT SUM(id > 3) FROM gen"))
        .hasMessageContaining("type mismatch: SUM needs a number");
  }

  @Test
  void unsupportedSyntax() {
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT g.id FROM gen g CROSS JOIN by_cat c"))
        .hasMessageContaining("unsupported syntax: only [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN ... ON is supported");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen ORDER BY id"))
        .hasMessageContaining("unsupported syntax: ORDER BY");
    assertThat(fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen UNION (SELECT id FROM gen)"))
        .hasMessageContaining("unsupported syntax: each side of UNION, INTERSECT or EXCEPT must be a plain SELECT");
    assertThat(fails("CREATE TABLE t (a BIGINT)"))
        .hasMessage("Cannot parse statement: unsupported syntax: CREATE 'table' (supported: CREATE SOURCE, CREATE MATERIALIZED VIEW, CREATE SINK) at line 1, column 8");
    assertThat(fails("INSERT INTO gen VALUES (1)")).hasMessageContaining("unsupported statement 'insert'").hasMessageEndingWith("at line 1, column 1");
    SqlException syntax = fails("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen WHERE");
    assertThat(syntax).hasMessageStartingWith("Cannot plan view 'v': syntax error");
    assertThat(syntax.line()).isEqualTo(1);
    assertThat(fails("CREATE SOURCE x FROM LOAD GENERATOR (keys = 10) ENVELOPE SIDEWAYS"))
        .hasMessage("Cannot parse statement: unknown envelope 'sideways' (supported: NONE, UPSERT, DEBEZIUM) at line 1, column 58");
    assertThat(fails("")).hasMessage("Cannot parse statement: it is empty");
  }

  @Test
  void duplicateName() {
    assertThat(fails("CREATE MATERIALIZED VIEW gen AS SELECT id FROM gen"))
        .hasMessage("Cannot create view 'gen': duplicate name: a source named 'gen' already exists at line 1, column 26");
    assertThat(fails("CREATE SOURCE by_cat FROM LOAD GENERATOR"))
        .hasMessageContaining("duplicate name: a view named 'by_cat' already exists");
    // IF NOT EXISTS is not an error, and appends nothing
    long end = log.end();
    assertThat(s.execute("CREATE MATERIALIZED VIEW IF NOT EXISTS by_cat AS SELECT id FROM gen").message()).contains("skipped");
    assertThat(log.end()).isEqualTo(end);
  }

  @Test
  void dependentsExistWithoutCascade() {
    s.execute("CREATE MATERIALIZED VIEW top AS SELECT category FROM by_cat WHERE n > 3");
    assertThat(fails("DROP SOURCE gen"))
        .hasMessage("Cannot drop source 'gen': dependents exist: [top, by_cat] read it (drop them first, or use DROP SOURCE gen CASCADE)"
            + " at line 1, column 13");
    assertThat(fails("DROP VIEW by_cat")).hasMessageContaining("dependents exist: [top]");
    assertThat(fails("DROP VIEW gen")).hasMessageContaining("'gen' is a source (use DROP SOURCE)");
    assertThat(fails("DROP VIEW nope")).hasMessage("Cannot drop view 'nope': unknown view 'nope' at line 1, column 11");
    // CASCADE drops the dependents first, newest first, as one catalog entry
    long end = log.end();
    assertThat(s.execute("DROP SOURCE gen CASCADE").message()).isEqualTo("DROP SOURCE (also dropped [top, by_cat])");
    assertThat(log.end()).isEqualTo(end + 1);
    assertThat(engine.dataflows()).isEmpty();
    assertThat(engine.arrangementCount()).isZero();
  }

  @Test
  void connectorNotAvailable() {
    assertThat(fails("CREATE SOURCE orders FROM KAFKA (brokers = '127.0.0.1:9092', topic = 'orders', "
        + "\"properties.security.protocol\" = 'PLAINTEXT', password = SECRET 'KAFKA_PASSWORD') FORMAT JSON ENVELOPE UPSERT "
        + "(id BIGINT, customer BIGINT, amount DOUBLE, PRIMARY KEY (id))"))
        .hasMessage("Cannot create source 'orders': connector 'kafka' is not available (its module is not on the class path)");
    assertThat(fails("CREATE SOURCE customers FROM POSTGRES (host = 'localhost', database = 'shop', user = 'cairn', "
        + "password = SECRET 'PGPASSWORD', table = 'public.customers')"))
        .hasMessageContaining("connector 'postgres' is not available");
    // the load generator validates its options
    assertThat(fails("CREATE SOURCE g2 FROM LOAD GENERATOR (keys = -5)"))
        .hasMessage("Cannot create source 'g2': option 'keys' must be > 0, got -5");
  }

  @Test
  void failedViewStaysOutOfTheCatalogAndTheEngine() {
    fails("CREATE MATERIALIZED VIEW v AS SELECT nope FROM gen");
    s.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen");
    assertThat(engine.dataflow("v")).map(Dataflow::id).contains(2L);
    assertThat(log.read(0)).extracting(e -> e.sql()).containsExactly(SqlFixture.GEN,
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category",
        "CREATE MATERIALIZED VIEW v AS SELECT id FROM gen");
    engine.tick();
    assertThatThrownBy(() -> s.execute("SELECT id / 0 FROM gen")).isInstanceOf(SqlException.class)
        .hasMessageContaining("Cannot evaluate query: division by zero");
  }
}
