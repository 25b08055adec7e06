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
 * What views over large groups cost at size: the load generator's upsert stream ({@code keys} ids
 * over {@code categories} categories), {@code tick} records a tick, with a per-category COUNT/SUM
 * view and, by variant: nothing more ({@code none}); a top-10 of the category totals and a top-10
 * of the source's rows ({@code top-k}: one group each, of {@code categories} and of every live
 * id); MIN and MAX over every row and per category ({@code min-max}). Prints the replay's
 * records/s per variant, in alternating rounds in one JVM (the first round warms up).
 *
 * <p>Run: {@code mvn -B -ntp -q -pl benchmarks -am package -DskipTests && java -Xmx4g -cp
 * "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*"
 * io.cairn.benchmarks.engine.LargeGroupBenchmark 2000000 1000000 100000 3 100000 none,top-k,min-max}
 */
public final class LargeGroupBenchmark {
  private LargeGroupBenchmark() {}

  public static void main(String[] args) {
    long records = Long.parseLong(args.length > 0 ? args[0] : "2000000");
    long keys = Long.parseLong(args.length > 1 ? args[1] : "1000000");
    long categories = Long.parseLong(args.length > 2 ? args[2] : "100000");
    int rounds = Integer.parseInt(args.length > 3 ? args[3] : "3");
    int tick = Integer.parseInt(args.length > 4 ? args[4] : "100000");
    String[] variants = (args.length > 5 ? args[5] : "none,top-k,min-max").split(",");
    for (int round = 0; round < rounds; round++) {
      for (String variant : variants) {
        run(records, keys, categories, variant, round, tick);
      }
    }
  }

  private static void run(long records, long keys, long categories, String variant, int round, int tick) {
    List<String> sql = new java.util.ArrayList<>(List.of(
        String.format(Locale.ROOT, "CREATE SOURCE gen FROM LOAD GENERATOR (keys = %d, categories = %d, limit = %d, seed = 7)"
            + " ENVELOPE UPSERT", keys, categories, records),
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category"));
    if (variant.equals("top-k")) {
      sql.add("CREATE MATERIALIZED VIEW top_cats AS SELECT category, SUM(amount) AS total FROM gen GROUP BY category"
          + " ORDER BY total DESC LIMIT 10");
      sql.add("CREATE MATERIALIZED VIEW top_rows AS SELECT id, amount FROM gen ORDER BY amount DESC LIMIT 10");
    } else if (variant.equals("min-max")) {
      sql.add("CREATE MATERIALIZED VIEW range_all AS SELECT MIN(amount) AS lo, MAX(amount) AS hi, MAX(id) AS last_id FROM gen");
      sql.add("CREATE MATERIALIZED VIEW range_by_cat AS SELECT category, MIN(amount) AS lo, MAX(amount) AS hi FROM gen GROUP BY category");
    } else if (!variant.equals("none")) {
      throw new IllegalArgumentException("Unknown variant '" + variant + "': none, top-k or min-max");
    }
    try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(tick, Duration.ofMillis(200))).build()) {
      SqlSession s = new SqlSession(e, new InMemoryCatalogLog(), Clock.systemUTC());
      sql.forEach(s::execute);
      long t0 = System.nanoTime();
      long ticks = e.tickUntilCaughtUp(1_000_000);
      double sec = (System.nanoTime() - t0) / 1e9;
      System.out.printf(Locale.ROOT, "round %d %-8s %,d records in %.2f s (%,.0f records/s), %d ticks%s%n", round, variant,
          e.recordsIngested(), sec, e.recordsIngested() / sec, ticks,
          variant.equals("top-k") ? "; top_cats " + e.peek("top_cats").size() + " rows, top_rows " + e.peek("top_rows").size() + " rows"
              : variant.equals("min-max") ? "; range_all " + e.peek("range_all") : "");
    }
  }
}
