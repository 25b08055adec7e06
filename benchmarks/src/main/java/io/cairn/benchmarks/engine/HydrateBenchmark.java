package io.cairn.benchmarks.engine;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Reading a whole collection out of its trace: what {@code CREATE VIEW} over a source that already
 * holds {@code keys} rows costs the tick that hydrates it, and what a full read ({@code SELECT *},
 * {@link Engine#peek}) costs. The source is an upsert stream of {@code keys} BIGINT keys read to its
 * end in ticks of {@value #TICK}, so its trace is several batches, some of them still merging, as
 * on a running node.
 *
 * <p>{@code hydrate}: create {@code SELECT k, v FROM s WHERE v >= 0}, run the tick that fills it,
 * drop it. {@code peek}: every row of the source, sorted. Both in ms per operation.
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar HydrateBenchmark -f 1 -wi 3 -i 5}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class HydrateBenchmark {
  static final int TICK = 100_000;

  @Param({"1000000"})
  long keys;

  @Param({"1", "2"})
  int workers;

  Engine engine;
  long nextId = 2;

  @Setup(Level.Trial)
  public void setUp() {
    engine = EngineBench.engine(workers, TICK);
    engine.createSource(1, new io.cairn.engine.source.SourceDefinition(
        "s", KeyStreamConnector.NAME,
        java.util.Map.of("keys", Long.toString(keys), "limit", Long.toString(keys)),
        KeyStreamConnector.SCHEMA, java.util.List.of("k"), io.cairn.engine.source.Envelope.UPSERT));
    EngineBench.ingest(engine, keys);
    if (engine.peek("s").size() != keys) {
      throw new IllegalStateException("Cannot trust the run: the source does not hold " + keys + " rows");
    }
    createView("check");
    if (engine.peek("check").size() != keys) {
      throw new IllegalStateException("Cannot trust the run: the hydrated view does not hold " + keys + " rows");
    }
    engine.drop("check");
  }

  private void createView(String name) {
    engine.createView(nextId++, name, new Plan.Filter(
        new Plan.Get("s", KeyStreamConnector.SCHEMA),
        new Expr.Cmp(Expr.CmpOp.GE, Expr.col(1, Type.BIGINT), Expr.lit(0L))));
    engine.catchUpTick(); // the source is caught up: the tick hydrates the view and closes at once
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    engine.close();
  }

  @Benchmark
  public int hydrate() {
    String name = "v" + nextId;
    createView(name);
    long n = engine.metrics().ticks();
    engine.drop(name);
    return (int) n;
  }

  @Benchmark
  public int peek() {
    return engine.peek("s").size();
  }
}
