package io.cairn.benchmarks.objectstore;

import io.cairn.benchmarks.S3Bench;
import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.LocalObjectStore;
import io.cairn.objectstore.ObjectStore;
import io.cairn.testkit.s3.S3ProxyServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * Put and get throughput of each {@link ObjectStore} backend against a raw file copy of the same
 * bytes, measured in the same run.
 *
 * <p>Two workloads: {@code large} ({@code --large-total-mib} in {@code --large-object-mib}
 * objects; default 256 MiB in 64 MiB objects) and {@code small} ({@code --small-count} objects of
 * {@code --small-kib}; default 10,000 × 4 KiB). Sources are files on disk (written and read once
 * before timing, so they are in the page cache). Every operation is sequential on one thread.
 * <ul>
 *   <li>baseline put: {@code Files.copy(source, target)}, then fsync of the file and its directory
 *       (what {@link LocalObjectStore} guarantees); baseline get: read the copied file to the end;
 *   <li>store put: {@code put(key, sourcePath)}; store get: {@code get(key)} read to the end;
 *   <li>backends: {@code memory} ({@link InMemoryObjectStore}), {@code local}
 *       ({@link LocalObjectStore} on the same file system as the baseline), {@code s3}
 *       (S3ObjectStore against s3proxy 4.1.0 with its filesystem backend, a child JVM on
 *       127.0.0.1, same disk).
 * </ul>
 * Each backend first does a few untimed round trips (JIT, connections). Ratio = store throughput /
 * baseline throughput of the same workload and direction.
 *
 * <p>Run (from the repository root):
 * <pre>
 * mvn -B -q -pl benchmarks -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * java -Xmx2g -cp benchmarks/target/classes:$(cat benchmarks/target/cp.txt) \
 *     io.cairn.benchmarks.objectstore.ObjectStoreBenchmark --dir /tmp/cairn-objstore-bench
 * </pre>
 * Options: {@code --backends memory,local,s3 --large-total-mib 256 --large-object-mib 64
 * --small-count 10000 --small-kib 4 --dir <scratch directory>}. Prints a Markdown table.
 */
public final class ObjectStoreBenchmark {

  private record Workload(String name, int count, long objectBytes) {
    long totalBytes() {
      return count * objectBytes;
    }
  }

  private record Result(String workload, String backend, double putSeconds, double getSeconds, long bytes,
      int count) {}

  private ObjectStoreBenchmark() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = parse(args);
    Path dir = Path.of(opts.getOrDefault("dir", System.getProperty("java.io.tmpdir") + "/cairn-objstore-bench"));
    List<String> backends = List.of(opts.getOrDefault("backends", "memory,local,s3").split(","));
    long largeTotal = Long.parseLong(opts.getOrDefault("large-total-mib", "256")) << 20;
    long largeObject = Long.parseLong(opts.getOrDefault("large-object-mib", "64")) << 20;
    int smallCount = Integer.parseInt(opts.getOrDefault("small-count", "10000"));
    long smallBytes = Long.parseLong(opts.getOrDefault("small-kib", "4")) << 10;
    List<Workload> workloads = List.of(
        new Workload("large", (int) (largeTotal / largeObject), largeObject),
        new Workload("small", smallCount, smallBytes));

