package io.cairn.benchmarks.demo;

import io.cairn.objectstore.MeteredObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectStores;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.node.RecoveryReport;
import io.cairn.snapshotter.catalog.ObjectStoreCatalogLog;
import io.cairn.testkit.kafka.KafkaBroker;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * {@code cairn demo}: "up and running in minutes". On the embedded defaults (local object store,
 * the load generator and its view) plus an in-process Kafka broker with a keyed topic of orders
 * and a view over it: ingest, snapshot, produce more, kill, recover from the snapshot, and print
 * the recovery report and what the recovery cost the sources next to a recovery without a
 * snapshot (full replay).
 *
 * <p>Use: {@code new Demo(dir, out).run(recordsBefore, recordsAfter)}; the directory must not hold
 * an earlier demo's store (a fresh subdirectory is used).
 */
public final class Demo {
  /** What the demo measured: the two recoveries and the records produced after the snapshot. */
  public record Outcome(RecoveryReport fromSnapshot, RecoveryReport fullReplay, MeteredObjectStore.Metrics snapshotStore,
      MeteredObjectStore.Metrics fullReplayStore, long recordsInTopic, long recordsAfterSnapshot, long bytesAfterSnapshot,
      io.cairn.node.SnapshotOutcome snapshot, boolean viewsAgree) {}

  private final Path dir;
  private final PrintStream out;

  public Demo(Path dir, PrintStream out) {
    this.dir = dir;
    this.out = out;
  }

  /** Runs the demo: {@code before} records ingested and snapshotted, {@code after} more, then the kill. */
  public Outcome run(int before, int after) {
    if (before <= 0 || after < 0) {
      throw new IllegalArgumentException("Cannot run the demo: records before the snapshot must be > 0 and after >= 0, were "
          + before + " and " + after);
    }
    long t0 = System.nanoTime();
    Path store = dir.resolve("cairn-demo-" + Long.toString(System.currentTimeMillis(), 36));
    try {
      Files.createDirectories(store);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create the demo's store directory " + store + ": " + e.getMessage(), e);
    }
    step(t0, "starting an in-process Kafka broker on 127.0.0.1");
    try (KafkaBroker kafka = KafkaBroker.start()) {
      String topic = kafka.createTopic("demo-orders", 3);
      Random random = new Random(1);
      produce(kafka, topic, random, before);
      List<String> init = new ArrayList<>(CairnConfig.DEFAULT_INIT);
      init.add("CREATE SOURCE kafka_orders FROM KAFKA (brokers = '" + kafka.bootstrapServers() + "', topic = '" + topic + "')"
          + " FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount BIGINT, PRIMARY KEY (id))");
      init.add("CREATE MATERIALIZED VIEW orders_by_customer AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total"
          + " FROM kafka_orders GROUP BY customer");
      CairnConfig defaults = ConfigLoader.load(null, Map.of());
      CairnConfig cfg = with(defaults, uri(store), init);
      step(t0, "cairn node on the embedded defaults (" + store + ") + Kafka topic '" + topic + "' with " + before + " records");
      io.cairn.node.SnapshotOutcome snap;
      List<?> viewBefore;
      try (Node node = Node.recover(cfg, Node.Options.defaults())) {
        step(t0, String.format(Locale.ROOT, "ingested: %,d Kafka records in %,d ms", before, node.report().catchUpMillis()));
        snap = node.snapshotNow();
        step(t0, "snapshot: " + snap.rows() + " rows, " + snap.bytesTotal() + " bytes, upload " + snap.uploadMillis()
            + " ms, pause " + snap.capturePauseMicros() + " µs");
        long[] tail = produce(kafka, topic, random, after);
        while (!node.engine().caughtUp() || offsetSum(node) < before + after) {
          node.engine().tick();
        }
        viewBefore = node.engine().peek("orders_by_customer");
        step(t0, String.format(Locale.ROOT, "produced %,d more records (%,d bytes) after the snapshot; now killing the node", after, tail[1]));
        // closing without a snapshot: what a crash leaves behind
        Path fullStore = dir.resolve(store.getFileName() + "-no-snapshot");
        copyCatalog(store, fullStore);
        AtomicReference<MeteredObjectStore> m1 = new AtomicReference<>();
        AtomicReference<MeteredObjectStore> m2 = new AtomicReference<>();
        node.close();
        RecoveryReport fromSnapshot;
        boolean agree;
        step(t0, "recovering from the snapshot");
        try (Node rec = Node.recover(cfg, Node.Options.defaults().withStoreDecorator(s -> meter(s, m1)))) {
          fromSnapshot = rec.report();
          agree = rec.engine().peek("orders_by_customer").equals(viewBefore);
        }
        out.println();
        out.print(fromSnapshot.toText());
        out.println();
        step(t0, "for comparison: recovering the same catalog without a snapshot (full replay)");
        RecoveryReport full;
        try (Node rec = Node.recover(with(defaults, uri(fullStore), List.of()),
            Node.Options.defaults().withStoreDecorator(s -> meter(s, m2)))) {
          full = rec.report();
          agree &= rec.engine().peek("orders_by_customer").equals(viewBefore);
        }
        Outcome o = new Outcome(fromSnapshot, full, m1.get().metrics(), m2.get().metrics(), before + after, after, tail[1],
            snap, agree);
        printComparison(o);
        step(t0, "done" + (agree ? "; the view is the same after both recoveries and equals the view before the kill"
            : "; WARNING: the views differ after recovery"));
        return o;
      }
    }
  }

