package io.cairn.benchmarks.engine;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.sql.SqlException;
import io.cairn.engine.sql.SqlSession;
import io.cairn.engine.sql.StatementBudget;
import io.cairn.engine.sql.StatementCanceledException;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a hostile statement costs the node (issue 30's targets):
 *
 * <ul>
 *   <li>{@code refuseDeep}: a SELECT nested {@code depth} deep through {@link SqlSession#execute}:
 *       refused before any parser runs when deeper than 64 (target ≤ 5 ms at 100,000), parsed and
 *       planned when at the limit;
 *   <li>{@code cancelToFree}: a scan of a 300,000-row source cancelled 20 ms after it starts: the
 *       score is the whole run, so the time from the cancel to the statement's thread being free
 *       is the score less 20 ms (target ≤ 100 ms).
 * </ul>
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar StatementBoundsBenchmark -f 1}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx2g"})
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 3)
public class StatementBoundsBenchmark {
  @Param({"62", "100000"})
  int depth;

  Engine engine;
  SqlSession session;
  String nested;

  @Setup(Level.Trial)
  public void setUp() {
    engine = Engine.builder().workers(2).clock(Clock.systemUTC()).build();
    session = new SqlSession(engine, new InMemoryCatalogLog(), Clock.systemUTC());
    session.execute("CREATE SOURCE big FROM LOAD GENERATOR (keys = 300000, limit = 300000, seed = 1)");
    engine.tickUntilCaughtUp(100_000);
    StringBuilder sb = new StringBuilder("SELECT ");
    sb.append("(".repeat(depth)).append("amount").append(" + 1)".repeat(depth)).append(" AS x FROM big WHERE id = 1");
    nested = sb.toString();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public Object refuseDeep() {
    try {
      return session.execute(nested, StatementBudget.of(java.time.Duration.ofSeconds(30)));
    } catch (SqlException e) {
      return e;
    }
  }

  @Benchmark
  @BenchmarkMode(Mode.SingleShotTime)
  @Warmup(iterations = 3)
  @Measurement(iterations = 20)
  public long cancelToFree() throws Exception {
    StatementBudget budget = StatementBudget.of(null);
    long[] doneAt = new long[1];
    Thread t = new Thread(() -> {
      try {
        session.execute("SELECT id * 2 AS x, amount FROM big WHERE amount >= 0", budget);
      } catch (StatementCanceledException expected) {
        // the point
      }
      doneAt[0] = System.nanoTime();
    });
    t.start();
    Thread.sleep(20);
    long cancelAt = System.nanoTime();
    budget.cancel(StatementCanceledException.USER_REQUEST);
    t.join();
    return doneAt[0] - cancelAt;
  }
}
