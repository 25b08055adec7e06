package io.cairn.benchmarks.engine;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.sql.Result;
import io.cairn.engine.sql.SqlSession;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * SELECT latency while the engine ingests at full rate: a load generator with no rate limit
 * upserts over 1M keys into a source and a GROUP BY view, ticks running back to back on the
 * driver thread (each tick reads up to 100,000 records and computes for tens of milliseconds), and
 * the benchmark thread asks {@code pointLookup} (a key lookup on the source) or {@code viewScan}
 * (the 100-row view). JMH's sample mode gives the percentiles. Target (issue 31): p99 ≤ 20 ms for
 * a point lookup. Before reads stopped taking the engine lock, a read waited for the tick in
 * progress.
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar ReadLatencyBenchmark -f 1}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g"})
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 3, time = 5)
public class ReadLatencyBenchmark {
  static final long KEYS = 1_000_000;
  Engine engine;
  SqlSession session;

  @Setup(Level.Trial)
  public void setUp() {
    engine = Engine.builder().workers(2).tickPolicy(new TickPolicy(100_000, Duration.ofMillis(200))).clock(Clock.systemUTC()).build();
    session = new SqlSession(engine, new InMemoryCatalogLog(), Clock.systemUTC());
    session.execute("CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + KEYS + ", categories = 100, limit = 2000000000, seed = 1)");
    session.execute("CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category");
    for (int i = 0; i < 20; i++) {
      engine.tick(); // 2M records in before measuring
    }
    engine.start();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.stop();
    System.out.println("ticks during the run: " + engine.metrics().ticks() + ", records ingested: " + engine.metrics().recordsIngested());
    engine.close();
  }

  @Benchmark
  public Result pointLookup() {
    long id = ThreadLocalRandom.current().nextLong(KEYS);
    return session.execute("SELECT * FROM gen WHERE id = " + id);
  }

  @Benchmark
  public Result viewScan() {
    return session.execute("SELECT * FROM by_category");
  }
}
