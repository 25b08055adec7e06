package io.cairn.connectors.kafka;

import io.cairn.connectors.kafka.JsonRecordDecoder.Change;
import io.cairn.connectors.kafka.KafkaSourceConfig.BadRecordPolicy;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Source} over all partitions of one Kafka topic, JSON values, one of the three envelopes.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Owns its Kafka clients and its read state. The consumer is created in the constructor;
 *       the admin client when first needed (partition discovery, or a seek whose offsets name a
 *       partition the consumer's metadata does not know yet); the dead-letter producer at the
 *       first dead letter. {@link #close} closes all three, with short waits. The read state is
 *       the position {@code next}, the fetched records not yet delivered ({@code pending}), the
 *       {@link JsonRecordDecoder}, the {@link RateLimiter} and the last end offsets read.
 *   <li>One owner thread. Every method but {@link #wakeup()} is called by the thread that owns
 *       the source (the {@link Source} contract), the only thread that touches the clients and the
 *       read state, so nothing here is locked. {@link #wakeup()} may come from any thread: it sets
 *       a volatile flag, calls {@code KafkaConsumer#wakeup} (the consumer's one thread-safe method)
 *       and cancels the admin call the owner waits for ({@code waitingFor}, volatile). The load
 *       meter ({@link KafkaLoadMeter}) may be read from any thread. Time comes from the injected
 *       {@code nanoTime}, and the rate limiter sleeps through the injected sleeper.
 *   <li>A failure sticks: once {@code failure} is set (a position outside the log, a bad record
 *       under {@code fail}, a record that cannot be dead-lettered, a decoder error) every later
 *       poll throws it, until the next {@code seek} clears it.
 *   <li>Partitions are assigned, never subscribed: no group, no commits. The position is
 *       {@code partition → next offset}, kept here: after a record is delivered its partition's
 *       entry is {@code offset + 1}; whenever every fetched record has been delivered, each entry
 *       advances to the consumer's fetch position (which steps over transaction markers and
 *       compacted-away offsets). So {@code seek(position())} resumes exactly after the last
 *       delivered record.
 *   <li>Records returned by the consumer but not yet delivered (more than {@code maxRecords}, a
 *       rate cap, a failed record) wait in {@code pending}; the consumer is polled only when
 *       {@code pending} is empty.
 *   <li>{@code auto.offset.reset=none}: a fetch position outside the log is an error
 *       ({@link OffsetsOutOfRangeException}), never a silent jump. At {@code seek}, a partition
 *       missing from non-empty offsets must resume at 0 (it was created after those offsets were
 *       taken); with {@link SourceOffsets#EMPTY} every partition starts at its log start offset.
 *   <li>Partitions added to the topic are found by re-describing the topic every discovery
 *       interval and read from offset 0.
 *   <li>A bad record under {@code fail} stays pending and fails this and every later poll with an
 *       {@linkplain io.cairn.engine.source.SourceException#atRecord() at-record} error: the records
 *       delivered before it stand and the position is exactly before it, so the engine keeps them.
 *       Under {@code skip} it is counted and the position moves past it; under {@code dead-letter}
 *       (or {@code skip} with a dead-letter topic) it is first written to the dead-letter topic and
 *       the position moves past it only once the write is acknowledged (one write at a time).
 *   <li>A bad record that cannot be dead-lettered never restarts the source forever: one the
 *       topic or producer refuses as too large is written again with its coordinates (topic,
 *       partition, offset, sizes, error) and as much of its key and value as fits, then with the
 *       coordinates alone; if that too is refused the source fails at the record (FAILED, with the
 *       reason). A write that fails for a transient reason (a broker away, a timeout) restarts the
 *       source; any other refusal, and a decoder error that is not a bad record, are at-record
 *       errors the engine tries once more and then fails the source on.
 * </ul>
 */
final class KafkaSource implements Source {
  private static final Logger LOG = LoggerFactory.getLogger(KafkaSource.class);
  private static final Duration CAUGHT_UP_RECHECK = Duration.ofSeconds(1);

  private final SourceDefinition definition;
  private final KafkaSourceConfig config;
  private final JsonRecordDecoder decoder;
  private final Consumer<byte[], byte[]> consumer;
  private final KafkaLoadMeter meter = new KafkaLoadMeter();
  private final RateLimiter rateLimiter;
  private final LongSupplier nanoTime;
  private final String topic;

  private final TreeMap<Integer, Long> next = new TreeMap<>();
  private final ArrayDeque<ConsumerRecord<byte[], byte[]>> pending = new ArrayDeque<>();
  private Map<Integer, Long> endOffsets = Map.of();
  private long endOffsetsCheckedAt;
  private long lastDiscoveryAt;
  private boolean seeked;
  /** What {@link #warmUp} learnt for the next seek (null: nothing, or used). */
  private Warm warm;

  /** The partition count and start offsets a warm-up read, and when (nanoTime). */
  private record Warm(int partitions, Map<TopicPartition, Long> begin, long atNanos) {}

  /** A warm-up older than this is not used by a seek (asked again). */
  static final Duration WARM_UP_MAX_AGE = Duration.ofSeconds(10);
  private boolean closed;
  private KafkaSourceException failure;
  private Admin admin;
  /** Set by {@link #wakeup()} (another thread): admin calls of this source fail fast from then on. */
  private volatile boolean woken;
  /** The admin call the owning thread waits for, if any: {@link #wakeup()} cancels it. */
  private volatile org.apache.kafka.common.KafkaFuture<?> waitingFor;
  private KafkaProducer<byte[], byte[]> deadLetterProducer;

  KafkaSource(SourceDefinition definition, KafkaSourceConfig config, LongSupplier nanoTime, RateLimiter.Sleeper sleeper) {
    this.definition = definition;
    this.config = config;
    this.topic = config.topic();
    this.nanoTime = nanoTime;
    this.rateLimiter = new RateLimiter(nanoTime, sleeper);
    this.decoder = new JsonRecordDecoder(
        definition.schema(), definition.primaryKey(), definition.envelope(), config.keyField());
    try {
      this.consumer = new KafkaConsumer<>(consumerProperties(config));
    } catch (KafkaException e) {
      throw new IllegalArgumentException("Cannot open source '" + config.sourceName() + "': invalid Kafka client settings: "
          + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
    }
    meter.bind(consumer.metrics());
  }

  /** The consumer's {@code max.partition.fetch.bytes} unless the source's properties set it. */
  static final int MAX_PARTITION_FETCH_BYTES = 8 << 20;

  static Map<String, Object> consumerProperties(KafkaSourceConfig config) {
    Map<String, Object> p = new HashMap<>();
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, "cairn-" + config.sourceName());
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    // a seek asks the consumer for the topic's partitions: that must never create the topic
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    // A fetch brings up to this much of each partition (Kafka's default: 1 MiB; a response stays
    // within fetch.max.bytes, 50 MiB). While a partition's last fetch is being read no new fetch
    // for it is in flight, so a replay waits for one round trip per fetch: 1 MiB fetches made a
    // 50 MB replay 20 round trips, 8 MiB ones 4 (and larger, fewer ticks).
    p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(MAX_PARTITION_FETCH_BYTES));
    p.putAll(config.clientProperties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, config.brokers());
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    return p;
  }

  static Map<String, Object> adminProperties(KafkaSourceConfig config, String suffix) {
    Map<String, Object> p = new HashMap<>(config.clientProperties());
    // Consumer-only settings would only produce "unknown config" warnings on other clients.
    p.keySet().removeIf(k -> ConsumerConfig.configNames().contains(k)
        && !org.apache.kafka.clients.admin.AdminClientConfig.configNames().contains(k));
    p.put("client.id", "cairn-" + config.sourceName() + "-" + suffix);
    p.put("bootstrap.servers", config.brokers());
    return p;
  }

  @Override
  public Schema schema() {
    return definition.schema();
  }

  @Override
  public List<String> primaryKey() {
    return definition.primaryKey();
  }

  @Override
  public void seek(SourceOffsets offsets) {
    ensureOpen();
    Map<Integer, Long> recorded = parseOffsets(offsets);
    Warm w = warm;
    warm = null;
    if (w != null && nanoTime.getAsLong() - w.atNanos() > WARM_UP_MAX_AGE.toNanos()) {
      w = null;
    }
    int consumerCount = w != null ? w.partitions() : partitionCountForSeek(config.requestTimeout());
    int partitionCount = consumerCount;
    if (recorded.keySet().stream().anyMatch(p -> p >= consumerCount)) {
      // the consumer's metadata may be older than a partition the offsets name: ask the admin client
      partitionCount = describePartitionCount(config.requestTimeout());
    }
    for (int p : recorded.keySet()) {
      if (p >= partitionCount) {
        throw new KafkaSourceException("Cannot seek source '" + config.sourceName() + "': the recorded offsets name partition "
            + p + " of topic '" + topic + "', which has only " + partitionCount + " partitions (was the topic re-created?)");
      }
    }
    List<TopicPartition> tps = partitions(0, partitionCount);
    consumer.assign(tps);
    // start offsets a warm-up read just before are used as they are (a log start that moves in
    // between is the same race as one that moves just after the seek: the fetch reports it)
    Map<TopicPartition, Long> begin = w != null && w.begin().keySet().equals(new java.util.HashSet<>(tps)) ? w.begin() : beginningOffsets(tps);
    Map<TopicPartition, Long> end = endOffsets(tps);
    next.clear();
    pending.clear();
    failure = null;
    for (TopicPartition tp : tps) {
      long start = begin.get(tp);
      long target = offsets.isEmpty() ? start : recorded.getOrDefault(tp.partition(), 0L);
      checkInRange(tp.partition(), target, start, end.get(tp));
      consumer.seek(tp, target);
      next.put(tp.partition(), target);
    }
    endOffsets = toPartitionMap(end);
    endOffsetsCheckedAt = nanoTime.getAsLong();
    lastDiscoveryAt = nanoTime.getAsLong();
    seeked = true;
    LOG.info("Source '{}' reads topic '{}' ({} partitions) from {}", config.sourceName(), topic, partitionCount, next);
  }

  /**
   * Connects, reads the topic's partition count and every partition's start offset (the first
   * two of a seek's three requests, on the two connections a seek opens: the bootstrap broker's
   * and the leaders'), and keeps them for the seek that follows within {@link #WARM_UP_MAX_AGE}.
   * Failures and a spent budget are only logged: the seek asks again.
   */
  @Override
  public void warmUp(Duration budget) {
    if (closed || seeked) {
      return;
    }
    long t0 = nanoTime.getAsLong();
    try {
      meter.metadataRequests.incrementAndGet();
      List<org.apache.kafka.common.PartitionInfo> parts = consumer.partitionsFor(topic, budget);
      if (parts == null || parts.isEmpty()) {
        return;
      }
      List<TopicPartition> tps = partitions(0, parts.size());
      Duration left = budget.minusNanos(nanoTime.getAsLong() - t0);
      if (left.isNegative() || left.isZero()) {
        return;
      }
      // assigned as the seek will assign them: a read_committed consumer warns of list-offsets
      // answers for partitions it does not hold; nothing is fetched before the seek positions them
      consumer.assign(tps);
      meter.offsetRequests.incrementAndGet();
      Map<TopicPartition, Long> begin = consumer.beginningOffsets(tps, left);
      warm = new Warm(parts.size(), Map.copyOf(begin), nanoTime.getAsLong());
      LOG.debug("Source '{}' warmed up in {} ms: {} partitions, start offsets {}", config.sourceName(),
          (nanoTime.getAsLong() - t0) / 1_000_000, parts.size(), begin);
    } catch (KafkaException e) {
      LOG.debug("Source '{}' could not warm up (the seek asks again): {}", config.sourceName(), e.toString());
    }
  }

  @Override
  public int poll(SourceOutput out, int maxRecords, Duration timeout) {
    ensureOpen();
    if (!seeked) {
      throw new IllegalStateException("Cannot poll source '" + config.sourceName() + "': seek() has not been called");
    }
    if (failure != null) {
      throw failure;
    }
    long started = nanoTime.getAsLong();
    maybeDiscoverPartitions();
    int allowed = rateLimiter.permits(maxRecords, timeout);
    if (allowed <= 0) {
      return 0;
    }
    if (pending.isEmpty()) {
      long left = Math.max(0, timeout.toNanos() - (nanoTime.getAsLong() - started));
      fetch(Duration.ofNanos(left));
      if (pending.isEmpty()) {
        advanceToFetchPositions();
        return 0;
      }
    }
    int delivered = 0;
    // records come in runs of one partition: the partition's next offset is stored once per run
    int runPartition = -1;
    long runNext = 0;
    try {
      while (delivered < allowed && !pending.isEmpty()) {
        ConsumerRecord<byte[], byte[]> r = pending.peek();
        Change change;
        try {
          change = decoder.decode(r.key(), r.value());
        } catch (BadRecordException | ArithmeticException e) {
          handleBadRecord(r, e);
          change = Change.NONE;
        } catch (RuntimeException e) {
          // not a bad record the decoder recognised: the same record gives it again after a restart
          failure = new KafkaSourceException("Cannot read source '" + config.sourceName() + "': decoding the record at "
              + where(r) + " failed: " + e, e, true, true);
          throw failure;
        }
        if (change.append()) {
          out.append(change.row(), 1);
        } else if (!change.isNone()) {
          out.upsert(change.key(), change.row());
        }
        pending.poll();
        if (r.partition() != runPartition) {
          if (runPartition >= 0) {
            next.put(runPartition, runNext);
          }
          runPartition = r.partition();
        }
        runNext = r.offset() + 1;
        delivered++;
      }
    } finally {
      if (runPartition >= 0) {
        next.put(runPartition, runNext);
      }
      meter.delivered.addAndGet(delivered);
      rateLimiter.consumed(delivered);
    }
    if (pending.isEmpty()) {
      advanceToFetchPositions();
    }
    return delivered;
  }

  private void fetch(Duration timeout) {
    ConsumerRecords<byte[], byte[]> records;
    try {
      records = consumer.poll(timeout);
    } catch (OffsetOutOfRangeException e) {
      Map.Entry<TopicPartition, Long> first = e.offsetOutOfRangePartitions().entrySet().iterator().next();
      TopicPartition tp = first.getKey();
      Map<TopicPartition, Long> begin = beginningOffsets(List.of(tp));
      Map<TopicPartition, Long> end = endOffsets(List.of(tp));
      failure = outOfRange(tp.partition(), first.getValue(), begin.get(tp), end.get(tp));
      throw failure;
    } catch (KafkaException e) {
      throw new KafkaSourceException("Cannot read source '" + config.sourceName() + "': fetching from topic '" + topic
          + "' failed: " + e.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }
    meter.polls.incrementAndGet();
    if (!meter.bound()) {
      meter.bind(consumer.metrics());
    }
    long bytes = 0;
    for (ConsumerRecord<byte[], byte[]> r : records) {
      pending.add(r);
      bytes += Math.max(0, r.serializedKeySize()) + Math.max(0, r.serializedValueSize());
    }
    meter.records.addAndGet(records.count());
    meter.bytes.addAndGet(bytes);
  }

  private static String where(ConsumerRecord<byte[], byte[]> r) {
    return "topic '" + r.topic() + "' partition " + r.partition() + " offset " + r.offset();
  }

  private void handleBadRecord(ConsumerRecord<byte[], byte[]> r, RuntimeException e) {
    String where = where(r);
    if (config.badRecords() == BadRecordPolicy.FAIL) {
      failure = new KafkaSourceException("Cannot read source '" + config.sourceName() + "': bad record at " + where + ": "
          + e.getMessage() + " (set bad-records = skip or dead-letter to skip such records)", e, false, true);
      throw failure;
    }
    String note = config.deadLetterTopic().isPresent() ? writeDeadLetter(r, e) : "";
    long n = meter.badRecords.incrementAndGet();
    // a topic of bad records must not become a log of them: the first few in full, then one line a while
    long now = System.nanoTime();
    if (n <= BAD_RECORDS_LOGGED_IN_FULL || now - lastBadRecordLog >= BAD_RECORD_LOG_INTERVAL_NANOS) {
      long unlogged = n - 1 - loggedBadRecords;
      LOG.warn("Source '{}' skipped a bad record at {}: {}{}{}", config.sourceName(), where, e.getMessage(), note,
          unlogged > 0 ? " (and " + unlogged + " more since the last such line; " + n + " in all, in status load.bad_records)" : "");
      loggedBadRecords = n;
      lastBadRecordLog = now;
    }
  }

  /** Skipped records logged one line each before the log is thinned to a line per interval. */
  static final int BAD_RECORDS_LOGGED_IN_FULL = 10;
  private static final long BAD_RECORD_LOG_INTERVAL_NANOS = 10_000_000_000L;
  private long loggedBadRecords;
  private long lastBadRecordLog;

  /** Room left in a dead-letter record for the headers and the record's framing. */
  static final int DEAD_LETTER_OVERHEAD = 16 * 1024;
  /** A key longer than this is cut to it in a dead-letter record that does not fit whole. */
  static final int DEAD_LETTER_MAX_KEY = 1024;

  /**
   * Writes {@code r} to the dead-letter topic and waits for the acknowledgement; returns only when
   * it is written. Refused as too large: written again cut to what fits, then with its coordinates
   * alone; refused again: the source fails at this record. Returns what to add to the log line
   * (empty, or how the record was cut).
   */
  private String writeDeadLetter(ConsumerRecord<byte[], byte[]> r, RuntimeException bad) {
    String where = where(r);
    String dlt = config.deadLetterTopic().get();
    Throwable full = send(deadLetter(r, bad, r.key(), r.value(), true));
    if (full == null) {
      meter.deadLetters.incrementAndGet();
      return "";
    }
    if (transientFailure(full)) {
      failure = new KafkaSourceException("Cannot write the bad record at " + where + " of source '" + config.sourceName()
          + "' to dead-letter topic '" + dlt + "': " + full, full);
      throw failure;
    }
    if (!(full instanceof RecordTooLargeException || full instanceof RecordBatchTooLargeException)) {
      failure = new KafkaSourceException("Cannot write the bad record at " + where + " of source '" + config.sourceName()
          + "' to dead-letter topic '" + dlt + "': " + full, full, true, true);
      throw failure;
    }
    int budget = Math.max(0, maxRequestSize() - DEAD_LETTER_OVERHEAD);
    byte[] key = cut(r.key(), Math.min(DEAD_LETTER_MAX_KEY, budget));
    byte[] value = cut(r.value(), budget - (key == null ? 0 : key.length));
    Throwable truncated = send(deadLetter(r, bad, key, value, false));
    if (truncated instanceof RecordTooLargeException || truncated instanceof RecordBatchTooLargeException) {
      truncated = send(deadLetter(r, bad, null, null, false)); // the topic's limit is below the producer's: coordinates only
      value = null;
    }
    if (truncated == null) {
      meter.deadLetters.incrementAndGet();
      return " (its " + size(r.value()) + " bytes are too large for dead-letter topic '" + dlt + "': wrote its coordinates "
          + "and the first " + size(value) + " bytes of its value there)";
    }
    if (transientFailure(truncated)) {
      failure = new KafkaSourceException("Cannot write the bad record at " + where + " of source '" + config.sourceName()
          + "' to dead-letter topic '" + dlt + "': " + truncated, truncated);
      throw failure;
    }
    failure = new KafkaSourceException("Cannot read source '" + config.sourceName() + "': the bad record at " + where
        + " (" + size(r.value()) + " bytes) cannot be written to dead-letter topic '" + dlt + "', not even cut to its "
        + "coordinates (" + full + "; then " + truncated + "). The source stops before it: raise the topic's "
        + "max.message.bytes, or remove the record (deleteRecords), then restart the source", truncated, false, true);
    throw failure;
  }

  /**
   * A dead-letter record for {@code r}: its coordinates and sizes as headers, the given key and
   * value, and (when {@code whole}) the record's own headers.
   */
  private ProducerRecord<byte[], byte[]> deadLetter(ConsumerRecord<byte[], byte[]> r, RuntimeException bad, byte[] key,
      byte[] value, boolean whole) {
    ProducerRecord<byte[], byte[]> dl = new ProducerRecord<>(config.deadLetterTopic().get(), null, key, value);
    String error = String.valueOf(bad.getMessage());
    dl.headers()
        .add(new RecordHeader("cairn.source", utf8(config.sourceName())))
        .add(new RecordHeader("cairn.topic", utf8(r.topic())))
        .add(new RecordHeader("cairn.partition", utf8(Integer.toString(r.partition()))))
        .add(new RecordHeader("cairn.offset", utf8(Long.toString(r.offset()))))
        .add(new RecordHeader("cairn.size", utf8(Integer.toString(size(r.value())))))
        .add(new RecordHeader("cairn.key-size", utf8(Integer.toString(size(r.key())))))
        .add(new RecordHeader("cairn.error", utf8(error.length() > 2000 ? error.substring(0, 2000) : error)));
    if (whole) {
      r.headers().forEach(h -> dl.headers().add(h));
    } else {
      dl.headers().add(new RecordHeader("cairn.truncated", utf8("key " + size(key) + " of " + size(r.key())
          + " bytes, value " + size(value) + " of " + size(r.value()) + " bytes; the record's headers left out")));
    }
    return dl;
  }

  /** Sends one dead letter and waits for it; the failure, or null when it is written. */
  private Throwable send(ProducerRecord<byte[], byte[]> dl) {
    try {
      Future<RecordMetadata> f = deadLetterProducer().send(dl);
      deadLetterProducer.flush();
      f.get(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException | KafkaException e) {
      return e;
    }
  }

  private static boolean transientFailure(Throwable t) {
    return t instanceof org.apache.kafka.common.errors.RetriableException || t instanceof TimeoutException
        || t instanceof InterruptedException || t instanceof org.apache.kafka.common.errors.InterruptException;
  }

  /** The dead-letter producer's request size limit (its {@code max.request.size}). */
  private int maxRequestSize() {
    Object v = config.clientProperties().get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
    try {
      return v == null ? 1024 * 1024 : Integer.parseInt(v.toString().trim());
    } catch (NumberFormatException e) {
      return 1024 * 1024;
    }
  }

  private static byte[] cut(byte[] b, int max) {
    if (b == null) {
      return null;
    }
    return b.length <= max ? b : java.util.Arrays.copyOf(b, Math.max(0, max));
  }

  private static int size(byte[] b) {
    return b == null ? 0 : b.length;
  }

  /** With nothing pending, every fetched record was delivered: move to the consumer's positions. */
  private void advanceToFetchPositions() {
    for (TopicPartition tp : consumer.assignment()) {
      long pos = consumer.position(tp, config.requestTimeout());
      next.merge(tp.partition(), pos, Math::max);
    }
  }

  private void maybeDiscoverPartitions() {
    long now = nanoTime.getAsLong();
    if (now - lastDiscoveryAt < config.discoveryInterval().toNanos()) {
      return;
    }
    lastDiscoveryAt = now;
    int count;
    try {
      count = describePartitionCount(Duration.ofMillis(Math.min(5_000, config.requestTimeout().toMillis())));
    } catch (KafkaSourceException e) {
      LOG.warn("Source '{}' could not check topic '{}' for new partitions (will retry): {}",
          config.sourceName(), topic, e.getMessage());
      return;
    }
    int known = next.isEmpty() ? 0 : next.lastKey() + 1;
    if (count <= known) {
      return;
    }
    List<TopicPartition> added = partitions(known, count);
    List<TopicPartition> all = partitions(0, count);
    consumer.assign(all);
    for (TopicPartition tp : added) {
      consumer.seek(tp, 0);
      next.put(tp.partition(), 0L);
    }
    LOG.info("Source '{}' found {} new partition(s) of topic '{}' ({} in all); reading them from offset 0",
        config.sourceName(), added.size(), topic, count);
  }

  @Override
  public SourceOffsets position() {
    Map<String, String> m = new TreeMap<>();
    next.forEach((p, o) -> m.put(Integer.toString(p), Long.toString(o)));
    return new SourceOffsets(m);
  }

  @Override
  public boolean caughtUp() {
    ensureOpen();
    if (!seeked) {
      return false;
    }
    boolean newPartitions = !endOffsets.keySet().containsAll(next.keySet());
    if (!newPartitions && !reached(endOffsets)) {
      return false;
    }
    if (newPartitions || nanoTime.getAsLong() - endOffsetsCheckedAt >= CAUGHT_UP_RECHECK.toNanos()) {
      endOffsets = toPartitionMap(endOffsets(partitions(next.keySet())));
      endOffsetsCheckedAt = nanoTime.getAsLong();
    }
    return reached(endOffsets);
  }

  private boolean reached(Map<Integer, Long> ends) {
    for (Map.Entry<Integer, Long> e : next.entrySet()) {
      Long end = ends.get(e.getKey());
      if (end == null || e.getValue() < end) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void setReadRateLimit(double recordsPerSecond) {
    rateLimiter.setRate(recordsPerSecond);
  }

  @Override
  public LoadMeter meter() {
    return meter;
  }

  /**
   * The engine stops or a recovery's deadline passed: a blocking consumer call in progress (a poll,
   * an end-offsets look-up) or the admin call a seek waits for throws now, and so does every later
   * admin call of this source (it is closed and restarted next).
   */
  @Override
  public void wakeup() {
    woken = true;
    consumer.wakeup();
    org.apache.kafka.common.KafkaFuture<?> f = waitingFor;
    if (f != null) {
      f.cancel(true);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    meter.freeze();
    RuntimeException first = null;
    // Short waits: the consumer has no group and commits nothing, an admin call in flight is no
    // longer wanted, and dead letters were acknowledged before their records' offsets moved
    // (writeDeadLetter). With the broker gone, a restart cycle or a node's stop must not wait
    // out long timeouts here (they used to add up to ~10 s per close). The consumer closes at
    // once: with any wait its close asks the brokers to drop its fetch sessions and waits for the
    // answer, which a broker holds for fetch.max.wait.ms (500 ms, every stop and every `recover
    // --until-caught-up` paid it); a session not dropped is evicted by the broker in time.
    for (AutoCloseable c : new AutoCloseable[] {
        () -> consumer.close(Duration.ZERO),
        () -> {
          if (admin != null) {
            admin.close(Duration.ZERO);
          }
        },
        () -> {
          if (deadLetterProducer != null) {
            deadLetterProducer.close(Duration.ofSeconds(1));
          }
        }}) {
      try {
        c.close();
      } catch (Exception e) {
        if (first == null) {
          first = new KafkaSourceException("Cannot close source '" + config.sourceName() + "' cleanly: " + e, e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  // ---- helpers ----

  private Map<Integer, Long> parseOffsets(SourceOffsets offsets) {
    Map<Integer, Long> m = new TreeMap<>();
    for (Map.Entry<String, String> e : offsets.values().entrySet()) {
      int p;
      long o;
      try {
        p = Integer.parseInt(e.getKey());
        o = Long.parseLong(e.getValue());
      } catch (NumberFormatException ex) {
        throw new IllegalArgumentException("Cannot seek source '" + config.sourceName() + "': offsets entry '" + e.getKey()
            + "' = '" + e.getValue() + "' is not 'partition number' = 'offset'");
      }
      if (p < 0 || o < 0) {
        throw new IllegalArgumentException("Cannot seek source '" + config.sourceName() + "': offsets entry '" + e.getKey()
            + "' = '" + e.getValue() + "' is negative");
      }
      m.put(p, o);
    }
    return m;
  }

  private void checkInRange(int partition, long target, long start, long end) {
    if (target < start || target > end) {
      throw outOfRange(partition, target, start, end);
    }
  }

  private OffsetsOutOfRangeException outOfRange(int partition, long recorded, long start, long end) {
    String msg;
    if (recorded < start) {
      msg = "Cannot resume source '" + config.sourceName() + "': topic '" + topic + "' partition " + partition
          + " no longer holds offsets " + recorded + ".." + (start - 1) + " (" + (start - recorded)
          + " records): the source must resume at offset " + recorded + " but the log start offset is " + start
          + " (removed by retention or deleteRecords). Older snapshots need even older offsets;"
          + " rebuild the source from the beginning, and keep the topic's retention.ms above the snapshot interval";
    } else {
      msg = "Cannot resume source '" + config.sourceName() + "': topic '" + topic + "' partition " + partition
          + " must resume at offset " + recorded + " but its log ends at offset " + end
          + " (was the topic deleted and re-created?)";
    }
    return new OffsetsOutOfRangeException(msg, topic, partition, recorded, start, end);
  }

  /**
   * The topic's partition count as the consumer's metadata has it, fetched on the consumer's own
   * connection when it has none (a fresh source). A seek asks the consumer, not the admin client,
   * so that a recovery opens one client and one connection to the brokers instead of two (one
   * bootstrap, one metadata request). Partition discovery while reading uses {@link
   * #describePartitionCount}, which always asks the brokers.
   */
  private int partitionCountForSeek(Duration timeout) {
    meter.metadataRequests.incrementAndGet();
    List<org.apache.kafka.common.PartitionInfo> parts;
    try {
      parts = consumer.partitionsFor(topic, timeout);
    } catch (org.apache.kafka.common.errors.WakeupException e) {
      throw describeGivenUp(e);
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      throw describeTimedOut(timeout, e);
    } catch (KafkaException e) {
      throw describeFailed(e);
    }
    if (parts == null || parts.isEmpty()) {
      throw noSuchTopic();
    }
    return parts.size();
  }

  private int describePartitionCount(Duration timeout) {
    meter.metadataRequests.incrementAndGet();
    org.apache.kafka.common.KafkaFuture<Map<String, TopicDescription>> call = admin().describeTopics(List.of(topic)).allTopicNames();
    waitingFor = call;
    try {
      if (woken) {
        call.cancel(true); // woken before the call was published: do not wait for it
      }
      TopicDescription d = call.get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(topic);
      return d.partitions().size();
    } catch (java.util.concurrent.CancellationException e) {
      throw describeGivenUp(e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof UnknownTopicOrPartitionException) {
        throw noSuchTopic();
      }
      throw describeFailed(e.getCause());
    } catch (TimeoutException e) {
      throw describeTimedOut(timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaSourceException("Cannot read source '" + config.sourceName() + "': interrupted", e);
    } finally {
      waitingFor = null;
    }
  }

  private KafkaSourceException describeGivenUp(Exception e) {
    return new KafkaSourceException("Cannot read source '" + config.sourceName() + "': describing topic '" + topic
        + "' was given up (the source was woken up: the engine is stopping or a deadline passed)", e);
  }

  private KafkaSourceException describeTimedOut(Duration timeout, Exception e) {
    return new KafkaSourceException("Cannot read source '" + config.sourceName() + "': no answer about topic '" + topic
        + "' from brokers " + brokersForMessages() + " within " + timeout, e);
  }

  private KafkaSourceException describeFailed(Throwable cause) {
    return new KafkaSourceException("Cannot read source '" + config.sourceName() + "': describing topic '" + topic
        + "' failed: " + cause, cause);
  }

  private KafkaSourceException noSuchTopic() {
    return new KafkaSourceException("Cannot read source '" + config.sourceName() + "': topic '" + topic
        + "' does not exist on brokers " + brokersForMessages());
  }

  private Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> tps) {
    meter.offsetRequests.incrementAndGet();
    try {
      return consumer.beginningOffsets(tps, config.requestTimeout());
    } catch (KafkaException e) {
      throw new KafkaSourceException("Cannot read source '" + config.sourceName() + "': listing start offsets of topic '"
          + topic + "' failed: " + e, e);
    }
  }

  private Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> tps) {
    meter.offsetRequests.incrementAndGet();
    try {
      return consumer.endOffsets(tps, config.requestTimeout());
    } catch (KafkaException e) {
      throw new KafkaSourceException("Cannot read source '" + config.sourceName() + "': listing end offsets of topic '"
          + topic + "' failed: " + e, e);
    }
  }

  private Admin admin() {
    if (admin == null) {
      admin = Admin.create(adminProperties(config, "admin"));
    }
    return admin;
  }

  private KafkaProducer<byte[], byte[]> deadLetterProducer() {
    if (deadLetterProducer == null) {
      Map<String, Object> p = new HashMap<>(config.clientProperties());
      p.keySet().removeIf(k -> !ProducerConfig.configNames().contains(k));
      p.put(ProducerConfig.CLIENT_ID_CONFIG, "cairn-" + config.sourceName() + "-dead-letters");
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, config.brokers());
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      deadLetterProducer = new KafkaProducer<>(p);
    }
    return deadLetterProducer;
  }

  private List<TopicPartition> partitions(int from, int to) {
    List<TopicPartition> l = new ArrayList<>();
    for (int p = from; p < to; p++) {
      l.add(new TopicPartition(topic, p));
    }
    return l;
  }

  private List<TopicPartition> partitions(Collection<Integer> ps) {
    return ps.stream().map(p -> new TopicPartition(topic, p)).toList();
  }

  private static Map<Integer, Long> toPartitionMap(Map<TopicPartition, Long> m) {
    Map<Integer, Long> out = new HashMap<>();
    m.forEach((tp, o) -> out.put(tp.partition(), o));
    return out;
  }

  /** The brokers as written in the definition (a secret reference stays a reference). */
  private String brokersForMessages() {
    return definition.option(KafkaSourceConfig.BROKERS, "?");
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("Cannot use source '" + config.sourceName() + "': it is closed");
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
