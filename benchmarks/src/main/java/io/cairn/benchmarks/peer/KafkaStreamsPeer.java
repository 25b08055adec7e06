package io.cairn.benchmarks.peer;

import io.cairn.benchmarks.peer.PeerSerdes.Order;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peer system of the comparison: the keyed aggregation "per customer: {@code COUNT(*)},
 * {@code SUM(amount)} over the latest value per id" in Kafka Streams, with the measurements of
 * issue 8 (steady-state throughput; kill and restore from the changelog topics).
 *
 * <p>Topology: {@code table(input)} (store {@value #ORDERS_STORE}, key = the raw key bytes, value =
 * customer and amount) → {@code groupBy(customer)} (repartition topic {@value #BY_CUSTOMER}) →
 * {@code aggregate(count + 1, sum + amount; count - 1, sum - amount)} (store {@value #AGG_STORE}).
 * Both stores are logged to changelog topics {@code <application.id>-<store>-changelog} (with
 * {@link PeerConfig#optimizeTopology()} the orders store uses the input topic instead). Sums are
 * exact decimals. Tombstones delete the id's order. Records whose value is not an order make the
 * application fail (Kafka Streams' default log-and-fail handler); the waits then throw.
 *
 * <p>Use:
 * <pre>{@code
 * try (KafkaStreamsPeer peer = KafkaStreamsPeer.create(PeerConfig.defaults(bootstrap, topic, "peer-" + UUID.randomUUID()))) {
 *   ThroughputMeasurement t = peer.processFromBeginning();
 *   Map<String, CustomerAggregate> before = peer.aggregate();
 *   RestoreMeasurement r = peer.killAndRestore(true);   // true: wipe local state (lost node)
 *   Map<String, CustomerAggregate> after = peer.aggregate();
 *   PeerResult result = peer.result(t, r);
 * }
 * }</pre>
 *
 * <p>"Kill": {@code KafkaStreams.close} with a zero timeout and {@code LEAVE_GROUP}. The old
 * instance's threads still finish their shutdown in the background (Kafka Streams cannot be
 * aborted in-process); the peer waits for them before it wipes the state directory and starts the
 * new instance, and the wait is not counted. Leaving the group spares the new instance the wait
 * for the dead member's session timeout ({@code session.timeout.ms}, 45 s by default), which a real
 * crash would cost: the restore time measured here is a lower bound for a crashed node. Without
 * wiping, RocksDB stores keep the checkpoint written at that shutdown and restore little or
 * nothing (a restart on the same host); in-memory stores always restore fully.
 *
 * <p>"Caught up" means: every input partition and every repartition partition has a committed
 * offset of the application's group at its end offset, read with the admin client every 20 ms, so
 * measured times include up to one {@link PeerConfig#commitInterval()}.
 *
 * <p>What it owns: the {@link PeerConfig}; the admin client (client id {@code
 * <application.id>-peer-admin}) it reads offsets, committed offsets, topics and log directories
 * with; the state directory parent (a temporary one it deletes on {@link #close()} when the config
 * names none, else the caller's, which it keeps); and at most one running {@code Instance}: a
 * {@link KafkaStreams} with its restore bookkeeping (the partitions restoring and restored, the
 * records restored, its first RUNNING time, its first uncaught failure).
 *
 * <p>Threading: not thread-safe; one caller thread drives it, and every wait runs on that thread,
 * polling every {@code POLL} (20 ms). Kafka Streams' own threads run the topology and call the
 * instance's state listener, restore listener and uncaught-exception handler; those write only
 * atomics and concurrent sets of the {@code Instance}, which the caller's thread reads.
 *
 * <p>Invariants and failure:
 *
 * <ul>
 *   <li>{@code current} is the one running instance or null: {@link #processFromBeginning()}
 *       refuses to start a second one, {@link #killAndRestore} clears it before killing and sets
 *       the new one, {@link #aggregate()} needs one.
 *   <li>Measured times start when {@code KafkaStreams.start} is called and end when the wait that
 *       follows is done; the wait for a killed instance's threads to stop and the wipe of its state
 *       directory fall outside them.
 *   <li>Every wait and every admin call is bounded by {@link PeerConfig#timeout()} and fails with
 *       an {@link IllegalStateException} "Cannot X: reason" that names the application and the
 *       bootstrap servers; a wait fails at once when the instance's stream thread failed or it is
 *       ERROR, PENDING_ERROR or NOT_RUNNING (an uncaught exception shuts the client down).
 *   <li>The CPU figures count the live threads whose name contains the application id, except the
 *       peer's own admin client.
 *   <li>After {@link #close()} (idempotent; a running instance is closed cleanly, leaving the group)
 *       the measurements and reads throw {@link IllegalStateException}.
 * </ul>
 *
 * <p>Where the parts are, in order: {@link #create}; the measurements ({@link
 * #processFromBeginning()}, {@link #killAndRestore}); reads ({@link #aggregate()}, {@link
 * #internalTopics()}, {@link #awaitChangelogCompaction}, {@link #result}); {@link #close()}; then
 * the topology and its properties, starting an instance, the restored and caught-up waits, admin
 * helpers (partitions, offsets, bounded gets), the CPU count, and the {@code Instance} class.
 */
public final class KafkaStreamsPeer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaStreamsPeer.class);
  static final String ORDERS_STORE = "peer-orders";
  static final String BY_CUSTOMER = "peer-by-customer";
  static final String AGG_STORE = "peer-customer-agg";
  private static final Duration POLL = Duration.ofMillis(20);
  private static final String PEER_ADMIN_SUFFIX = "-peer-admin";

  private final PeerConfig config;
  private final Path stateParent;
  private final boolean ownsStateDir;
  private final Admin admin;
  private Instance current;
  private boolean closed;

  private KafkaStreamsPeer(PeerConfig config, Path stateParent, boolean ownsStateDir, Admin admin) {
    this.config = config;
    this.stateParent = stateParent;
    this.ownsStateDir = ownsStateDir;
    this.admin = admin;
  }

  /** A peer for {@code config}; nothing runs until {@link #processFromBeginning()}. */
  public static KafkaStreamsPeer create(PeerConfig config) {
    Path dir = config.stateDir();
    boolean owns = dir == null;
    try {
      dir = owns ? Files.createTempDirectory("cairn-peer-streams-") : Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot create the Kafka Streams state directory " + dir + ": " + e.getMessage(), e);
    }
    Map<String, Object> props = new HashMap<>();
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, config.applicationId() + PEER_ADMIN_SUFFIX);
    return new KafkaStreamsPeer(config, dir, owns, Admin.create(props));
  }

  /** The Kafka Streams library version on the classpath. */
  public static String kafkaStreamsVersion() {
    return AppInfoParser.getVersion();
  }

  /** The configuration this peer runs with. */
  public PeerConfig config() {
    return config;
  }

  /**
   * Starts the application (its group must have no committed offsets: use a fresh application id)
   * and waits until it has processed the whole input as it is now.
   *
   * @throws IllegalStateException if an instance already runs, the input topic does not exist, the
   *     application fails, or it is not caught up within the timeout
   */
  public ThroughputMeasurement processFromBeginning() {
    requireOpen("process the input");
    if (current != null) {
      throw new IllegalStateException("Cannot process from the beginning: application " + config.applicationId() + " already runs");
    }
    Map<TopicPartition, Long> start = offsets(inputPartitions(), OffsetSpec.earliest());
    Map<TopicPartition, Long> end = offsets(start.keySet(), OffsetSpec.latest());
    long inputRecords = start.keySet().stream().mapToLong(tp -> end.get(tp) - start.get(tp)).sum();
    Instance inst = startInstance();
    awaitCaughtUp(inst, end, "process the input");
    long elapsed = inst.millisSinceStart();
    Map<String, Long> main = inst.consumerTotals("-consumer");
    ThroughputMeasurement m = new ThroughputMeasurement(inputRecords, inst.startupMillis(), elapsed,
        elapsed == 0 ? inputRecords * 1000.0 : inputRecords * 1000.0 / elapsed,
        main.get("records"), main.get("bytes"), cpuMillisOfApplicationThreads());
    LOG.info("Kafka Streams peer processed {} records in {} ms ({} records/s)", inputRecords, elapsed, Math.round(m.recordsPerSecond()));
    return m;
  }

  /**
   * Kills the running instance (see the class comment), optionally wipes its local state, starts a
   * new instance with the same application id and waits until its stores are restored and it has
   * caught up with the input's end offsets as of the kill.
   *
   * @param wipeLocalState delete the local state directory (a lost node / new host) before starting
   * @throws IllegalStateException if no instance runs, or the new one fails or times out
   */
  public RestoreMeasurement killAndRestore(boolean wipeLocalState) {
    requireOpen("kill and restore");
    Instance old = requireRunning("kill and restore");
    current = null;
    old.streams.close(CloseOptions.timeout(Duration.ZERO)
        .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
    await(() -> old.streams.state() == KafkaStreams.State.NOT_RUNNING || old.streams.state() == KafkaStreams.State.ERROR,
        "stop the killed instance of " + config.applicationId(), null);
    if (wipeLocalState) {
      deleteRecursively(appStateDir());
    }
    List<ChangelogTopic> changelogs = internalTopics().stream().filter(t -> t.name().endsWith("-changelog")).toList();
    Map<TopicPartition, Long> end = offsets(inputPartitions(), OffsetSpec.latest());

    Instance inst = startInstance();
    awaitRestored(inst, wipeLocalState);
    awaitCaughtUp(inst, end, "restore");
    long elapsed = inst.millisSinceStart();
    Map<String, Long> restore = inst.consumerTotals("-restore-consumer");
    Map<String, Long> main = inst.consumerTotals("-consumer");
    RestoreMeasurement m = new RestoreMeasurement(wipeLocalState, elapsed, inst.restoredRecords.get(),
        restore.get("records"), restore.get("bytes"), main.get("records"), main.get("bytes"), changelogs,
        cpuMillisOfApplicationThreads());
    LOG.info("Kafka Streams peer restored {} records ({} bytes fetched) in {} ms, wipe={}", m.restoredRecords(),
        m.restoreConsumerBytes(), elapsed, wipeLocalState);
    return m;
  }

  /**
   * The current result of the running instance: customer → (count, sum), leaving out customers
   * with no current order (count 0), like SQL's {@code GROUP BY}. Read through interactive queries;
   * call it when the peer has caught up.
   */
  public Map<String, CustomerAggregate> aggregate() {
    requireOpen("read the aggregate");
    Instance inst = requireRunning("read the aggregate");
    ReadOnlyKeyValueStore<String, CustomerAggregate> store = inst.streams.store(
        StoreQueryParameters.fromNameAndType(AGG_STORE, QueryableStoreTypes.<String, CustomerAggregate>keyValueStore()));
    Map<String, CustomerAggregate> out = new TreeMap<>();
    try (KeyValueIterator<String, CustomerAggregate> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, CustomerAggregate> kv = it.next();
        if (kv.value != null && kv.value.count() > 0) {
          out.put(kv.key, kv.value);
        }
      }
    }
    return out;
  }

  /**
   * The application's internal topics (changelogs and the repartition topic), sorted by name, with
   * their record counts (end minus start offsets) and on-disk sizes.
   */
  public List<ChangelogTopic> internalTopics() {
    requireOpen("describe the internal topics");
    String prefix = config.applicationId() + "-";
    Set<String> names = get(admin.listTopics().names(), "list topics").stream()
        .filter(n -> n.startsWith(prefix) && (n.endsWith("-changelog") || n.endsWith("-repartition")))
        .collect(Collectors.toSet());
    if (names.isEmpty()) {
      return List.of();
    }
    Map<String, TopicDescription> desc = get(admin.describeTopics(names).allTopicNames(), "describe topics " + names);
    List<TopicPartition> tps = desc.values().stream()
        .flatMap(d -> d.partitions().stream().map(p -> new TopicPartition(d.name(), p.partition()))).toList();
    Map<TopicPartition, Long> start = offsets(tps, OffsetSpec.earliest());
    Map<TopicPartition, Long> end = offsets(tps, OffsetSpec.latest());
    Map<TopicPartition, Long> size = new HashMap<>();
    Set<Integer> brokers = desc.values().stream().flatMap(d -> d.partitions().stream())
        .filter(p -> p.leader() != null).map(p -> p.leader().id()).collect(Collectors.toSet());
    Map<Integer, Map<String, LogDirDescription>> dirs = get(admin.describeLogDirs(brokers).allDescriptions(), "describe log dirs");
    for (Map<String, LogDirDescription> byDir : dirs.values()) {
      for (LogDirDescription d : byDir.values()) {
        for (Map.Entry<TopicPartition, ReplicaInfo> e : d.replicaInfos().entrySet()) {
          if (names.contains(e.getKey().topic())) {
            size.merge(e.getKey(), e.getValue().size(), Math::max);
          }
        }
      }
    }
    List<ChangelogTopic> out = new ArrayList<>();
    for (String name : names) {
      long records = 0;
      long bytes = 0;
      for (TopicPartition tp : tps) {
        if (tp.topic().equals(name)) {
          records += end.get(tp) - start.get(tp);
          bytes += size.getOrDefault(tp, 0L);
        }
      }
      out.add(new ChangelogTopic(name, records, bytes));
    }
    out.sort(Comparator.comparing(ChangelogTopic::name));
    return out;
  }

  /**
   * Waits until the broker has stopped shrinking the changelog topics: their total on-disk size
   * stays the same for {@code quiet} (choose it longer than the broker's
   * {@code log.cleaner.backoff.ms}, 15 s by default), or {@code max} has passed. Only useful with
   * {@link PeerConfig#internalTopicConfigs()} that let the log cleaner work on a short run (small
   * {@code segment.bytes}, low {@code min.cleanable.dirty.ratio}). Returns the changelogs then.
   */
  public List<ChangelogTopic> awaitChangelogCompaction(Duration quiet, Duration max) {
    requireOpen("wait for changelog compaction");
    long deadline = System.nanoTime() + max.toNanos();
    long lastBytes = -1;
    long stableSince = System.nanoTime();
    while (true) {
      List<ChangelogTopic> now = internalTopics().stream().filter(t -> t.name().endsWith("-changelog")).toList();
      long bytes = now.stream().mapToLong(ChangelogTopic::bytes).sum();
      if (bytes != lastBytes) {
        lastBytes = bytes;
        stableSince = System.nanoTime();
      } else if (System.nanoTime() - stableSince >= quiet.toNanos()) {
        return now;
      }
      if (System.nanoTime() > deadline) {
        LOG.warn("Changelogs of {} still changing after {}; going on", config.applicationId(), max);
        return now;
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot wait for changelog compaction: interrupted", e);
      }
    }
  }

  /** Bundles two measurements of this peer with its settings and current internal topics. */
  public PeerResult result(ThroughputMeasurement throughput, RestoreMeasurement restore) {
    return new PeerResult(kafkaStreamsVersion(), config.storeType(), config.streamThreads(), config.commitInterval().toMillis(),
        config.optimizeTopology(), throughput, restore, internalTopics(), config.internalTopicConfigs());
  }

  /** Closes the running instance (cleanly), the admin client, and deletes a temporary state directory. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (current != null) {
        current.streams.close(CloseOptions.timeout(config.timeout())
            .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP));
        current = null;
      }
    } finally {
      try {
        admin.close(Duration.ofSeconds(5));
      } finally {
        if (ownsStateDir) {
          deleteRecursively(stateParent);
        }
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  /** The topology; package-private for tests. */
  Topology topology(Properties props) {
    StreamsBuilder b = new StreamsBuilder();
    KTable<Bytes, Order> orders = b.table(config.inputTopic(), Consumed.with(Serdes.Bytes(), PeerSerdes.order()),
        Materialized.<Bytes, Order>as(storeSupplier(ORDERS_STORE)).withKeySerde(Serdes.Bytes()).withValueSerde(PeerSerdes.order()));
    orders.groupBy((id, order) -> KeyValue.pair(order.customer(), order.amount()),
            Grouped.with(BY_CUSTOMER, Serdes.String(), PeerSerdes.amount()))
        .aggregate(() -> CustomerAggregate.ZERO,
            (customer, amount, agg) -> agg.plus(amount),
            (customer, amount, agg) -> agg.minus(amount),
            Materialized.<String, CustomerAggregate>as(storeSupplier(AGG_STORE))
                .withKeySerde(Serdes.String()).withValueSerde(PeerSerdes.aggregate()));
    return b.build(props);
  }

  private KeyValueBytesStoreSupplier storeSupplier(String name) {
    return config.storeType() == StoreType.ROCKSDB ? Stores.persistentKeyValueStore(name) : Stores.inMemoryKeyValueStore(name);
  }

  private Properties streamsProperties() {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, config.applicationId());
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrapServers());
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateParent.toString());
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, config.streamThreads());
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, config.commitInterval().toMillis());
    p.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, config.optimizeTopology() ? StreamsConfig.OPTIMIZE : StreamsConfig.NO_OPTIMIZATION);
    p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
    config.internalTopicConfigs().forEach((k, v) -> p.put(StreamsConfig.topicPrefix(k), v));
    return p;
  }

  private Instance startInstance() {
    Properties props = streamsProperties();
    KafkaStreams streams = new KafkaStreams(topology(props), props);
    Instance inst = new Instance(streams);
    streams.setStateListener((now, before) -> {
      if (now == KafkaStreams.State.RUNNING) {
        inst.firstRunning.compareAndSet(0, System.nanoTime());
      }
    });
    streams.setGlobalStateRestoreListener(inst);
    streams.setUncaughtExceptionHandler(e -> {
      inst.failure.compareAndSet(null, e);
      return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
    });
    current = inst;
    inst.startNanos = System.nanoTime();
    streams.start();
    return inst;
  }

  /**
   * Restored: RUNNING, no store partition between onRestoreStart and onRestoreEnd, and when the
   * local state was wiped (or stores are in memory) every non-empty changelog partition restored.
   */
  private void awaitRestored(Instance inst, boolean wiped) {
    await(() -> {
      if (inst.streams.state() != KafkaStreams.State.RUNNING || !inst.restoring.isEmpty()) {
        return false;
      }
      if (!storesQueryable(inst)) {
        return false;
      }
      if (!wiped && config.storeType() == StoreType.ROCKSDB) {
        return true;
      }
      return inst.restored.containsAll(nonEmptyChangelogPartitions());
    }, "restore application " + config.applicationId(), inst);
  }

  /** Interactive queries refuse stores of tasks that are still restoring (stale stores not enabled). */
  private boolean storesQueryable(Instance inst) {
    try {
      inst.streams.store(StoreQueryParameters.fromNameAndType(AGG_STORE, QueryableStoreTypes.keyValueStore()));
      inst.streams.store(StoreQueryParameters.fromNameAndType(ORDERS_STORE, QueryableStoreTypes.keyValueStore()));
      return true;
    } catch (InvalidStateStoreException e) {
      return false;
    }
  }

  private Set<TopicPartition> nonEmptyChangelogPartitions() {
    String prefix = config.applicationId() + "-";
    Set<String> names = get(admin.listTopics().names(), "list topics").stream()
        .filter(n -> n.startsWith(prefix) && n.endsWith("-changelog")).collect(Collectors.toSet());
    if (names.isEmpty()) {
      return Set.of();
    }
    List<TopicPartition> tps = get(admin.describeTopics(names).allTopicNames(), "describe changelogs").values().stream()
        .flatMap(d -> d.partitions().stream().map(p -> new TopicPartition(d.name(), p.partition()))).toList();
    Map<TopicPartition, Long> start = offsets(tps, OffsetSpec.earliest());
    Map<TopicPartition, Long> end = offsets(tps, OffsetSpec.latest());
    return tps.stream().filter(tp -> end.get(tp) > start.get(tp)).collect(Collectors.toSet());
  }

  /** Committed offsets at the given input end offsets and at the repartition topic's current end. */
  private void awaitCaughtUp(Instance inst, Map<TopicPartition, Long> inputEnd, String what) {
    String repartition = config.applicationId() + "-" + BY_CUSTOMER + "-repartition";
    await(() -> {
      if (inst.streams.state() != KafkaStreams.State.RUNNING) {
        return false;
      }
      Map<TopicPartition, OffsetAndMetadata> committed = get(
          admin.listConsumerGroupOffsets(config.applicationId()).partitionsToOffsetAndMetadata(), "list committed offsets");
      for (Map.Entry<TopicPartition, Long> e : inputEnd.entrySet()) {
        if (e.getValue() > 0 && committedOffset(committed, e.getKey()) < e.getValue()) {
          return false;
        }
      }
      List<TopicPartition> rp = partitionsOf(repartition);
      Map<TopicPartition, Long> rEnd = offsets(rp, OffsetSpec.latest());
      return rp.stream().allMatch(tp -> rEnd.get(tp) == 0 || committedOffset(committed, tp) >= rEnd.get(tp));
    }, what + " (application " + config.applicationId() + ")", inst);
  }

  private static long committedOffset(Map<TopicPartition, OffsetAndMetadata> committed, TopicPartition tp) {
    OffsetAndMetadata o = committed.get(tp);
    return o == null ? -1 : o.offset();
  }

  private List<TopicPartition> inputPartitions() {
    List<TopicPartition> tps = partitionsOf(config.inputTopic());
    if (tps.isEmpty()) {
      throw new IllegalStateException("Cannot run the Kafka Streams peer: input topic " + config.inputTopic() + " does not exist at "
          + config.bootstrapServers());
    }
    return tps;
  }

  private List<TopicPartition> partitionsOf(String topic) {
    Set<String> names = get(admin.listTopics().names(), "list topics");
    if (!names.contains(topic)) {
      return List.of();
    }
    TopicDescription d = get(admin.describeTopics(List.of(topic)).allTopicNames(), "describe topic " + topic).get(topic);
    return d.partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList();
  }

  private Map<TopicPartition, Long> offsets(java.util.Collection<TopicPartition> tps, OffsetSpec spec) {
    if (tps.isEmpty()) {
      return Map.of();
    }
    Map<TopicPartition, OffsetSpec> req = new HashMap<>();
    tps.forEach(tp -> req.put(tp, spec));
    Map<TopicPartition, Long> out = new HashMap<>();
    get(admin.listOffsets(req).all(), "list offsets").forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  private void await(BooleanSupplier done, String what, Instance inst) {
    long deadline = System.nanoTime() + config.timeout().toNanos();
    while (true) {
      if (inst != null) {
        Throwable f = inst.failure.get();
        if (f != null) {
          throw new IllegalStateException("Cannot " + what + ": Kafka Streams failed: " + f, f);
        }
        KafkaStreams.State s = inst.streams.state();
        if (s == KafkaStreams.State.ERROR || s == KafkaStreams.State.NOT_RUNNING || s == KafkaStreams.State.PENDING_ERROR) {
          throw new IllegalStateException("Cannot " + what + ": Kafka Streams is " + s);
        }
      }
      if (done.getAsBoolean()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Cannot " + what + ": not done after " + config.timeout());
      }
      try {
        Thread.sleep(POLL.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot " + what + ": interrupted", e);
      }
    }
  }

  private <T> T get(org.apache.kafka.common.KafkaFuture<T> f, String what) {
    try {
      return f.get(config.timeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot " + what + ": interrupted", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot " + what + " at " + config.bootstrapServers() + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("Cannot " + what + " at " + config.bootstrapServers() + ": no answer within " + config.timeout(), e);
    }
  }

  /**
   * CPU time of the live threads whose name contains the application id: Kafka Streams names its
   * threads and its clients' network threads after the client id, which starts with it. The
   * peer's own admin client (which polls offsets) is left out.
   */
  private long cpuMillisOfApplicationThreads() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    if (!mx.isThreadCpuTimeSupported() || !mx.isThreadCpuTimeEnabled()) {
      return -1;
    }
    long nanos = 0;
    for (ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
      String name = info == null ? "" : info.getThreadName();
      if (name.contains(config.applicationId()) && !name.endsWith(PEER_ADMIN_SUFFIX)) {
        long t = mx.getThreadCpuTime(info.getThreadId());
        nanos += Math.max(0, t);
      }
    }
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  private Path appStateDir() {
    return stateParent.resolve(config.applicationId());
  }

  private Instance requireRunning(String what) {
    if (current == null) {
      throw new IllegalStateException("Cannot " + what + ": application " + config.applicationId() + " does not run");
    }
    return current;
  }

  private void requireOpen(String what) {
    if (closed) {
      throw new IllegalStateException("Cannot " + what + ": the Kafka Streams peer is closed");
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot delete the Kafka Streams state directory " + dir + ": " + e.getMessage(), e);
    }
  }

  /** One KafkaStreams instance with its restore bookkeeping. */
  private static final class Instance implements StateRestoreListener {
    final KafkaStreams streams;
    final AtomicLong firstRunning = new AtomicLong();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final Set<TopicPartition> restoring = ConcurrentHashMap.newKeySet();
    final Set<TopicPartition> restored = ConcurrentHashMap.newKeySet();
    final AtomicLong restoredRecords = new AtomicLong();
    volatile long startNanos;

    Instance(KafkaStreams streams) {
      this.streams = streams;
    }

    @Override
    public void onRestoreStart(TopicPartition tp, String store, long startingOffset, long endingOffset) {
      restoring.add(tp);
      LOG.debug("Restore of {} from {} started at offset {} (end {})", store, tp, startingOffset, endingOffset);
    }

    @Override
    public void onBatchRestored(TopicPartition tp, String store, long batchEndOffset, long numRestored) {
    }

    @Override
    public void onRestoreEnd(TopicPartition tp, String store, long totalRestored) {
      restoredRecords.addAndGet(totalRestored);
      restored.add(tp);
      restoring.remove(tp);
      LOG.debug("Restore of {} from {} ended: {} records", store, tp, totalRestored);
    }

    long millisSinceStart() {
      return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    long startupMillis() {
      long r = firstRunning.get();
      return r == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(r - startNanos);
    }

    /** records-consumed-total and bytes-consumed-total of the consumers whose client id ends with {@code suffix}. */
    Map<String, Long> consumerTotals(String suffix) {
      long records = 0;
      long bytes = 0;
      for (Map.Entry<MetricName, ? extends Metric> e : streams.metrics().entrySet()) {
        MetricName n = e.getKey();
        String client = n.tags().get("client-id");
        if (!"consumer-fetch-manager-metrics".equals(n.group()) || n.tags().containsKey("topic") || client == null
            || !client.endsWith(suffix) || (suffix.equals("-consumer") && client.endsWith("-restore-consumer"))) {
          continue;
        }
        Object v = e.getValue().metricValue();
        long value = v instanceof Number num ? Math.round(num.doubleValue()) : 0;
        if (n.name().equals("records-consumed-total")) {
          records += value;
        } else if (n.name().equals("bytes-consumed-total")) {
          bytes += value;
        }
      }
      return Map.of("records", records, "bytes", bytes);
    }
  }
}
