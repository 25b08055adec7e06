package io.cairn.benchmarks.snapshot;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.snapshotter.format.BatchFileOptions;
import io.cairn.snapshotter.format.BatchFileOptions.PageFormat;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.duckdb.DuckDBAppender;
import org.duckdb.DuckDBConnection;

/**
 * One batch file's encoding, cairn's column writer against DuckDB's Parquet writer on the same
 * rows (benchmarks/RESULTS.md, "Snapshots" → "Column writer (issue 14)"): five BIGINT columns
 * shaped like the load generator's arrangement (sorted distinct {@code id}, {@code category},
 * {@code amount}, {@code _time}, {@code _diff}), encoded in memory by {@link ParquetBatchFiles}
 * for each page format, ZSTD level, row-group size and thread count, and by DuckDB as {@code COPY t
 * TO 'x.parquet' (FORMAT parquet, COMPRESSION zstd)} with {@code SET threads} (rows loaded into
 * the table first; only the COPY is timed). The contenders run interleaved, one run each per round
 * (two warm-up rounds, then {@code reps}), so load from other processes on a shared machine hits
 * them alike; each figure is the median wall-clock (and process CPU) time. Decoding ({@link
 * ParquetBatchFiles#read}) is timed afterwards.
 *
 * <p>Run (from the repository root):
 *
 * <pre>
 * mvn -B -ntp -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx6g -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.snapshot.ColumnWriterBenchmark [rows] [reps] [threads] [random|sequential]
 * </pre>
 *
 * Defaults: 2,700,000 rows, 7 repetitions, 2 threads (both sides), random rows (sorted distinct
 * ids from a 20M space, category in [0, 100), amount in [0, 1000), time in [0, 16), diff 1);
 * {@code sequential} gives ids 0..n-1, category i % 100, amount i % 1000, one time.
 */
