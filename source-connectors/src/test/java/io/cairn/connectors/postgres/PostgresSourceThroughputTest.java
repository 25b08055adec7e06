package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.connectors.postgres.PgFixture.Oracle;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Initial-load and streaming throughput of the Postgres source on this machine. Not part of the
 * default build: {@code mvn -pl source-connectors -am verify -Dcairn.throughput=true
 * -Dtest=PostgresSourceThroughputTest -Dsurefire.failIfNoSpecifiedTests=false}; figures in the output file.
 */
@EnabledIfSystemProperty(named = "cairn.throughput", matches = "true")
class PostgresSourceThroughputTest {
  @Test
  void initialLoadAndStreamingRates() {
    int rows = Integer.getInteger("cairn.throughput.rows", 100_000);
    try (PgFixture pg = new PgFixture("tput")) {
      pg.exec("CREATE TABLE t (id bigint PRIMARY KEY, name text, qty int, price float8)", "ALTER TABLE t REPLICA IDENTITY FULL",
          "INSERT INTO t SELECT g, 'name ' || g, g % 100, g * 0.5 FROM generate_series(1, " + rows + ") g");
      Source source = pg.open(pg.definition("tput", "t", Map.of("stats-interval-ms", "500")));
      try {
        Oracle oracle = new Oracle();
        long t0 = System.nanoTime();
        source.seek(SourceOffsets.EMPTY);
        PgFixture.pollUntil(source, oracle, Duration.ofMinutes(10), () -> oracle.rows.size() == rows, "initial load");
        double load = (System.nanoTime() - t0) / 1e9;
        long t1 = System.nanoTime();
        pg.exec("UPDATE t SET qty = qty + 1");
        long ts = System.nanoTime();
        PgFixture.pollUntil(source, oracle, Duration.ofMinutes(10), () -> oracle.upserts == 2L * rows, "streamed updates");
        double stream = (System.nanoTime() - ts) / 1e9;
        System.out.printf("THROUGHPUT rows=%d initial_load=%.1fs (%.0f rows/s incl. engine start) update_statement=%.1fs "
                + "streaming=%.1fs (%.0f rows/s) meter=%s%n", rows, load, rows / load, (ts - t1) / 1e9, stream, rows / stream,
            source.meter().read());
        assertThat(oracle.rows).hasSize(rows);
      } finally {
        source.close();
      }
    }
  }
}