  private void printComparison(Outcome o) {
    out.println();
    out.println("load on the sources and the object store during recovery");
    out.printf(Locale.ROOT, "  %-26s %12s %16s %14s %12s %14s %12s%n", "", "recovery ms", "Kafka records", "Kafka bytes",
        "Kafka fetches", "store GETs", "store bytes");
    row("from the snapshot", o.fromSnapshot(), o.snapshotStore());
    row("full replay (no snapshot)", o.fullReplay(), o.fullReplayStore());
    out.printf(Locale.ROOT, "  records produced after the snapshot: %,d (%,d bytes); in the topic: %,d%n", o.recordsAfterSnapshot(),
        o.bytesAfterSnapshot(), o.recordsInTopic());
  }

  private void row(String name, RecoveryReport r, MeteredObjectStore.Metrics m) {
    Map<String, Long> k = r.sources().stream().filter(s -> s.name().equals("kafka_orders")).findFirst()
        .map(RecoveryReport.SourceReport::load).orElse(Map.of());
    out.printf(Locale.ROOT, "  %-26s %,12d %,16d %,14d %,12d %,14d %,12d%n", name, r.totalMillis(), k.getOrDefault("records", 0L),
        k.getOrDefault("bytes", 0L), k.getOrDefault("fetch_requests", 0L), m.getClassRequests(), m.bytesOut());
  }

  private void step(long t0, String what) {
    out.printf(Locale.ROOT, "[%5.1f s] %s%n", (System.nanoTime() - t0) / 1e9, what);
  }

  private static ObjectStore meter(ObjectStore s, AtomicReference<MeteredObjectStore> ref) {
    MeteredObjectStore m = new MeteredObjectStore(s);
    ref.set(m);
    return m;
  }

  private static long offsetSum(Node node) {
    var o = node.engine().offsets().get("kafka_orders");
    return o == null ? 0 : o.values().values().stream().mapToLong(Long::parseLong).sum();
  }

  /** Produces {@code n} upserts/tombstones; returns {records, key+value bytes}. */
  private static long[] produce(KafkaBroker kafka, String topic, Random random, int n) {
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>();
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      long id = random.nextInt(20_000);
      byte[] key = ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
      byte[] value = random.nextInt(20) == 0 ? null
          : String.format(Locale.ROOT, "{\"id\":%d,\"customer\":%d,\"amount\":%d}", id, random.nextInt(500), 1 + random.nextInt(1000))
              .getBytes(StandardCharsets.UTF_8);
      bytes += key.length + (value == null ? 0 : value.length);
      batch.add(new ProducerRecord<>(topic, (int) (id % 3), key, value));
      if (batch.size() == 10_000) {
        kafka.produceAll(batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      kafka.produceAll(batch);
    }
    return new long[] {n, bytes};
  }

  private static CairnConfig with(CairnConfig d, String storeUri, List<String> init) {
    return new CairnConfig(storeUri, d.storeProperties(), d.workers(), d.tickMaxRecords(), d.tickMaxDuration(), d.snapshotCron(),
        d.snapshotZone(), d.keepLast(), d.keepDailyDays(), d.gcGrace(), d.httpHost(), 0, d.catchUpRateLimit(), init);
  }

  private static String uri(Path dir) {
    return dir.toAbsolutePath().toUri().toString().replaceFirst("^file:/+", "file:///") + "?create=true";
  }

  private static void copyCatalog(Path from, Path to) {
    try (ObjectStore a = ObjectStores.open(uri(from)); ObjectStore b = ObjectStores.open(uri(to))) {
      for (ObjectInfo o : a.list(ObjectStoreCatalogLog.PREFIX)) {
        b.put(o.key(), a.readAllBytes(o.key()));
      }
    }
  }
}