    deleteTree(dir);
    Files.createDirectories(dir);
    List<Result> results = new ArrayList<>();
    S3ProxyServer s3 = backends.contains("s3") ? S3ProxyServer.start() : null;
    try {
      for (Workload w : workloads) {
        Path sources = dir.resolve("src-" + w.name());
        List<Path> files = writeSources(sources, w);
        results.add(baseline(w, files, dir.resolve("copy-" + w.name())));
        for (String backend : backends) {
          Supplier<ObjectStore> open = switch (backend) {
            case "memory" -> InMemoryObjectStore::new;
            case "local" -> () -> LocalObjectStore.createDirectories(dir.resolve("store-" + w.name()));
            case "s3" -> () -> S3Bench.newStore(s3, "bench");
            default -> throw new IllegalArgumentException("Unknown backend '" + backend + "': memory, local or s3");
          };
          try (ObjectStore store = open.get()) {
            results.add(measure(w, backend, store, files));
          }
          System.gc();
        }
        deleteTree(sources);
        deleteTree(dir.resolve("copy-" + w.name()));
        deleteTree(dir.resolve("store-" + w.name()));
      }
    } finally {
      if (s3 != null) {
        s3.close();
      }
      deleteTree(dir);
    }
    print(results);
  }

  private static List<Path> writeSources(Path dir, Workload w) throws IOException {
    Files.createDirectories(dir);
    SplittableRandom random = new SplittableRandom(42);
    List<Path> files = new ArrayList<>(w.count());
    byte[] chunk = new byte[(int) Math.min(w.objectBytes(), 1 << 20)];
    for (int i = 0; i < w.count(); i++) {
      Path f = dir.resolve(String.format(Locale.ROOT, "%06d.bin", i));
      try (var out = Files.newOutputStream(f)) {
        for (long written = 0; written < w.objectBytes(); written += chunk.length) {
          random.nextBytes(chunk);
          out.write(chunk, 0, (int) Math.min(chunk.length, w.objectBytes() - written));
        }
      }
      files.add(f);
    }
    for (Path f : files) {
      drain(Files.newInputStream(f)); // into the page cache
    }
    return files;
  }

  private static Result baseline(Workload w, List<Path> files, Path target) throws IOException {
    Files.createDirectories(target);
    long t0 = System.nanoTime();
    for (Path f : files) {
      Path copy = target.resolve(f.getFileName());
      Files.copy(f, copy);
      fsync(copy);
      fsync(target);
    }
    long t1 = System.nanoTime();
    long bytes = 0;
    for (Path f : files) {
      bytes += drain(Files.newInputStream(target.resolve(f.getFileName())));
    }
    long t2 = System.nanoTime();
    check(bytes, w);
    return new Result(w.name(), "raw file copy", (t1 - t0) / 1e9, (t2 - t1) / 1e9, bytes, files.size());
  }

  private static Result measure(Workload w, String backend, ObjectStore store, List<Path> files) throws IOException {
    // warm-up (JIT, connection pool, server): a few untimed round trips, then removed
    List<String> warm = new ArrayList<>();
    for (Path f : files.subList(0, Math.min(files.size(), w.objectBytes() >= (1 << 20) ? 1 : 200))) {
      String key = "warmup/" + f.getFileName();
      store.put(key, f);
      drain(store.get(key));
      warm.add(key);
    }
    store.delete(warm);
    long t0 = System.nanoTime();
    for (Path f : files) {
      store.put("bench/" + f.getFileName(), f);
    }
    long t1 = System.nanoTime();
    long bytes = 0;
    for (Path f : files) {
      bytes += drain(store.get("bench/" + f.getFileName()));
    }
    long t2 = System.nanoTime();
    check(bytes, w);
    return new Result(w.name(), backend, (t1 - t0) / 1e9, (t2 - t1) / 1e9, bytes, files.size());
  }

  private static void check(long bytes, Workload w) {
    if (bytes != w.totalBytes()) {
      throw new IllegalStateException("Read " + bytes + " bytes, expected " + w.totalBytes());
    }
  }

  private static long drain(InputStream in) throws IOException {
    byte[] buf = new byte[1 << 16];
    long total = 0;
    try (in) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        total += n;
      }
    }
    return total;
  }

  private static void fsync(Path p) throws IOException {
    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  private static void print(List<Result> results) {
    Map<String, Result> base = new LinkedHashMap<>();
    results.stream().filter(r -> r.backend().equals("raw file copy")).forEach(r -> base.put(r.workload(), r));
    System.out.println("| workload | backend | put MiB/s | put obj/s | put ratio | get MiB/s | get obj/s | get ratio |");
    System.out.println("|---|---|---:|---:|---:|---:|---:|---:|");
    for (Result r : results) {
      Result b = base.get(r.workload());
      double mib = r.bytes() / (double) (1 << 20);
      System.out.printf(Locale.ROOT, "| %s (%d × %s) | %s | %.1f | %.0f | %.2f | %.1f | %.0f | %.2f |%n",
          r.workload(), r.count(), human(r.bytes() / r.count()), r.backend(),
          mib / r.putSeconds(), r.count() / r.putSeconds(), b.putSeconds() / r.putSeconds(),
          mib / r.getSeconds(), r.count() / r.getSeconds(), b.getSeconds() / r.getSeconds());
    }
  }

  private static String human(long bytes) {
    return bytes >= (1 << 20) ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("Expected --option value pairs, got '" + args[i] + "'");
      }
      opts.put(args[i].substring(2), args[++i]);
    }
    return opts;
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.delete(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
