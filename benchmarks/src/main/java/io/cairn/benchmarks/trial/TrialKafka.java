package io.cairn.benchmarks.trial;

import io.cairn.testkit.kafka.KafkaBroker;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.TreeMap;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The Kafka side of a trial run ({@code benchmarks/trial/run.sh}): a broker on 127.0.0.1, a topic
 * {@code orders} of JSON upserts with tombstones, and the naive oracle of the trial's view.
 *
 * <p>Writes {@code DIR/bootstrap} (the broker's address) once the backlog is in the topic, then
 * produces the live records at the given rate. Restarts the broker (a rolling upgrade: down 3 s,
 * same ports and data) each time {@code DIR/restart-broker} appears, and deletes that file. After
 * the last record it writes the naive oracles, computed from the last value of every id:
 * {@code DIR/oracle.txt}, for every customer with orders {@code customer|count|sum|min|max} in
 * customer order (what {@code SELECT customer, COUNT(*), SUM(amount), MIN(amount), MAX(amount) FROM
 * orders GROUP BY customer} must hold); {@code DIR/oracle-big.txt}, {@code customer|sum} of the
 * customers whose sum is above 1.05 times the average sum; {@code DIR/oracle-overall.txt}, {@code
 * count|min|max} over every order.
 * It keeps the broker up until {@code DIR/stop-kafka} appears.
 *
 * <p>Arguments: {@code DIR BACKLOG LIVE IDS RATE SEED}.
 */
public final class TrialKafka {
  private TrialKafka() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int backlog = Integer.parseInt(args[1]);
    int live = Integer.parseInt(args[2]);
    int ids = Integer.parseInt(args[3]);
    int rate = Integer.parseInt(args[4]);
    Random random = new Random(Long.parseLong(args[5]));
    Files.createDirectories(dir);
    try (KafkaBroker kafka = KafkaBroker.start()) {
      kafka.createTopic("orders", 4);
      TreeMap<Long, long[]> orders = new TreeMap<>(); // id -> {customer, amount}
      produce(kafka, orders, random, ids, backlog);
      Files.writeString(dir.resolve("bootstrap"), kafka.bootstrapServers());
      log("backlog of " + backlog + " records in topic orders at " + kafka.bootstrapServers());
      int chunk = Math.max(1, rate / 10);
      long next = System.nanoTime();
      for (int done = 0; done < live; done += chunk) {
        restartIfAsked(kafka, dir);
        int n = Math.min(chunk, live - done);
        produceRetrying(kafka, orders, random, ids, n);
        next += 100_000_000L;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        }
      }
      writeOracle(dir, orders);
      log("live phase done: " + live + " records; oracle written");
      while (!Files.exists(dir.resolve("stop-kafka"))) {
        restartIfAsked(kafka, dir);
        Thread.sleep(200);
      }
    }
  }

  private static void restartIfAsked(KafkaBroker kafka, Path dir) throws IOException {
    if (Files.deleteIfExists(dir.resolve("restart-broker"))) {
      log("restarting the broker");
      kafka.restart(Duration.ofSeconds(3));
      log("broker back");
    }
  }

  /** Produces {@code n} records, again after a failure (the broker restarting): an upsert sent twice is the same upsert. */
  private static void produceRetrying(KafkaBroker kafka, TreeMap<Long, long[]> orders, Random random, int ids, int n)
      throws InterruptedException {
    List<ProducerRecord<byte[], byte[]>> batch = records(orders, random, ids, n);
    while (true) {
      try {
        kafka.produceAll(batch);
        return;
      } catch (RuntimeException e) {
        log("produce failed, again in 1 s: " + e);
        Thread.sleep(1000);
      }
    }
  }

  private static void produce(KafkaBroker kafka, TreeMap<Long, long[]> orders, Random random, int ids, int n) {
    for (int done = 0; done < n; done += 10_000) {
      kafka.produceAll(records(orders, random, ids, Math.min(10_000, n - done)));
    }
  }

  private static List<ProducerRecord<byte[], byte[]>> records(TreeMap<Long, long[]> orders, Random random, int ids, int n) {
    List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long id = random.nextInt(ids);
      byte[] key = ("{\"id\":" + id + "}").getBytes(StandardCharsets.UTF_8);
      byte[] value;
      if (random.nextInt(20) == 0) {
        value = null;
        orders.remove(id);
      } else {
        long customer = random.nextInt(97);
        long amount = 1 + random.nextInt(1000);
        value = String.format(Locale.ROOT, "{\"id\":%d,\"customer\":%d,\"amount\":%d}", id, customer, amount)
            .getBytes(StandardCharsets.UTF_8);
        orders.put(id, new long[] {customer, amount});
      }
      batch.add(new ProducerRecord<>("orders", (int) (id % 4), key, value));
    }
    return batch;
  }

  private static void writeOracle(Path dir, TreeMap<Long, long[]> orders) throws IOException {
    TreeMap<Long, long[]> byCustomer = new TreeMap<>(); // count, sum, min, max
    long lo = Long.MAX_VALUE;
    long hi = Long.MIN_VALUE;
    for (long[] o : orders.values()) {
      long[] acc = byCustomer.computeIfAbsent(o[0], c -> new long[] {0, 0, Long.MAX_VALUE, Long.MIN_VALUE});
      acc[0]++;
      acc[1] += o[1];
      acc[2] = Math.min(acc[2], o[1]);
      acc[3] = Math.max(acc[3], o[1]);
      lo = Math.min(lo, o[1]);
      hi = Math.max(hi, o[1]);
    }
    StringBuilder sb = new StringBuilder();
    byCustomer.forEach((c, acc) -> sb.append(c).append('|').append(acc[0]).append('|').append(acc[1]).append('|').append(acc[2])
        .append('|').append(acc[3]).append('\n'));
    long sums = 0;
    for (long[] acc : byCustomer.values()) {
      sums += acc[1];
    }
    double bar = 1.05 * ((double) sums / byCustomer.size()); // as the view computes it: AVG, then the product
    StringBuilder big = new StringBuilder();
    byCustomer.forEach((c, acc) -> {
      if (acc[1] > bar) {
        big.append(c).append('|').append(acc[1]).append('\n');
      }
    });
    write(dir, "oracle-big.txt", big.toString());
    write(dir, "oracle-overall.txt", orders.size() + "|" + lo + "|" + hi + "\n");
    write(dir, "oracle.txt", sb.toString()); // last: the trial waits for this one
  }

  private static void write(Path dir, String name, String text) throws IOException {
    Path tmp = dir.resolve(name + ".tmp");
    Files.writeString(tmp, text);
    Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  private static void log(String s) {
    System.out.println(java.time.LocalTime.now() + " trial-kafka: " + s);
    System.out.flush();
  }
}
