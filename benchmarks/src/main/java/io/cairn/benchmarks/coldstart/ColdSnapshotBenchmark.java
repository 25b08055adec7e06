package io.cairn.benchmarks.coldstart;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The first full snapshot of a freshly started node, as a user meets it (a daily snapshot runs
 * once a day, so its code is never warm), against DuckDB writing as many rows of the same shape to
 * Parquet.
 *
 * <p>Each round starts {@code bin/cairn run} of the distribution on a new local store with a load
 * generator source of {@code keys} keys and {@code records} records (no view), waits until it has
 * read them, lets it serve for {@code -Dcairn.bench.idle-seconds} (default 40: a scheduled
 * snapshot finds a node that has served a while, and the node compiles its encoder 30 s after it
 * starts serving), asks for a snapshot ({@code POST /snapshot}) and stops it; the figure is the
 * snapshot's encode-and-upload time from the node's log ("upload N ms"). DuckDB then writes as
 * many rows of five BIGINT columns (what the source's arrangement holds: id, category, amount and
 * the time and diff columns) with {@code COPY t TO 'x.parquet' (FORMAT parquet, COMPRESSION
 * zstd)}, with 2 threads and 1 (only the COPY is timed; it runs in this JVM, native code with
 * nothing to warm up).
 *
 * <pre>
 *   java -cp "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *     io.cairn.benchmarks.coldstart.ColdSnapshotBenchmark [keys=4000000] [records=4000000] [rounds=3]
 * </pre>
 * {@code -Dcairn.bench.dist} names the unpacked distribution; {@code -Dcairn.bench.java-opts} is
 * passed to the node as {@code CAIRN_JAVA_OPTS}.
 */
public final class ColdSnapshotBenchmark {
  private static final Pattern COMMITTED = Pattern.compile("Committed snapshot \\S+ of tick \\d+: (\\d+) rows.*?(\\d+) bytes uploaded.*upload (\\d+) ms");

  private static final int IDLE_SECONDS = Integer.getInteger("cairn.bench.idle-seconds", 40);

  private ColdSnapshotBenchmark() {}

  public static void main(String[] args) throws Exception {
    long keys = args.length > 0 ? Long.parseLong(args[0]) : 4_000_000;
    long records = args.length > 1 ? Long.parseLong(args[1]) : 4_000_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    Path dist = Path.of(System.getProperty("cairn.bench.dist", "dist/target/cairn-0.1.0-SNAPSHOT/cairn-0.1.0-SNAPSHOT")).toAbsolutePath();
    Path bin = dist.resolve("bin/cairn");
    Path work = Files.createTempDirectory("cairn-cold-snapshot-");
    System.out.println("work directory: " + work + " (the node's store and DuckDB's file are here; -Djava.io.tmpdir moves it)");
    System.out.println("| round | rows | bytes | cairn first snapshot (encode + upload) | rows/s | DuckDB 2 threads | DuckDB 1 thread "
        + "| DuckDB 2 threads + fsync | cairn ÷ DuckDB (2 threads) | cairn ÷ DuckDB + fsync |");
    System.out.println("|---|---|---|---|---|---|---|---|---|---|");
    for (int r = 0; r < rounds; r++) {
      Path cfg = ColdRecoverBenchmark.config(work, "round-" + r, List.of(
          "CREATE SOURCE gen FROM LOAD GENERATOR (keys = " + keys + ", categories = 100, seed = " + (42 + r) + ", limit = " + records
              + ", delete-percent = 0)"));
      Path dir = cfg.getParent();
      // no snapshot before the one asked for: the schedule's first slot is a year away
      Files.writeString(cfg, Files.readString(cfg).replace("init:", "snapshots:\n  cron: \"0 0 0 1 1 ? 2099\"\ninit:"));
      String opts = System.getProperty("cairn.bench.java-opts", "");
      // a scheduled snapshot finds a node that has served a while
      ColdRecoverBenchmark.snapshotOnce(bin, cfg, opts.isEmpty() ? Map.of() : Map.of("CAIRN_JAVA_OPTS", opts), Duration.ofSeconds(IDLE_SECONDS));
      Matcher m = null;
      for (String line : Files.readAllLines(dir.resolve("node.log"))) {
        Matcher x = COMMITTED.matcher(line);
        if (x.find()) {
          m = x;
        }
      }
      if (m == null) {
        throw new IllegalStateException("no 'Committed snapshot' line in " + dir.resolve("node.log"));
      }
      long rows = Long.parseLong(m.group(1));
      long bytes = Long.parseLong(m.group(2));
      long uploadMs = Long.parseLong(m.group(3));
      double duck2 = duckdb(rows, 2, dir, false);
      double duck1 = duckdb(rows, 1, dir, false);
      double duck2sync = duckdb(rows, 2, dir, true);
      System.out.printf(Locale.ROOT, "| %d | %,d | %,d | %,d ms | %.2fM | %.0f ms | %.0f ms | %.0f ms | **%.2f** | **%.2f** |%n", r + 1, rows, bytes,
          uploadMs, rows / (uploadMs * 1e3), duck2, duck1, duck2sync, duck2 / uploadMs, duck2sync / uploadMs);
    }
  }

  /**
   * Milliseconds DuckDB takes to COPY {@code rows} rows of five BIGINT columns to Parquet (zstd),
   * median of 3 after one; with {@code fsync}, the file is also forced to the disk inside the
   * timing (the durability cairn's local store gives every object it writes: DuckDB's COPY does
   * not sync).
   */
  private static double duckdb(long rows, int threads, Path dir, boolean fsync) throws Exception {
    Path out = dir.resolve("duckdb-" + threads + ".parquet");
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
      st.execute("SET threads=" + threads);
      st.execute("CREATE TABLE t AS SELECT range * 5 AS id, range % 100 AS category, range % 1000 AS amount, CAST(1 AS BIGINT) AS _time, "
          + "CAST(1 AS BIGINT) AS _diff FROM range(" + rows + ")");
      List<Double> ms = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        Files.deleteIfExists(out);
        long t0 = System.nanoTime();
        st.execute("COPY t TO '" + out + "' (FORMAT parquet, COMPRESSION zstd)");
        if (fsync) {
          try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(out, java.nio.file.StandardOpenOption.WRITE)) {
            ch.force(true);
          }
        }
        if (i > 0) {
          ms.add((System.nanoTime() - t0) / 1e6);
        }
      }
      ms.sort(null);
      return ms.get(1);
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
