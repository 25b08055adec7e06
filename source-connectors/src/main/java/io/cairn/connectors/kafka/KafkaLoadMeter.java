package io.cairn.connectors.kafka;

import io.cairn.engine.source.LoadMeter;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * Counters of the load a Kafka source put on the brokers since it was opened. Own counts:
 * {@code records} and {@code bytes} (key + value bytes of the records returned by the consumer),
 * {@code records_delivered}, {@code bad_records}, {@code dead_letter_records}, {@code polls},
 * {@code metadata_requests} (partition discovery) and {@code offset_requests} (log start/end
 * lookups). From the consumer's own metrics: {@code fetch_requests} ({@code fetch-total}),
 * {@code bytes_fetched} ({@code bytes-consumed-total}) and {@code records_fetched}
 * ({@code records-consumed-total}). {@code requests} is fetch + metadata + offset requests.
 * Safe to read from any thread.
 */
final class KafkaLoadMeter implements LoadMeter {
  static final String RECORDS_DELIVERED = "records_delivered";
  static final String BAD_RECORDS = "bad_records";
  static final String DEAD_LETTER_RECORDS = "dead_letter_records";
  static final String POLLS = "polls";
  static final String METADATA_REQUESTS = "metadata_requests";
  static final String OFFSET_REQUESTS = "offset_requests";
  static final String FETCH_REQUESTS = "fetch_requests";
  static final String BYTES_FETCHED = "bytes_fetched";
  static final String RECORDS_FETCHED = "records_fetched";

  final AtomicLong records = new AtomicLong();
  final AtomicLong bytes = new AtomicLong();
  final AtomicLong delivered = new AtomicLong();
  final AtomicLong badRecords = new AtomicLong();
  final AtomicLong deadLetters = new AtomicLong();
  final AtomicLong polls = new AtomicLong();
  final AtomicLong metadataRequests = new AtomicLong();
  final AtomicLong offsetRequests = new AtomicLong();

  /** Consumer metrics (KafkaMetric.metricValue() is thread-safe); frozen into values at close. */
  private final AtomicReference<Metric> fetchTotal = new AtomicReference<>();
  private final AtomicReference<Metric> bytesTotal = new AtomicReference<>();
  private final AtomicReference<Metric> recordsTotal = new AtomicReference<>();
  private final AtomicLong frozenFetch = new AtomicLong(-1);
  private final AtomicLong frozenBytes = new AtomicLong(-1);
  private final AtomicLong frozenRecords = new AtomicLong(-1);

  /** Binds the client-level fetch metrics of a consumer (called on the source's thread). */
  void bind(Map<MetricName, ? extends Metric> metrics) {
    for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
      MetricName n = e.getKey();
      if (!n.group().equals("consumer-fetch-manager-metrics") || n.tags().containsKey("topic")
          || n.tags().containsKey("partition")) {
        continue;
      }
      switch (n.name()) {
        case "fetch-total" -> fetchTotal.set(e.getValue());
        case "bytes-consumed-total" -> bytesTotal.set(e.getValue());
        case "records-consumed-total" -> recordsTotal.set(e.getValue());
        default -> {}
      }
    }
  }

  boolean bound() {
    return fetchTotal.get() != null;
  }

  /** Keeps the consumer metrics' last values (before the consumer closes). */
  void freeze() {
    frozenFetch.set(value(fetchTotal, frozenFetch));
    frozenBytes.set(value(bytesTotal, frozenBytes));
    frozenRecords.set(value(recordsTotal, frozenRecords));
  }

  @Override
  public Map<String, Long> read() {
    Map<String, Long> m = new TreeMap<>();
    long fetches = value(fetchTotal, frozenFetch);
    m.put(RECORDS, records.get());
    m.put(BYTES, bytes.get());
    m.put(REQUESTS, fetches + metadataRequests.get() + offsetRequests.get());
    m.put(RECORDS_DELIVERED, delivered.get());
    m.put(BAD_RECORDS, badRecords.get());
    m.put(DEAD_LETTER_RECORDS, deadLetters.get());
    m.put(POLLS, polls.get());
    m.put(METADATA_REQUESTS, metadataRequests.get());
    m.put(OFFSET_REQUESTS, offsetRequests.get());
    m.put(FETCH_REQUESTS, fetches);
    m.put(BYTES_FETCHED, value(bytesTotal, frozenBytes));
    m.put(RECORDS_FETCHED, value(recordsTotal, frozenRecords));
    return m;
  }

  private static long value(AtomicReference<Metric> metric, AtomicLong frozen) {
    long f = frozen.get();
    if (f >= 0) {
      return f;
    }
    Metric m = metric.get();
    if (m == null) {
      return 0;
    }
    Object v = m.metricValue();
    return v instanceof Number n && !Double.isNaN(n.doubleValue()) ? n.longValue() : 0;
  }
}
