package io.cairn.benchmarks.source;

import io.cairn.connectors.postgres.PostgresConnector;
import io.cairn.testkit.postgres.PostgresServer;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Initial-load and streaming throughput of the Postgres source alone: a table of {@code rows}
 * rows (BIGINT key, TEXT, INT, FLOAT8; {@code REPLICA IDENTITY FULL}) read from scratch, then one
 * {@code UPDATE} of every row streamed through logical replication. A measurement without a
 * bound: no target is documented for the source alone.
 *
 * <p>Run (from the repository root; starts its own Postgres like the tests do):
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.source.PostgresSourceBenchmark [rows]
 * </pre>
 *
 * Default: 100,000 rows. Prints one {@code THROUGHPUT} line (the initial load's rate includes the
 * source's start).
 */
public final class PostgresSourceBenchmark {
  private static final String SECRET_REF = "CAIRN_BENCH_PG_PASSWORD";

  private PostgresSourceBenchmark() {}

  public static void main(String[] args) throws SQLException {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    try (PostgresServer pg = PostgresServer.start()) {
      String database = pg.createUniqueDatabase("tput");
      try (Connection c = pg.connect(database); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE t (id bigint PRIMARY KEY, name text, qty int, price float8)");
        st.execute("ALTER TABLE t REPLICA IDENTITY FULL");
        st.execute("INSERT INTO t SELECT g, 'name ' || g, g % 100, g * 0.5 FROM generate_series(1, " + rows + ") g");
        Map<String, String> o = new HashMap<>();
        o.put("host", pg.host());
        o.put("port", Integer.toString(pg.port()));
        o.put("database", database);
        o.put("user", pg.user());
        o.put("password", Secrets.reference(SECRET_REF));
        o.put("table", "t");
        o.put("stats-interval-ms", "500");
        SourceDefinition def = new SourceDefinition("tput", "postgres", o, Schema.EMPTY, List.of(), Envelope.DEBEZIUM);
        Counter out = new Counter();
        try (Source source = new PostgresConnector().open(def, ref -> pg.password())) {
          long t0 = System.nanoTime();
          source.seek(SourceOffsets.EMPTY);
          pollUntil(source, out, () -> out.rows.size() == rows, "initial load");
          double load = (System.nanoTime() - t0) / 1e9;
          long t1 = System.nanoTime();
          st.execute("UPDATE t SET qty = qty + 1");
          long ts = System.nanoTime();
          pollUntil(source, out, () -> out.upserts == 2L * rows, "streamed updates");
          double stream = (System.nanoTime() - ts) / 1e9;
          System.out.printf(Locale.ROOT, "THROUGHPUT rows=%d initial_load=%.1fs (%.0f rows/s incl. source start) update_statement=%.1fs "
                  + "streaming=%.1fs (%.0f rows/s) meter=%s%n", rows, load, rows / load, (ts - t1) / 1e9, stream, rows / stream,
              source.meter().read());
        }
      }
    }
  }

  private static void pollUntil(Source source, Counter out, BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + Duration.ofMinutes(10).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Cannot measure the " + what + ": not done within 10 minutes");
      }
      source.poll(out, 1000, Duration.ofMillis(50));
    }
  }

  /** The rows by primary key and the upserts delivered. */
  private static final class Counter implements SourceOutput {
    final Map<Row, Row> rows = new HashMap<>();
    long upserts;

    @Override
    public void append(Row row, long diff) {
      throw new IllegalStateException("Cannot append: a Postgres source delivered an append");
    }

    @Override
    public void upsert(Row key, Row row) {
      if (row == null) {
        rows.remove(key);
      } else {
        upserts++;
        rows.put(key, row);
      }
    }

    @Override
    public void reset() {
      rows.clear();
    }
  }
}
