package io.cairn.benchmarks.engine;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.sql.SqlSession;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a top-k view costs at size: the load generator's upsert stream ({@code keys} ids over
 * {@code categories} categories) with a per-category COUNT/SUM view, and optionally a top-10 on
 * top of it (one group: the {@code categories} totals) and a top-10 of the source's rows (one
 * group: every live id), {@code tick} records a tick. Prints the replay's records/s with and without the top-k views, in
 * alternating rounds in one JVM (the first round of each warms up).
 *
 * <p>Run: {@code mvn -B -ntp -q -pl benchmarks -am package -DskipTests && java -Xmx4g -cp
 * "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*"
 * io.cairn.benchmarks.engine.TopKBenchmark 2000000 1000000 100000 3 100000}
 */
public final class TopKBenchmark {
  private TopKBenchmark() {}

  public static void main(String[] args) {
    long records = Long.parseLong(args.length > 0 ? args[0] : "2000000");
    long keys = Long.parseLong(args.length > 1 ? args[1] : "1000000");
    long categories = Long.parseLong(args.length > 2 ? args[2] : "100000");
    int rounds = Integer.parseInt(args.length > 3 ? args[3] : "3");
    int tick = Integer.parseInt(args.length > 4 ? args[4] : "100000");
    for (int round = 0; round < rounds; round++) {
      for (boolean topk : new boolean[] {false, true}) {
        run(records, keys, categories, topk, round, tick);
      }
    }
  }

  private static void run(long records, long keys, long categories, boolean topk, int round, int tick) {
    List<String> sql = new java.util.ArrayList<>(List.of(
        String.format(Locale.ROOT, "CREATE SOURCE gen FROM LOAD GENERATOR (keys = %d, categories = %d, limit = %d, seed = 7)"
            + " ENVELOPE UPSERT", keys, categories, records),
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category"));
    if (topk) {
      sql.add("CREATE MATERIALIZED VIEW top_cats AS SELECT category, SUM(amount) AS total FROM gen GROUP BY category"
          + " ORDER BY total DESC LIMIT 10");
      sql.add("CREATE MATERIALIZED VIEW top_rows AS SELECT id, amount FROM gen ORDER BY amount DESC LIMIT 10");
    }
    try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(tick, Duration.ofMillis(200))).build()) {
      SqlSession s = new SqlSession(e, new InMemoryCatalogLog(), Clock.systemUTC());
      sql.forEach(s::execute);
      long t0 = System.nanoTime();
      long ticks = e.tickUntilCaughtUp(1_000_000);
      double sec = (System.nanoTime() - t0) / 1e9;
      System.out.printf(Locale.ROOT, "round %d %-8s %,d records in %.2f s (%,.0f records/s), %d ticks%s%n", round,
          topk ? "top-k" : "no top-k", e.recordsIngested(), sec, e.recordsIngested() / sec, ticks,
          topk ? "; top_cats " + e.peek("top_cats").size() + " rows, top_rows " + e.peek("top_rows").size() + " rows" : "");
    }
  }
}
