package io.cairn.benchmarks.engine;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * {@code SELECT k, COUNT(*) FROM s GROUP BY k} over an append-only stream of BIGINT keys, with
 * {@code keys} distinct keys already in the view (a full pass is loaded in set-up). One
 * benchmark operation = one input update; an invocation is one tick of {@value #TICK} updates,
 * each scattered over the whole key space, so every tick touches {@value #TICK} groups (a
 * retraction and an insertion each). Target: ≥ 1M updates/s with 2 workers on 1M keys.
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar CountByKeyBenchmark -f 1 -wi 2 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class CountByKeyBenchmark {
  static final int TICK = 100_000;

  @Param({"1000000"})
  long keys;

  @Param({"1", "2"})
  int workers;

  Engine engine;

  @Setup(Level.Trial)
  public void setUp() {
    engine = EngineBench.engine(workers, TICK);
    engine.createSource(1, KeyStreamConnector.definition("s", keys, Long.MAX_VALUE, false, true));
    engine.createView(
        2,
        "counts",
        new Plan.Reduce(
            new Plan.Get("s", KeyStreamConnector.SCHEMA),
            new int[] {0},
            List.of(Aggregate.countStar()),
            Schema.of(Column.of("k", Type.BIGINT), Column.of("n", Type.BIGINT))));
    EngineBench.ingest(engine, keys);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    int groups = engine.peek("counts").size();
    engine.close();
    if (groups != keys) {
      throw new IllegalStateException("Cannot trust the run: the view has " + groups + " groups, expected " + keys);
    }
  }

  @Benchmark
  @OperationsPerInvocation(TICK)
  public long tick() {
    return engine.tick();
  }
}
