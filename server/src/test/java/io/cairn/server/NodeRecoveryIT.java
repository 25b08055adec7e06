package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.node.RecoveryReport;
import io.cairn.node.SnapshotOutcome;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Node recovery on a local store: full replay without a snapshot, resume from a snapshot, fallback on corruption. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured under 3 s
class NodeRecoveryIT {
  static final long LIMIT = 60_000;

  static CairnConfig config(Path dir) throws IOException {
    Path f = dir.resolve("cairn.yaml");
    Files.writeString(f, String.join("\n",
        "store:",
        "  uri: \"file://" + dir.resolve("store") + "?create=true\"",
        "engine:",
        "  workers: 2",
        "  tick:",
        "    max-records: 4000",
        "http:",
        "  port: 0",
        "init:",
        "  - \"CREATE SOURCE gen FROM LOAD GENERATOR (keys = 800, categories = 5, seed = 3, limit = " + LIMIT + ")\"",
        "  - \"CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category\"",
        ""));
    return ConfigLoader.load(f, Map.of());
  }

  static List<Row> oracle() {
    return oracle(Long.MIN_VALUE);
  }

  /** by_category over the generator's rows whose amount is more than {@code moreThan}. */
  static List<Row> oracle(long moreThan) {
    var s = new LoadGeneratorConnector.Settings(800, 5, 3, 10, LIMIT, 0);
    Map<Long, Row> t = new HashMap<>();
    for (long i = 0; i < LIMIT; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        t.remove(r.id());
      } else {
        t.put(r.id(), r.row());
      }
    }
    Map<Long, long[]> g = new TreeMap<>();
    t.values().stream().filter(r -> r.getLong(2) > moreThan).forEach(r -> {
      long[] a = g.computeIfAbsent(r.getLong(1), k -> new long[2]);
      a[0]++;
      a[1] += r.getLong(2);
    });
    List<Row> out = new ArrayList<>();
    g.forEach((c, a) -> out.add(Row.of(c, a[0], a[1])));
    return out;
  }

  @Test
  void theCatchUpTimeoutHoldsWhenASourceCallBlocks(@TempDir Path dir) throws IOException {
    // a source whose calls block (a Kafka broker gone: each call waits out its request timeout)
    // must not hold `cairn recover --timeout` past its deadline: the sources are woken up then
    Path f = dir.resolve("cairn.yaml");
    Files.writeString(f, String.join("\n",
        "store:",
        "  uri: \"file://" + dir.resolve("store") + "?create=true\"",
        "http:",
        "  port: 0",
        "init:",
        "  - \"CREATE SOURCE stuck FROM BLOCKING ()\"",
        ""));
    CairnConfig cfg = ConfigLoader.load(f, Map.of());
    long t0 = System.nanoTime();
    try (Node node = Node.recover(cfg, Node.Options.defaults().withCatchUpTimeout(java.time.Duration.ofSeconds(2)))) {
      long millis = (System.nanoTime() - t0) / 1_000_000;
      assertThat(node.report().caughtUp()).isFalse();
      assertThat(millis).as("recovery returned soon after its 2 s deadline, not after the source's minute").isLessThan(20_000);
      assertThat(node.report().dataflows().get(0).state()).isEqualTo("RESTARTING");
    }
  }

  @Test
  void noSnapshotMeansFullReplayAndTheReportSaysSo(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fullReplay()).isTrue();
      assertThat(node.report().toText()).contains("full replay");
      assertThat(node.report().sources().get(0).recordsReplayed()).isEqualTo(LIMIT);
      // the catch-up's ticks, split into reading the source and computing: both ran, within the catch-up's time
      RecoveryReport.CatchUpTicks t = node.report().catchUpTicks();
      assertThat(t.ticks()).isPositive();
      assertThat(t.readingMillis() + t.computingMillis()).isPositive().isLessThanOrEqualTo(node.report().catchUpMillis() + 2);
      assertThat(node.report().toText()).containsPattern("catch-up: +\\d+ ms in \\d+ tick\\(s\\): reading the sources \\d+ ms, computing \\d+ ms");
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
    }
    // second start, still no snapshot: full replay again, same result
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fullReplay()).isTrue();
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
    }
  }

  @Test
  void recoversFromTheSnapshotAndReplaysNothingWhenCaughtUp(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      SnapshotOutcome figures = node.snapshotNow();
      assertThat(figures.rows()).isPositive();
    }
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fullReplay()).isFalse();
      assertThat(node.report().rowsLoaded()).isPositive();
      assertThat(node.report().sources().get(0).recordsReplayed()).isZero();
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
      // the report splits the recovery into its phases, in order, summing to at most the total
      RecoveryReport r = node.report();
      assertThat(r.phaseMillis().keySet())
          .containsExactly("catalog to snapshot", "connect sources", "snapshot load", "restore", "catalog after snapshot", "seek", "catch-up", "report");
      assertThat(r.phaseMillis().values().stream().mapToLong(Long::longValue).sum()).isBetween(r.totalMillis() - 4, r.totalMillis() + 4);
      assertThat(r.toText()).containsPattern("phases: +catalog to snapshot \\d+ ms, connect sources \\d+ ms, snapshot load \\d+ ms");
    }
  }

  @Test
  void intervalAndScaledNumericStateComesBackFromTheSnapshotFieldByField(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    String spans;
    String totals;
    String shown;
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.sql("CREATE MATERIALIZED VIEW spans AS SELECT id, category, INTERVAL '1 month' * (category % 3) - INTERVAL '1 second' * amount"
          + " + INTERVAL '30 days' * (category % 2) AS took, amount * 0.25 AS price FROM gen");
      node.sql("CREATE MATERIALIZED VIEW span_totals AS SELECT category, SUM(took) AS total, MAX(took) AS longest, SUM(price) AS revenue"
          + " FROM spans GROUP BY category");
      node.engine().tickUntilCaughtUp(1000);
      spans = node.engine().peek("spans").toString();
      totals = node.engine().peek("span_totals").toString();
      shown = node.sql("SELECT * FROM span_totals ORDER BY category");
      assertThat(node.snapshotNow().rows()).isPositive();
    }
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fullReplay()).isFalse();
      assertThat(node.report().dataflows()).filteredOn(d -> d.name().startsWith("span"))
          .hasSize(2).allMatch(d -> d.restoredFrom().equals("snapshot"));
      // as text: an INTERVAL keeps its months, days and microseconds (a value's equality would not tell '1 mon' from '30 days')
      assertThat(node.engine().peek("spans").toString()).isEqualTo(spans);
      assertThat(node.engine().peek("span_totals").toString()).isEqualTo(totals);
      assertThat(node.sql("SELECT * FROM span_totals ORDER BY category")).isEqualTo(shown).contains(" year");
      List<String> revenues = shown.lines().filter(l -> l.matches(" *\\d+ +\\|.*")).map(l -> l.substring(l.lastIndexOf('|') + 1).strip()).toList();
      assertThat(revenues).as("SUM of a NUMERIC of scale 2 is shown with 2 decimals").hasSize(5).allMatch(v -> v.matches("-?\\d+\\.\\d\\d"));
    }
  }

  @Test
  void corruptNewestSnapshotFallsBackToThePreviousOneAndSaysWhy(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.snapshotNow();
      node.engine().tick();
      node.sql("CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM gen WHERE amount > 900");
      node.engine().tick();
      node.snapshotNow();
    }
    Path manifests = dir.resolve("store").resolve("snapshots");
    Path newest;
    try (Stream<Path> s = Files.list(manifests)) {
      newest = s.sorted().reduce((a, b) -> b).orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(newest);
    bytes[bytes.length / 2] ^= 0x20;
    Files.write(newest, bytes);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fallbacks()).hasSize(1);
      assertThat(node.report().fallbacks().get(0).snapshot()).contains(newest.getFileName().toString());
      assertThat(node.report().fullReplay()).isFalse();
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
      // the view created after the older snapshot is rebuilt from the catalog
      assertThat(node.engine().peek("big")).isNotEmpty().allMatch(r -> r.getLong(1) > 900);
    }
  }

  @Test
  void aBadBatchFileOfTheNewestSnapshotFallsBackPastAViewDefinedAgainSinceTheOlderOne(@TempDir Path dir) throws IOException {
    // the catalog is replayed to the newest manifest's position while its files load; when a file
    // then fails to verify, the older snapshot (an earlier catalog position, where by_category had
    // another definition) must be restored into an engine that never saw the later entries
    CairnConfig cfg = config(dir);
    Path batches = dir.resolve("store").resolve("batches");
    List<Path> before;
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.snapshotNow();
      before = regularFiles(batches);
      node.sql("DROP VIEW by_category");
      node.sql("CREATE MATERIALIZED VIEW by_category AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen "
          + "WHERE amount > 500 GROUP BY category");
      node.engine().tick();
      node.snapshotNow();
    }
    Path victim = regularFiles(batches).stream().filter(p -> !before.contains(p)).findFirst().orElseThrow();
    byte[] bytes = Files.readAllBytes(victim);
    bytes[bytes.length / 2] ^= 0x20;
    Files.write(victim, bytes);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      RecoveryReport r = node.report();
      assertThat(r.fallbacks()).hasSize(1);
      assertThat(r.fallbacks().get(0).reason()).contains("checksum mismatch");
      assertThat(r.fullReplay()).isFalse();
      assertThat(r.catalogPosition()).isEqualTo(2);
      assertThat(r.phaseMillis()).as("recovery started again on a fresh engine").containsKey("snapshot load (first attempt)");
      assertThat(r.phaseMillis().values().stream().mapToLong(Long::longValue).sum()).isBetween(r.totalMillis() - 4, r.totalMillis() + 4);
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle(500));
      assertThat(node.engine().dataflows()).hasSize(2);
    }
  }

  @Test
  void theSnapshotIsChosenOnlyAfterTheStoreIsTaken(@TempDir Path dir) throws IOException {
    // a snapshot chosen before the fence may be superseded by the old owner, whose next commit then
    // confirms a later LSN to the Postgres slot: the changes in between would be lost (an attempt to
    // load before the fence failed KillRecoveryIT's overlapping deploy exactly so)
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.snapshotNow();
    }
    List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
    try (Node node = Node.recover(cfg, Node.Options.defaults().withStoreDecorator(recordingInto(calls)))) {
      assertThat(node.report().fullReplay()).isFalse();
      List<String> seen = List.copyOf(calls);
      int fenced = -1;
      int listed = -1;
      for (int i = 0; i < seen.size(); i++) {
        if (fenced < 0 && seen.get(i).startsWith("putIfAbsent nodes/")) {
          fenced = i;
        }
        if (listed < 0 && seen.get(i).startsWith("list snapshots")) {
          listed = i;
        }
      }
      assertThat(fenced).as("the store was taken: %s", seen).isNotNegative();
      assertThat(listed).as("the snapshots were listed only after the store was taken: %s", seen).isGreaterThan(fenced);
    }
  }

  /** A store decorator that records each call naming a key or prefix, as "method key", in order. */
  private static java.util.function.UnaryOperator<io.cairn.objectstore.ObjectStore> recordingInto(List<String> calls) {
    return store -> (io.cairn.objectstore.ObjectStore) java.lang.reflect.Proxy.newProxyInstance(
        NodeRecoveryIT.class.getClassLoader(), new Class<?>[] {io.cairn.objectstore.ObjectStore.class}, (proxy, m, args) -> {
          if (args != null && args.length > 0 && args[0] instanceof String k) {
            calls.add(m.getName() + " " + k);
          }
          try {
            return m.invoke(store, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  private static List<Path> regularFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile).sorted().toList();
    }
  }

  @Test
  void aRestartFetchesEachCatalogEntryOnce(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.snapshotNow();
      for (int i = 0; i < 12; i++) {
        node.sql("CREATE MATERIALIZED VIEW v" + i + " AS SELECT id, amount FROM gen WHERE amount > " + (i * 50));
        node.sql("DROP VIEW v" + i);
      }
      node.sql("CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM gen WHERE amount > 900");
      node.engine().tick();
      node.snapshotNow();
    }
    List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
    try (Node node = Node.recover(cfg, Node.Options.defaults().withStoreDecorator(recordingInto(calls)))) {
      Map<String, Integer> gets = new HashMap<>();
      for (String c : List.copyOf(calls)) {
        if (c.startsWith("readAllBytes catalog/") || c.startsWith("get catalog/")) {
          gets.merge(c.substring(c.indexOf(' ') + 1), 1, Integer::sum);
        }
      }
      int entries = 2 + 24 + 1;
      assertThat(node.session().position()).isEqualTo(entries);
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
      assertThat(node.engine().peek("big")).isNotEmpty().allMatch(r -> r.getLong(1) > 900);
      for (int p = 0; p < entries; p++) {
        assertThat(gets.get(io.cairn.snapshotter.catalog.ObjectStoreCatalogLog.key(p))).as("GETs of catalog entry " + p).isEqualTo(1);
      }
      int total = gets.values().stream().mapToInt(Integer::intValue).sum();
      // besides the entries: the first read's last window, and one probe of the end per later read
      assertThat(total).isLessThanOrEqualTo(entries + io.cairn.snapshotter.catalog.ObjectStoreCatalogLog.READ_WINDOW + 4);
    }
  }

  @Test
  void missingBatchFileFallsBackToFullReplayWhenNoOtherSnapshot(@TempDir Path dir) throws IOException {
    CairnConfig cfg = config(dir);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.snapshotNow();
    }
    Path batches = dir.resolve("store").resolve("batches");
    try (Stream<Path> s = Files.walk(batches)) {
      Path victim = s.filter(Files::isRegularFile).findFirst().orElseThrow();
      Files.delete(victim);
    }
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fallbacks()).hasSize(1);
      assertThat(node.report().fullReplay()).isTrue();
      assertThat(node.engine().peek("by_category")).containsExactlyElementsOf(oracle());
    }
  }
}
