package io.cairn.benchmarks.peer;

import io.cairn.testkit.kafka.KafkaBroker;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * A deterministic stream of JSON upserts for the keyed aggregation: key {@code {"id":<long>}},
 * value {@code {"id":…,"customer":"c<k>","amount":<decimal, 2 places>}} or a tombstone, and the
 * naive oracle of "per customer: COUNT(*), SUM(amount) over the latest value per id".
 *
 * <p>Record {@code i} has id {@code random(ids)}; a fraction {@code tombstoneRate} of records are
 * tombstones. Records go to partition {@code id % partitions}, so each id's updates stay ordered.
 */
public final class UpsertWorkload {
  private final long seed;
  private final int records;
  private final int ids;
  private final int customers;
  private final double tombstoneRate;

  /**
   * @param seed random seed
   * @param records number of records
   * @param ids number of distinct ids
   * @param customers number of distinct customers
   * @param tombstoneRate fraction of records that are tombstones, in [0, 1)
   */
  public UpsertWorkload(long seed, int records, int ids, int customers, double tombstoneRate) {
    if (records < 0 || ids < 1 || customers < 1 || tombstoneRate < 0 || tombstoneRate >= 1) {
      throw new IllegalArgumentException("Cannot build a workload: need records >= 0, ids >= 1, customers >= 1, 0 <= tombstoneRate < 1; got "
          + records + ", " + ids + ", " + customers + ", " + tombstoneRate);
    }
    this.seed = seed;
    this.records = records;
    this.ids = ids;
    this.customers = customers;
    this.tombstoneRate = tombstoneRate;
  }

  public int records() {
    return records;
  }

  /** One generated record: {@code amount} and {@code customer} are null for a tombstone. */
  public record Upsert(long id, String customer, BigDecimal amount) {
    public boolean tombstone() {
      return customer == null;
    }

    public byte[] keyJson() {
      return ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
    }

    public byte[] valueJson() {
      return tombstone() ? null
          : ("{\"id\":" + id + ",\"customer\":\"" + customer + "\",\"amount\":" + amount.toPlainString() + "}").getBytes(StandardCharsets.UTF_8);
    }
  }

  /** Visits the records in order. */
  public void forEach(java.util.function.Consumer<Upsert> sink) {
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < records; i++) {
      long id = r.nextInt(ids);
      if (r.nextDouble() < tombstoneRate) {
        sink.accept(new Upsert(id, null, null));
      } else {
        String customer = "c" + r.nextInt(customers);
        BigDecimal amount = BigDecimal.valueOf(r.nextLong(100_000), 2); // 0.00 … 999.99
        sink.accept(new Upsert(id, customer, amount));
      }
    }
  }

  /** Produces every record to {@code topic} (which has {@code partitions} partitions), in batches, acknowledged. */
  public void produceTo(KafkaBroker broker, String topic, int partitions) {
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>();
    forEach(u -> {
      batch.add(new ProducerRecord<>(topic, (int) (u.id() % partitions), u.keyJson(), u.valueJson()));
      if (batch.size() == 50_000) {
        broker.produceAll(batch);
        batch.clear();
      }
    });
    if (!batch.isEmpty()) {
      broker.produceAll(batch);
    }
  }

  /** The expected result: customer → (count, sum) over the latest value per id; customers without orders absent. */
  public Map<String, CustomerAggregate> oracle() {
    Map<Long, Upsert> latest = new HashMap<>();
    forEach(u -> {
      if (u.tombstone()) {
        latest.remove(u.id());
      } else {
        latest.put(u.id(), u);
      }
    });
    Map<String, CustomerAggregate> out = new TreeMap<>();
    for (Upsert u : latest.values()) {
      out.merge(u.customer(), CustomerAggregate.ZERO.plus(u.amount()),
          (a, b) -> new CustomerAggregate(a.count() + b.count(), a.sum().add(b.sum())));
    }
    return out;
  }

  /** Both maps hold the same customers with the same counts and numerically equal sums. */
  public static boolean sameResult(Map<String, CustomerAggregate> a, Map<String, CustomerAggregate> b) {
    return normalized(a).equals(normalized(b));
  }

  /** The map with every sum in canonical form, for equality and readable diffs. */
  public static Map<String, CustomerAggregate> normalized(Map<String, CustomerAggregate> m) {
    Map<String, CustomerAggregate> out = new TreeMap<>();
    m.forEach((k, v) -> out.put(k, v.normalized()));
    return out;
  }
}
