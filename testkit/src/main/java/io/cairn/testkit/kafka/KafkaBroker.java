package io.cairn.testkit.kafka;

import io.cairn.testkit.FreePort;
import io.cairn.testkit.TempDirs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real single-node Kafka broker (KRaft, combined broker + controller) for tests and benchmarks,
 * listening on 127.0.0.1 only: in this JVM ({@link #start()}, {@link #shared()}) or in a child JVM
 * ({@link #startInChildJvm()}).
 *
 * <pre>{@code
 * KafkaBroker broker = KafkaBroker.shared();
 * String topic = broker.createTopic(KafkaBroker.uniqueTopic("orders"), 3);
 * broker.produce(topic, 0, "{\"id\":1}", "{\"id\":1,\"qty\":2}");
 * String bootstrap = broker.bootstrapServers();
 * }</pre>
 *
 * <p>Most tests use {@link #shared()}: one broker per test JVM, started on first use (about 1.5 s)
 * and stopped by a shutdown hook. Tests on the shared broker must use their own topic names
 * (e.g. {@link #uniqueTopic(String)}). Other modules get it from {@code io.cairn:cairn-testkit}
 * (test scope; the benchmarks at compile scope), which brings the Kafka server artifacts with it.
 *
 * <p>What it owns:
 *
 * <ul>
 *   <li>In process: the {@link KafkaRaftServer}, its {@link KafkaConfig} (kept so that {@link
 *       #restart} starts the same broker again) and a temporary directory with its log and metadata
 *       directories, deleted by {@link #close()}.
 *   <li>In a child JVM: the child {@link Process}, which runs {@link #main} (an in-process broker of
 *       its own) and stops when its standard input closes; once it is ready a daemon thread drains its
 *       output. The
 *       parent has no directory and no server ({@code dir}, {@code server}, {@code config} null).
 *   <li>In both: three fixed ports (PLAINTEXT, SASL_PLAINTEXT with PLAIN and {@link #SASL_USER},
 *       and in process the controller's), an {@link Admin} client (handed out by {@link #admin()},
 *       never to be closed by the caller) and a producer created on first use.
 * </ul>
 *
 * <p>Threading: any thread may call any method. {@link #shared()} and {@link #uniqueTopic} lock
 * the class; {@link #restart}, {@link #close()} and the lazy producer lock the instance. {@code server} is volatile
 * because {@link #restart} replaces it. The admin client and the producer are Kafka's thread-safe
 * clients; {@link #readAll} creates, uses and closes a consumer of its own on the calling thread (a
 * consumer is single-threaded).
 *
 * <p>Invariants and failure:
 *
 * <ul>
 *   <li>The ports never change for the broker's life: a restart binds the same ones, so clients
 *       reconnect by themselves.
 *   <li>{@code child != null} exactly when the broker runs in a child JVM; {@link #restart} refuses
 *       it ({@link UnsupportedOperationException}).
 *   <li>{@code closed} only goes from false to true; after it, {@link #close()} does nothing and
 *       producing or restarting throws {@link IllegalStateException}.
 *   <li>Every wait on the broker (start, topic creation, partition leaders, produce acks, reads) is
 *       bounded by {@code TIMEOUT} (30 s) and fails with an {@link IllegalStateException} reading
 *       "Cannot X: reason". {@link #start()} retries a failed start twice on new ports (a port taken
 *       between probing and binding); a failed start shuts its server down and deletes its
 *       directory before it throws.
 * </ul>
 *
 * <p>Where the parts are, in order: the child-JVM mode ({@link #startInChildJvm}, {@link
 * #childProcess}, {@link #main}); the entry points ({@link #shared()}, {@link #uniqueTopic}, {@link #start()} and {@code
 * startOnce}, the broker's configuration); addresses and topic administration; producing and
 * {@link #readAll}; the lifecycle ({@link #restart}, {@link #close()}); private helpers (the
 * producer, partition leader waits, bounded future gets, stopping the child). Ports come from
 * {@link io.cairn.testkit.FreePort}; the directory is deleted with {@link io.cairn.testkit.TempDirs}.
 */
public final class KafkaBroker implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  /** User and password accepted on the SASL/PLAIN listener ({@link #saslBootstrapServers()}). */
  public static final String SASL_USER = "cairn";
  public static final String SASL_PASSWORD = "cairn-test-password";
  private static KafkaBroker shared;
  private static int topicCounter;

  private final Path dir;
  private final int brokerPort;
  private final int saslPort;
  private volatile KafkaRaftServer server;
  private final Admin admin;
  private KafkaConfig config;
  private KafkaProducer<byte[], byte[]> producer;
  private boolean closed;
  /** The broker's JVM when it runs in a child process ({@link #startInChildJvm}); null in-process. */
  private final Process child;

  private KafkaBroker(Path dir, int brokerPort, int saslPort, KafkaRaftServer server, Admin admin) {
    this(dir, brokerPort, saslPort, server, admin, null);
  }

  private KafkaBroker(Path dir, int brokerPort, int saslPort, KafkaRaftServer server, Admin admin, Process child) {
    this.dir = dir;
    this.brokerPort = brokerPort;
    this.saslPort = saslPort;
    this.server = server;
    this.admin = admin;
    this.child = child;
  }

  /** What a child broker prints once it serves: this prefix, its PLAINTEXT port and its SASL port. */
  private static final String CHILD_READY = "cairn-kafka-broker-ready ";

  /**
   * Starts a broker in a child JVM (this JVM's {@code java} and class path), as a broker runs in
   * production: in another process, so that its threads, heap, GC pauses and compiled code are
   * not the caller's (a benchmark of a client then measures the client). The child stops when
   * {@link #close()} closes its standard input, or when this JVM dies (the pipe closes). {@link
   * #restart} is not supported; everything else works through the broker's clients as usual.
   */
  public static KafkaBroker startInChildJvm() {
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> cmd = new ArrayList<>(List.of(javaBin));
    // the parent's logging configuration, if it was given one: without a file (a test classpath has
    // logback-test.xml) logback logs DEBUG, and a broker logging every request at DEBUG spends CPU
    // that the load-on-source benchmark reports as the broker's
    String logging = System.getProperty("logback.configurationFile");
    if (logging != null) {
      cmd.add("-Dlogback.configurationFile=" + logging);
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), KafkaBroker.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start Kafka broker in a child JVM: " + e.getMessage(), e);
    }
    try {
      java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
          java.nio.charset.StandardCharsets.UTF_8));
      java.util.Deque<String> last = new java.util.ArrayDeque<>();
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(CHILD_READY)) {
          String[] ports = line.substring(CHILD_READY.length()).trim().split(" ");
          Thread drain = new Thread(() -> {
            try {
              while (out.readLine() != null) {
                // the child's log: read so that it never blocks on a full pipe
              }
            } catch (IOException ignored) {
              // the child ended
            }
          }, "kafka-child-output");
          drain.setDaemon(true);
          drain.start();
          int brokerPort = Integer.parseInt(ports[0]);
          Map<String, Object> adminProps = new HashMap<>();
          adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + brokerPort);
          return new KafkaBroker(null, brokerPort, Integer.parseInt(ports[1]), null, Admin.create(adminProps), p);
        }
        last.addLast(line);
        if (last.size() > 20) {
          last.removeFirst();
        }
      }
      throw new IllegalStateException("Cannot start Kafka broker in a child JVM: it exited with code " + p.waitFor()
          + "; its last output:\n" + String.join("\n", last));
    } catch (IOException | InterruptedException | RuntimeException e) {
      p.destroyForcibly();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw e instanceof IllegalStateException ise ? ise : new IllegalStateException("Cannot start Kafka broker in a child JVM: " + e, e);
    }
  }

  /** The child JVM's process, when this broker runs in one ({@link #startInChildJvm}). */
  public java.util.Optional<ProcessHandle> childProcess() {
    return child == null ? java.util.Optional.empty() : java.util.Optional.of(child.toHandle());
  }

  /**
   * The child JVM of {@link #startInChildJvm}: starts a broker, prints {@code CHILD_READY} with its
   * ports, and stops it when its standard input ends.
   */
  public static void main(String[] args) throws IOException {
    KafkaBroker b = start();
    System.out.println(CHILD_READY + b.brokerPort + " " + b.saslPort);
    System.out.flush();
    try {
      System.in.transferTo(java.io.OutputStream.nullOutputStream());
    } finally {
      b.close();
    }
    System.exit(0);
  }

  /** The broker shared by all tests of this JVM, started on first call and stopped at JVM exit. */
  public static synchronized KafkaBroker shared() {
    if (shared == null || shared.closed) {
      KafkaBroker b = start();
      Runtime.getRuntime().addShutdownHook(new Thread(b::close, "kafka-broker-shutdown"));
      shared = b;
    }
    return shared;
  }

  /** A topic name not used before in this JVM, starting with {@code prefix}. */
  public static synchronized String uniqueTopic(String prefix) {
    return prefix + "-" + (++topicCounter) + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
  }

  /** Starts a new broker on free ports of 127.0.0.1; the caller must {@link #close()} it. */
  public static KafkaBroker start() {
    RuntimeException last = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      try {
        return startOnce();
      } catch (RuntimeException e) {
        last = e; // most likely a port taken between probing and binding: try other ports
      }
    }
    throw last;
  }

  private static KafkaBroker startOnce() {
    Path dir;
    try {
      dir = Files.createTempDirectory("cairn-kafka-");
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start Kafka broker: cannot create a temporary directory", e);
    }
    KafkaRaftServer server = null;
    try {
      int brokerPort = FreePort.onLoopback();
      int controllerPort = FreePort.onLoopback();
      int saslPort = FreePort.onLoopback();
      Path logDir = dir.resolve("log");
      Path metaDir = dir.resolve("meta");
      Files.createDirectories(logDir);
      Files.createDirectories(metaDir);
      Properties p = new Properties();
      p.put("process.roles", "broker,controller");
      p.put("node.id", "1");
      p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
      p.put("listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort
          + ",SASL_PLAINTEXT://127.0.0.1:" + saslPort);
      p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort + ",SASL_PLAINTEXT://127.0.0.1:" + saslPort);
      p.put("sasl.enabled.mechanisms", "PLAIN");
      p.put("listener.name.sasl_plaintext.plain.sasl.jaas.config",
          "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + SASL_USER + "\" password=\""
              + SASL_PASSWORD + "\" user_" + SASL_USER + "=\"" + SASL_PASSWORD + "\";");
      p.put("controller.listener.names", "CONTROLLER");
      p.put("inter.broker.listener.name", "PLAINTEXT");
      p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT");
      p.put("log.dirs", logDir.toString());
      p.put("metadata.log.dir", metaDir.toString());
      p.put("num.partitions", "1");
      p.put("default.replication.factor", "1");
      p.put("offsets.topic.replication.factor", "1");
      p.put("offsets.topic.num.partitions", "1");
      p.put("transaction.state.log.replication.factor", "1");
      p.put("transaction.state.log.min.isr", "1");
      p.put("transaction.state.log.num.partitions", "1");
      p.put("share.coordinator.state.topic.replication.factor", "1");
      p.put("share.coordinator.state.topic.min.isr", "1");
      p.put("share.coordinator.state.topic.num.partitions", "1");
      p.put("min.insync.replicas", "1");
      p.put("group.initial.rebalance.delay.ms", "0");
      p.put("log.retention.check.interval.ms", "1000");
      p.put("log.initial.task.delay.ms", "0");
      p.put("auto.create.topics.enable", "true");
      KafkaConfig config = new KafkaConfig(p);

      new Formatter()
          .setPrintStream(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()))
          .setNodeId(1)
          .setClusterId(Uuid.randomUuid().toString())
          .setDirectories(List.of(logDir.toString(), metaDir.toString()))
          .setMetadataLogDirectory(metaDir.toString())
          .setControllerListenerName("CONTROLLER")
          .setReleaseVersion(MetadataVersion.latestProduction())
          .run();

      server = new KafkaRaftServer(config, Time.SYSTEM);
      server.startup();
      Map<String, Object> adminProps = new HashMap<>();
      adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + brokerPort);
      Admin admin = Admin.create(adminProps);
      KafkaBroker broker = new KafkaBroker(dir, brokerPort, saslPort, server, admin);
      broker.config = config;
      admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return broker;
    } catch (Exception e) {
      if (server != null) {
        try {
          server.shutdown();
          server.awaitShutdown();
        } catch (RuntimeException ignored) {
          // best effort
        }
      }
      TempDirs.deleteQuietly(dir);
      throw new IllegalStateException("Cannot start Kafka broker: " + e, e);
    }
  }

  /** {@code 127.0.0.1:port} of the PLAINTEXT listener. */
  public String bootstrapServers() {
    return "127.0.0.1:" + brokerPort;
  }

  /**
   * {@code 127.0.0.1:port} of the SASL_PLAINTEXT listener (mechanism PLAIN, user {@link #SASL_USER},
   * password {@link #SASL_PASSWORD}); for tests of credentials.
   */
  public String saslBootstrapServers() {
    return "127.0.0.1:" + saslPort;
  }

  /** A JAAS line for the SASL/PLAIN listener with the given password. */
  public static String saslJaasConfig(String password) {
    return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + SASL_USER
        + "\" password=\"" + password + "\";";
  }

  /** An admin client of this broker (owned by the broker: do not close it). */
  public Admin admin() {
    return admin;
  }

  /** Creates a topic and waits until every partition has a leader; returns {@code name}. */
  public String createTopic(String name, int partitions) {
    return createTopic(name, partitions, Map.of());
  }

  /**
   * Creates a topic with topic-level configs (e.g. {@code retention.ms}, {@code cleanup.policy})
   * and waits until every partition has a leader; returns {@code name}.
   */
  public String createTopic(String name, int partitions, Map<String, String> configs) {
    NewTopic t = new NewTopic(name, partitions, (short) 1).configs(configs);
    get(admin.createTopics(List.of(t)).all(), "create topic " + name);
    awaitPartitions(name, partitions);
    return name;
  }

  /** Grows {@code topic} to {@code partitions} partitions and waits until they have leaders. */
  public void addPartitions(String topic, int partitions) {
    get(admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions))).all(), "add partitions to " + topic);
    awaitPartitions(topic, partitions);
  }

  /** Moves the log start offset of {@code topic}/{@code partition} to {@code beforeOffset}. */
  public void deleteRecords(String topic, int partition, long beforeOffset) {
    get(admin.deleteRecords(Map.of(new TopicPartition(topic, partition), RecordsToDelete.beforeOffset(beforeOffset))).all(),
        "delete records of " + topic + "-" + partition);
  }

  /** Produces one record (UTF-8 key and value, either may be null) and waits for the ack. */
  public RecordMetadata produce(String topic, int partition, String key, String value) {
    return produceBytes(topic, partition, utf8(key), utf8(value));
  }

  /** Produces one record of raw bytes and waits for the ack. */
  public RecordMetadata produceBytes(String topic, int partition, byte[] key, byte[] value) {
    return get(producer().send(new ProducerRecord<>(topic, partition, key, value)), "produce to " + topic);
  }

  /** Produces records without waiting per record, then flushes. */
  public void produceAll(List<ProducerRecord<byte[], byte[]>> records) {
    var futures = new ArrayList<java.util.concurrent.Future<RecordMetadata>>();
    for (ProducerRecord<byte[], byte[]> r : records) {
      futures.add(producer().send(r));
    }
    producer().flush();
    for (var f : futures) {
      get(f, "produce");
    }
  }

  /** Reads every record of {@code topic} currently in the log (all partitions, partition by partition). */
  public List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
    return readAll(topic, false);
  }

  /**
   * Reads every record of {@code topic} up to its end as a consumer with {@code isolation.level}
   * {@code read_committed} (when {@code committedOnly}) sees it: no record of an aborted or open
   * transaction, up to the last stable offset.
   */
  public List<ConsumerRecord<byte[], byte[]>> readAll(String topic, boolean committedOnly) {
    Map<String, Object> props = new HashMap<>();
    if (committedOnly) {
      props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    }
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
      List<TopicPartition> tps = c.partitionsFor(topic, TIMEOUT).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      c.assign(tps);
      c.seekToBeginning(tps);
      Map<TopicPartition, Long> end = c.endOffsets(tps, TIMEOUT);
      List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
      long deadline = System.nanoTime() + TIMEOUT.toNanos();
      while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("Cannot read topic " + topic + ": timed out");
        }
        c.poll(Duration.ofMillis(100)).forEach(out::add);
      }
      out.sort(Comparator.<ConsumerRecord<byte[], byte[]>>comparingInt(ConsumerRecord::partition)
          .thenComparingLong(ConsumerRecord::offset));
      return out;
    }
  }

  /**
   * Stops the broker (a clean shutdown, as in a rolling upgrade), keeps it down for {@code down},
   * and starts it again on the same ports with the same data. Clients reconnect by themselves.
   */
  public synchronized void restart(Duration down) {
    if (closed) {
      throw new IllegalStateException("Cannot restart: the broker is closed");
    }
    if (child != null) {
      throw new UnsupportedOperationException("Cannot restart a broker that runs in a child JVM");
    }
    server.shutdown();
    server.awaitShutdown();
    try {
      Thread.sleep(down.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    KafkaRaftServer fresh = new KafkaRaftServer(config, Time.SYSTEM);
    fresh.startup();
    server = fresh;
    try {
      admin.describeCluster().nodes().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("Cannot restart Kafka broker: " + e, e);
    }
  }

  /**
   * Stops the broker and deletes its directory (a broker in this JVM keeps it, and prints its
   * path, when the system property {@code cairn.test.keep-kafka-dir} is true: the log segments of
   * a failed run can then be read). Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (producer != null) {
        producer.close(Duration.ofSeconds(5));
      }
      admin.close(Duration.ofSeconds(5));
    } finally {
      if (child != null) {
        stopChild();
      } else {
        try {
          server.shutdown();
          server.awaitShutdown();
        } finally {
          if (Boolean.getBoolean("cairn.test.keep-kafka-dir")) {
            System.err.println("Kafka broker's directory kept: " + dir);
          } else {
            TempDirs.deleteQuietly(dir);
          }
        }
      }
    }
  }

  private synchronized KafkaProducer<byte[], byte[]> producer() {
    if (closed) {
      throw new IllegalStateException("Cannot produce: the broker is closed");
    }
    if (producer == null) {
      Map<String, Object> props = new HashMap<>();
      props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
      props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
      props.put(ProducerConfig.ACKS_CONFIG, "all");
      producer = new KafkaProducer<>(props);
    }
    return producer;
  }

  private void awaitPartitions(String topic, int partitions) {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (true) {
      try {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames()
            .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS).get(topic);
        Collection<TopicPartitionInfo> ps = d.partitions();
        if (ps.size() >= partitions && ps.stream().allMatch(pi -> pi.leader() != null && !pi.leader().isEmpty())) {
          return;
        }
      } catch (ExecutionException | TimeoutException e) {
        // metadata not yet propagated: retry
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot wait for topic " + topic + ": interrupted", e);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("Cannot use topic " + topic + ": its " + partitions + " partitions have no leader after " + TIMEOUT);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot wait for topic " + topic + ": interrupted", e);
      }
    }
  }

  private static <T> T get(java.util.concurrent.Future<T> f, String what) {
    try {
      return f.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Cannot " + what + ": interrupted", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("Cannot " + what + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("Cannot " + what + ": no answer within " + TIMEOUT, e);
    }
  }

  private static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private void stopChild() {
    try {
      child.getOutputStream().close();
      if (!child.waitFor(30, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
    } catch (IOException e) {
      child.destroyForcibly();
    } catch (InterruptedException e) {
      child.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
