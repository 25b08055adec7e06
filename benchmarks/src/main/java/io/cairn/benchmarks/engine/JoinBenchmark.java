package io.cairn.benchmarks.engine;

import io.cairn.engine.plan.Plan;
import io.cairn.engine.runtime.Engine;
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
 * Inner join of two keyed collections: {@code l (k BIGINT PRIMARY KEY, v BIGINT)} and {@code r}
 * alike, upsert sources with {@code keys} keys each (one full pass of each is loaded in set-up),
 * joined on {@code k}. Every update replaces a key's row on one side, so the join retracts one
 * output row and inserts one. One benchmark operation = one input update; an invocation is one
 * tick of {@value #TICK} updates, half on each side. Target: ≥ 500K updates/s.
 *
 * <p>Run: {@code mvn -B -ntp -Pjmh -pl benchmarks -am package -DskipTests && java -jar
 * benchmarks/target/benchmarks.jar JoinBenchmark -f 1 -wi 2 -i 3}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms6g", "-Xmx6g"})
public class JoinBenchmark {
  static final int TICK = 100_000;

  @Param({"1000000"})
  long keys;

  @Param({"1", "2"})
  int workers;

  Engine engine;

  @Setup(Level.Trial)
  public void setUp() {
    engine = EngineBench.engine(workers, TICK);
    engine.createSource(1, KeyStreamConnector.definition("l", keys, TICK / 2, true, false));
    engine.createSource(2, KeyStreamConnector.definition("r", keys, TICK / 2, true, false));
    engine.createView(
        3,
        "joined",
        Plan.Join.of(
            new Plan.Get("l", KeyStreamConnector.SCHEMA), new Plan.Get("r", KeyStreamConnector.SCHEMA), new int[] {0}, new int[] {0}));
    EngineBench.ingest(engine, 2 * keys);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    int rows = engine.peek("joined").size();
    engine.close();
    if (rows != keys) {
      throw new IllegalStateException("Cannot trust the run: the join has " + rows + " rows, expected " + keys);
    }
  }

  @Benchmark
  @OperationsPerInvocation(TICK)
  public long tick() {
    return engine.tick();
  }
}
