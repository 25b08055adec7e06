package io.cairn.benchmarks.peer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.cairn.testkit.kafka.KafkaBroker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

/**
 * The Kafka Streams side of the peer comparison, end to end on an in-process broker: produce an
 * {@link UpsertWorkload}, process it from the beginning (throughput), check the aggregate against
 * the oracle, kill and restore (restore time and bytes), check again, print a JSON report.
 *
 * <p>Run (after {@code mvn -B -q -pl benchmarks -am package -DskipTests}):
 * <pre>
 * java -cp "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *   io.cairn.benchmarks.peer.KafkaStreamsPeerBenchmark --records=500000 --ids=100000 --customers=1000 \
 *   --partitions=2 --store=rocksdb --wipe=true --threads=2 --out=target/peer.json
 * </pre>
 * Options (defaults): {@code --records} (500000), {@code --ids} (100000), {@code --customers} (1000),
 * {@code --tombstones} (0.05), {@code --partitions} (2), {@code --store} ({@code rocksdb} or
 * {@code in_memory}), {@code --wipe} (true), {@code --threads} (available processors),
 * {@code --commit-ms} (100), {@code --optimize} (false), {@code --seed} (42),
 * {@code --changelog-segment-bytes} (0: broker default; otherwise internal topics get this
 * {@code segment.bytes} and {@code min.cleanable.dirty.ratio=0.01}, and the kill waits until the
 * changelogs' size has been stable for 20 s, so that the restore reads compacted changelogs),
 * {@code --out} (none: stdout only). Exits with status 1 when an aggregate differs from the oracle.
 */
public final class KafkaStreamsPeerBenchmark {
  private KafkaStreamsPeerBenchmark() {
  }

  public static void main(String[] args) throws IOException {
    Map<String, String> opts = parse(args);
    int records = Integer.parseInt(opts.getOrDefault("records", "500000"));
    int ids = Integer.parseInt(opts.getOrDefault("ids", "100000"));
    int customers = Integer.parseInt(opts.getOrDefault("customers", "1000"));
    double tombstones = Double.parseDouble(opts.getOrDefault("tombstones", "0.05"));
    int partitions = Integer.parseInt(opts.getOrDefault("partitions", "2"));
    StoreType store = StoreType.valueOf(opts.getOrDefault("store", "rocksdb").toUpperCase(Locale.ROOT));
    boolean wipe = Boolean.parseBoolean(opts.getOrDefault("wipe", "true"));
    int threads = Integer.parseInt(opts.getOrDefault("threads", String.valueOf(Runtime.getRuntime().availableProcessors())));
    long commitMs = Long.parseLong(opts.getOrDefault("commit-ms", "100"));
    boolean optimize = Boolean.parseBoolean(opts.getOrDefault("optimize", "false"));
    long seed = Long.parseLong(opts.getOrDefault("seed", "42"));
    long segmentBytes = Long.parseLong(opts.getOrDefault("changelog-segment-bytes", "0"));
    Map<String, String> topicConfigs = segmentBytes <= 0 ? Map.of()
        : Map.of("segment.bytes", String.valueOf(segmentBytes), "min.cleanable.dirty.ratio", "0.01");

    UpsertWorkload workload = new UpsertWorkload(seed, records, ids, customers, tombstones);
    ObjectNode report;
    boolean ok;
    try (KafkaBroker broker = KafkaBroker.start()) {
      String topic = broker.createTopic(KafkaBroker.uniqueTopic("peer-orders"), partitions);
      long t0 = System.nanoTime();
      workload.produceTo(broker, topic, partitions);
      long produceMs = (System.nanoTime() - t0) / 1_000_000;
      Map<String, CustomerAggregate> oracle = workload.oracle();
      // reference point under the same machine load: a plain consumer reading the whole input once
      long r0 = System.nanoTime();
      int read = broker.readAll(topic).size();
      long readMs = Math.max(1, (System.nanoTime() - r0) / 1_000_000);
      String loadBefore = loadAverage();

      PeerConfig config = PeerConfig.defaults(broker.bootstrapServers(), topic, "peer-" + UUID.randomUUID())
          .withStoreType(store).withStreamThreads(threads)
          .withCommitInterval(java.time.Duration.ofMillis(commitMs)).withOptimizeTopology(optimize)
          .withInternalTopicConfigs(topicConfigs);
      try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(config)) {
        ThroughputMeasurement throughput = peer.processFromBeginning();
        boolean before = UpsertWorkload.sameResult(peer.aggregate(), oracle);
        if (segmentBytes > 0) {
          peer.awaitChangelogCompaction(java.time.Duration.ofSeconds(20), java.time.Duration.ofMinutes(3));
        }
        RestoreMeasurement restore = peer.killAndRestore(wipe);
        boolean after = UpsertWorkload.sameResult(peer.aggregate(), oracle);
        PeerResult result = peer.result(throughput, restore);
        ok = before && after;

        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        report = json.createObjectNode();
        ObjectNode w = report.putObject("workload");
        w.put("records", records).put("ids", ids).put("customers", customers).put("tombstoneRate", tombstones)
            .put("partitions", partitions).put("seed", seed).put("produceMillis", produceMs)
            .put("inputBytesOnDisk", inputBytes(broker, topic))
            .put("plainConsumerReadMillis", readMs).put("plainConsumerRecordsPerSecond", read * 1000L / readMs);
        report.put("machine", "nproc=" + Runtime.getRuntime().availableProcessors() + ", java " + System.getProperty("java.version")
            + " (" + System.getProperty("java.vm.name") + "), maxHeap=" + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB");
        report.put("loadAverageBefore", loadBefore).put("loadAverageAfter", loadAverage());
        report.put("aggregateMatchesOracleBeforeKill", before);
        report.put("aggregateMatchesOracleAfterRestore", after);
        report.put("customersInOracle", oracle.size());
        report.set("result", json.valueToTree(result));
        String text = json.writeValueAsString(report);
        System.out.println(text);
        if (opts.containsKey("out")) {
          Path out = Path.of(opts.get("out"));
          if (out.getParent() != null) {
            Files.createDirectories(out.getParent());
          }
          Files.writeString(out, text + "\n");
        }
      }
    }
    if (!ok) {
      System.err.println("Kafka Streams peer: the aggregate differs from the oracle");
      System.exit(1);
    }
  }

  /** The 1/5/15-minute load averages from /proc/loadavg, or "unknown". */
  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  private static long inputBytes(KafkaBroker broker, String topic) {
    try {
      return broker.admin().describeLogDirs(java.util.List.of(1)).allDescriptions().get().values().stream()
          .flatMap(m -> m.values().stream())
          .flatMap(d -> d.replicaInfos().entrySet().stream())
          .filter(e -> e.getKey().topic().equals(topic))
          .mapToLong(e -> e.getValue().size()).sum();
    } catch (Exception e) {
      throw new IllegalStateException("Cannot describe the input topic's size: " + e, e);
    }
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String a : args) {
      if (!a.startsWith("--") || !a.contains("=")) {
        throw new IllegalArgumentException("Cannot parse argument '" + a + "': expected --name=value");
      }
      out.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
    }
    return out;
  }
}