public final class ColumnWriterBenchmark {
  private ColumnWriterBenchmark() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_700_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
    boolean sequential = args.length > 3 && args[3].equals("sequential");
    System.out.printf(Locale.ROOT, "machine: %d processors, load average %.1f at start; %d rows (%s), %d reps, %d threads%n",
        Runtime.getRuntime().availableProcessors(),
        java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), rows, sequential ? "sequential" : "random", reps, threads);
    Batch batch = sequential ? sequential(rows) : batch(rows);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    Path dir = Files.createTempDirectory("cairn-duckdb-copy");
    try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
      load(duck, batch);
      List<Contender> all = new ArrayList<>();
      record Config(PageFormat format, int level, int rowGroupRows, int threads) {}
      List<Config> configs = new ArrayList<>();
      for (PageFormat f : PageFormat.values()) {
        configs.add(new Config(f, 1, 1 << 20, 1));
        configs.add(new Config(f, 1, 1 << 18, threads));
        configs.add(new Config(f, 1, 1 << 20, threads));
        configs.add(new Config(f, 3, 1 << 18, threads));
      }
      configs.add(new Config(PageFormat.V1_PAGES_V2_ENCODINGS, 6, 1 << 18, threads));
      byte[][] last = new byte[configs.size()][];
      for (int k = 0; k < configs.size(); k++) {
        Config c = configs.get(k);
        BatchFileOptions o = BatchFileOptions.defaults().withPageFormat(c.format()).withZstdLevel(c.level())
            .withRowGroupRows(c.rowGroupRows()).withExecutor(c.threads() == 1 ? Runnable::run : pool, c.threads() + 1);
        int slot = k;
        String name = String.format(Locale.ROOT, "cairn %s zstd %d, row groups of %d, %d thread(s)", c.format(), c.level(),
            c.rowGroupRows(), c.threads());
        all.add(new Contender(name, () -> last[slot] = ParquetBatchFiles.toBytes("bench", 0, batch, o), () -> last[slot].length));
      }
      BatchFileOptions defaults = BatchFileOptions.defaults().withExecutor(pool, threads + 1);
      byte[][] def = new byte[1][];
      Contender cairnDefault = new Contender(String.format(Locale.ROOT, "cairn default options (%s, zstd %d, row groups of %d), %d thread(s)",
          defaults.pageFormat(), defaults.zstdLevel(), defaults.rowGroupRows(), threads),
          () -> def[0] = ParquetBatchFiles.toBytes("bench", 0, batch, defaults), () -> def[0].length);
      all.add(cairnDefault);
      Path out = dir.resolve("x.parquet");
      Contender[] duckdb = new Contender[2];
      int d = 0;
      for (int t : new int[] {threads, 1}) {
        String copy = "COPY t TO '" + out + "' (FORMAT parquet, COMPRESSION zstd)";
        duckdb[d++] = new Contender("DuckDB COPY (FORMAT parquet, COMPRESSION zstd), " + t + " thread(s)", () -> {
          try {
            st.execute("SET threads=" + t);
            st.execute(copy);
          } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
          }
        }, () -> {
          try {
            return Files.size(out);
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
      }
      all.addAll(List.of(duckdb));
      // interleaved: every contender runs once per round, so a burst of load on the shared machine hits all alike
      for (int r = 0; r < 2; r++) {
        for (Contender c : all) {
          c.work.run();
        }
      }
      for (int r = 0; r < reps; r++) {
        for (Contender c : all) {
          c.measure();
        }
      }
      for (Contender c : all) {
        System.out.printf(Locale.ROOT, "%-70s write %7.1f ms (cpu %7.1f ms) = %5.1fM rows/s, %9d bytes (%.2f B/row)%n", c.name, c.medianMs(),
            c.medianCpuMs(), rows / c.medianMs() / 1e3, c.bytes.getAsLong(), (double) c.bytes.getAsLong() / rows);
      }
      for (int k = 0; k < configs.size(); k++) {
        byte[] f = last[k];
        double readMs = median(reps, () -> ParquetBatchFiles.read("bench", f, batch.id(), batch.keySchema(), batch.valSchema(),
            batch.description(), batch.size()));
        System.out.printf(Locale.ROOT, "read %-70s %7.1f ms = %5.1fM rows/s%n", all.get(k).name, readMs, rows / readMs / 1e3);
      }
      Contender bestCairn = all.subList(0, configs.size()).stream().min(java.util.Comparator.comparingDouble(Contender::medianMs)).orElseThrow();
      System.out.printf(Locale.ROOT, "ratio cairn default / DuckDB (%d threads) = %.2f (rows/s %.1fM / %.1fM); fastest cairn (%s) / DuckDB = %.2f%n",
          threads, duckdb[0].medianMs() / cairnDefault.medianMs(), rows / cairnDefault.medianMs() / 1e3, rows / duckdb[0].medianMs() / 1e3,
          bestCairn.name, duckdb[0].medianMs() / bestCairn.medianMs());
    } finally {
      pool.shutdown();
      Files.deleteIfExists(dir.resolve("x.parquet"));
      Files.deleteIfExists(dir);
    }
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  /** Something timed: wall-clock and process CPU per run. */
  private static final class Contender {
    final String name;
    final Runnable work;
    final java.util.function.LongSupplier bytes;
    final List<Double> wall = new ArrayList<>();
    final List<Double> cpu = new ArrayList<>();

    Contender(String name, Runnable work, java.util.function.LongSupplier bytes) {
      this.name = name;
      this.work = work;
      this.bytes = bytes;
    }

    void measure() {
      long c0 = cpuNanos();
      long t0 = System.nanoTime();
      work.run();
      wall.add((System.nanoTime() - t0) / 1e6);
      cpu.add((cpuNanos() - c0) / 1e6);
    }

    double medianMs() {
      return med(wall);
    }

    double medianCpuMs() {
      return med(cpu);
    }

    private static double med(List<Double> xs) {
      double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      return a[a.length / 2];
    }
  }

  /** Sorted distinct ids from a 20M space, like the load generator's arrangement after upserts. */
  static Batch batch(int rows) {
    Schema key = Schema.of(Column.of("id", Type.BIGINT));
    Schema val = Schema.of(Column.of("category", Type.BIGINT), Column.of("amount", Type.BIGINT));
    SplittableRandom r = new SplittableRandom(11);
    long space = Math.max(20_000_000L, 2L * rows);
    long[] ids = r.longs(rows * 3L / 2, 0, space).distinct().limit(rows).sorted().toArray();
    if (ids.length < rows) {
      throw new IllegalStateException("Cannot draw " + rows + " distinct ids");
    }
    Batch.SortedBuilder b = new Batch.SortedBuilder(key, val, rows);
    for (long id : ids) {
      b.add(Row.of(id), Row.of(r.nextLong(100), r.nextLong(1000)), r.nextInt(16), 1);
    }
    return b.build(new Description(0, 17, 0));
  }

  /** ids 0, 1, 2, …; category i % 100, amount i % 1000, one time, diff 1 (what {@code range(n)} gives DuckDB). */
  static Batch sequential(int rows) {
    Schema key = Schema.of(Column.of("id", Type.BIGINT));
    Schema val = Schema.of(Column.of("category", Type.BIGINT), Column.of("amount", Type.BIGINT));
    Batch.SortedBuilder b = new Batch.SortedBuilder(key, val, rows);
    for (long i = 0; i < rows; i++) {
      b.add(Row.of(i), Row.of(i % 100, i % 1000), 1, 1);
    }
    return b.build(new Description(0, 2, 0));
  }

  /** Loads the batch's rows into DuckDB table {@code t} (not timed). */
  static void load(Connection c, Batch batch) throws Exception {
    try (Statement st = c.createStatement()) {
      st.execute("CREATE TABLE t (id BIGINT, category BIGINT, amount BIGINT, _time BIGINT, _diff BIGINT)");
    }
    try (DuckDBAppender a = ((DuckDBConnection) c).createAppender(DuckDBConnection.DEFAULT_SCHEMA, "t")) {
      for (int i = 0; i < batch.size(); i++) {
        a.beginRow();
        a.append((Long) batch.keyColumn(0).get(i));
        a.append((Long) batch.valColumn(0).get(i));
        a.append((Long) batch.valColumn(1).get(i));
        a.append(batch.time(i));
        a.append(batch.diff(i));
        a.endRow();
      }
    }
  }

  /** Median wall-clock milliseconds of {@code reps} runs, after {@code reps} warm-up runs. */
  static double median(int reps, Runnable work) {
    for (int i = 0; i < reps; i++) {
      work.run();
    }
    double[] ms = new double[reps];
    for (int i = 0; i < reps; i++) {
      long t0 = System.nanoTime();
      work.run();
      ms[i] = (System.nanoTime() - t0) / 1e6;
    }
    Arrays.sort(ms);
    return ms[reps / 2];
  }
}
