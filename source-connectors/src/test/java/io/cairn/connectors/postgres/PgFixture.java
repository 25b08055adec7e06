package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOutput;
import io.cairn.testkit.postgres.PostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/** Test helpers: a database per test on the shared server, an oracle, the table as the oracle sees it. */
final class PgFixture implements AutoCloseable {
  static final String SECRET_REF = "CAIRN_TEST_PG_PASSWORD";

  final PostgresServer server;
  final String database;
  final Connection sql;

  PgFixture(String prefix) {
    this(PostgresServer.shared(), prefix);
  }

  PgFixture(PostgresServer server, String prefix) {
    this.server = server;
    database = server.createUniqueDatabase(prefix);
    sql = server.connect(database);
  }

  /** A naive oracle: the rows by primary key, as the engine's upsert state would hold them. */
  static final class Oracle implements SourceOutput {
    final Map<Row, Row> rows = new TreeMap<>();
    long upserts;
    long deletes;

    @Override
    public void append(Row row, long diff) {
      throw new AssertionError("a Postgres source must not append");
    }

    @Override
    public void upsert(Row key, Row row) {
      if (row == null) {
        deletes++;
        rows.remove(key);
      } else {
        upserts++;
        assertThat(row.select(new int[] {0})).isEqualTo(key);
        rows.put(key, row);
      }
    }

    @Override
    public void reset() {
      rows.clear();
    }
  }

  void exec(String... statements) {
    try (Statement st = sql.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  long queryLong(String query) {
    try (Statement st = sql.createStatement(); ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  String queryString(String query) {
    try (Statement st = sql.createStatement(); ResultSet rs = st.executeQuery(query)) {
      return rs.next() ? rs.getString(1) : null;
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** SELECT * as rows keyed by the first column, converted the way the source converts values. */
  Map<Row, Row> table(String table, Schema schema) {
    Map<Row, Row> out = new TreeMap<>();
    try (Statement st = sql.createStatement(); ResultSet rs = st.executeQuery("SELECT * FROM " + table)) {
      while (rs.next()) {
        Object[] v = new Object[schema.size()];
        for (int i = 0; i < v.length; i++) {
          v[i] = switch (schema.type(i)) {
            case BIGINT -> rs.getObject(i + 1) == null ? null : rs.getLong(i + 1);
            case DOUBLE -> rs.getObject(i + 1) == null ? null : rs.getDouble(i + 1);
            case BOOLEAN -> rs.getObject(i + 1) == null ? null : rs.getBoolean(i + 1);
            case TEXT -> rs.getString(i + 1);
            case TIMESTAMP -> {
              OffsetDateTime t = rs.getObject(i + 1, OffsetDateTime.class);
              yield t == null ? null : t.toEpochSecond() * 1_000_000L + t.getNano() / 1000;
            }
            case DATE -> rs.getObject(i + 1) == null ? null : rs.getObject(i + 1, java.time.LocalDate.class).toEpochDay();
            case NUMERIC -> rs.getBigDecimal(i + 1) == null ? null : io.cairn.engine.row.Numeric.of(rs.getBigDecimal(i + 1));
            case INTERVAL -> rs.getString(i + 1) == null ? null : io.cairn.engine.row.Interval.parse(rs.getString(i + 1)); // PostgreSQL's text
            case NULL -> null;
          };
        }
        Row row = Row.wrap(v);
        out.put(row.select(new int[] {0}), row);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    return out;
  }

  SourceDefinition definition(String name, String table, Map<String, String> extra) {
    Map<String, String> o = new HashMap<>();
    o.put("host", server.host());
    o.put("port", Integer.toString(server.port()));
    o.put("database", database);
    o.put("user", server.user());
    o.put("password", Secrets.reference(SECRET_REF));
    o.put("table", table);
    o.put("stats-interval-ms", "200");
    o.put("heartbeat-interval-ms", "200");
    o.putAll(extra);
    return new SourceDefinition(name, "postgres", o, Schema.EMPTY, List.of(), Envelope.DEBEZIUM);
  }

  Secrets secrets() {
    return ref -> {
      if (!ref.equals(SECRET_REF)) {
        throw new IllegalArgumentException("Cannot resolve secret '" + ref + "'");
      }
      return server.password();
    };
  }

  Source open(SourceDefinition def) {
    return new PostgresConnector().open(def, secrets());
  }

  /** Polls into {@code oracle} until {@code done} holds; fails after {@code timeout}. */
  static void pollUntil(Source source, Oracle oracle, Duration timeout, BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      source.poll(oracle, 1000, Duration.ofMillis(50));
      if (done.getAsBoolean()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Timed out after " + timeout + " waiting for " + what);
      }
    }
  }

  /** Polls until the oracle equals the table (checked every 200 ms), then until caughtUp(). */
  void syncWithTable(Source source, Oracle oracle, String table) {
    long[] next = {0};
    pollUntil(source, oracle, Duration.ofSeconds(60), () -> {
      if (System.nanoTime() < next[0]) {
        return false;
      }
      next[0] = System.nanoTime() + 200_000_000L;
      return oracle.rows.equals(table(table, source.schema()));
    }, "the oracle to equal SELECT * FROM " + table);
    pollUntil(source, oracle, Duration.ofSeconds(20), source::caughtUp, "caughtUp()");
    assertThat(oracle.rows).isEqualTo(table(table, source.schema()));
  }

  long confirmedFlushLsn(String slot) {
    String s = queryString("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
    return DebeziumOffsets.parseLsn(s);
  }

  /** seq_tup_read of a table, after waiting out PG 15's statistics flush delay. */
  long seqTupRead(String table) {
    sleep(1200);
    exec("SELECT pg_stat_clear_snapshot()");
    return queryLong("SELECT seq_tup_read FROM pg_stat_user_tables WHERE relid = '" + table + "'::regclass");
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    try {
      sql.close();
    } catch (SQLException ignored) {
      // closing
    }
  }
}
