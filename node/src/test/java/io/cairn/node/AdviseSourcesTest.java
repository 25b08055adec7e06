package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.connectors.kafka.KafkaSourceConnector;
import io.cairn.connectors.postgres.PostgresConnector;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.RetentionLimits;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.node.advise.AdviceReport;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.testkit.kafka.KafkaBroker;
import io.cairn.testkit.postgres.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code advise} against a real Kafka broker and a real PostgreSQL: the probes read the settings the
 * systems have, and a serving node warns about the ones too short for the schedule it recommends.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AdviseSourcesTest {
  private static final String PG_SECRET = "CAIRN_ADVISE_PG_PASSWORD";

  private final KafkaBroker broker = KafkaBroker.shared();

  private SourceDefinition kafka(String brokers, String topic) {
    return new SourceDefinition("src", "kafka", Map.of("brokers", brokers, "topic", topic), Schema.EMPTY, List.of(), Envelope.NONE);
  }

  @Test
  void theKafkaProbeReadsTheTopicsRetentionAndPartitions() {
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("advise-short"), 3,
        Map.of("retention.ms", "3600000", "retention.bytes", "1048576"));
    RetentionLimits l = new KafkaSourceConnector().retentionProbe().orElseThrow()
        .probe(kafka(broker.bootstrapServers(), topic), ref -> "", Duration.ofSeconds(5));
    assertThat(l.reach()).isEqualTo(RetentionLimits.Reach.ANY_SNAPSHOT);
    assertThat(l.maxAge()).isEqualTo(Duration.ofHours(1));
    assertThat(l.maxBytes()).isEqualTo(1 << 20);
    assertThat(l.shares()).isEqualTo(3);
    assertThat(l.settings()).containsEntry("retention.ms", "3600000").containsEntry("partitions", "3");
    String forever = broker.createTopic(KafkaBroker.uniqueTopic("advise-forever"), 1, Map.of("retention.ms", "-1"));
    RetentionLimits f = new KafkaSourceConnector().retentionProbe().orElseThrow()
        .probe(kafka(broker.bootstrapServers(), forever), ref -> "", Duration.ofSeconds(5));
    assertThat(f.maxAge()).as("infinite").isNull();
    assertThat(f.maxBytes()).isEqualTo(-1);
  }

  @Test
  void anUnreachableBrokerFailsTheProbeWithinItsTimeout() throws Exception {
    int closed;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> new KafkaSourceConnector().retentionProbe().orElseThrow()
        .probe(kafka("127.0.0.1:" + closed, "nowhere"), ref -> "", Duration.ofSeconds(2)))
        .hasMessageContaining("Cannot read the retention of topic 'nowhere'");
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertThat(ms).as("bounded by the 2 s timeout plus the admin client's 1 s close").isLessThan(4_500);
  }

  @Test
  void aServingNodeWarnsAboutAShortTopicAndABoundedSlot(@TempDir Path dir) throws Exception {
    PostgresServer pg = PostgresServer.shared();
    String db = pg.createUniqueDatabase("advise");
    String topic = broker.createTopic(KafkaBroker.uniqueTopic("advise-node"), 2, Map.of("retention.ms", "3600000"));
    try (Connection c = pg.connect(db); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT)");
      st.execute("ALTER TABLE customers REPLICA IDENTITY FULL");
      st.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
      st.execute("SELECT pg_reload_conf()");
    }
    Path yaml = dir.resolve("cairn.yaml");
    Files.writeString(yaml, String.join("\n",
        "store:", "  uri: \"file://" + dir.resolve("store") + "?create=true\"",
        "engine:", "  tick:", "    max-duration: 50ms",
        "http:", "  port: 0", "pgwire:", "  port: 0",
        "init:",
        "  - \"CREATE SOURCE orders FROM KAFKA (brokers = '" + broker.bootstrapServers() + "', topic = '" + topic
            + "') FORMAT JSON ENVELOPE UPSERT (id BIGINT, amount DOUBLE, PRIMARY KEY (id))\"",
        "  - \"CREATE SOURCE customers FROM POSTGRES (host = '" + pg.host() + "', port = " + pg.port() + ", database = '" + db
            + "', user = '" + pg.user() + "', password = SECRET '" + PG_SECRET + "', table = 'public.customers')\"",
        ""));
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    AtomicBoolean writing = new AtomicBoolean(true);
    Thread writer = new Thread(() -> {
      long id = 0;
      try (Connection c = pg.connect(db); Statement st = c.createStatement()) {
        while (writing.get()) {
          id++;
          broker.produce(topic, (int) (id % 2), Long.toString(id), "{\"id\":" + id + ",\"amount\":1.5}");
          st.execute("INSERT INTO customers VALUES (" + id + ", 'c" + id + "')");
          Thread.sleep(10);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, "advise-writer");
    writer.setDaemon(true);
    try (Node node = Node.recover(cfg, Node.Options.defaults().withSecrets(ref -> pg.password()))) {
      writer.start();
      node.serve();
      assertThatThrownBy(() -> node.advise(Duration.ofMinutes(10))).as("right after the start")
          .isInstanceOf(NodeUnavailableException.class).hasMessageContaining("ask again in a few seconds");
      Thread.sleep(AdviseService.MIN_INGEST_WINDOW.toMillis() + 500);
      JsonNode status = new ObjectMapper().readTree(node.statusJson());
      assertThat(status.at("/sources/orders/ingest/recordsPerSecond").asDouble()).as(status.toString()).isPositive();
      assertThat(status.at("/sources/orders/ingest/windowSeconds").asDouble()).isGreaterThanOrEqualTo(5.0);

      long t0 = System.nanoTime();
      AdviceReport r = node.advise(Duration.ofMinutes(10));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(ms).as("the probes run in parallel, each within a few seconds").isLessThan(5_000);
      assertThat(r.advice().feasible()).as(r.toText()).isTrue();
      assertThat(r.advice().inputs().sources()).extracting(s -> s.name()).containsExactly("orders", "customers");
      assertThat(r.advice().inputs().sources().get(0).ingestRecordsPerSecond()).isPositive();
      assertThat(r.retention()).hasSize(2);
      assertThat(r.warnings()).as(r.toText())
          .anyMatch(w -> w.startsWith("source 'orders': retention.ms=3600000") && w.contains("even from the newest snapshot"))
          .anyMatch(w -> w.startsWith("source 'customers': max_slot_wal_keep_size=1MB") && w.contains("invalidate the slot"));
      // the start was a full replay of nothing: no replay rate measured, the connectors' typical ones are assumed
      assertThat(r.assumptions()).anyMatch(a -> a.startsWith("source 'orders' replays 200,000 records/s: typical for kafka"))
          .anyMatch(a -> a.startsWith("source 'customers' replays 10,000 records/s: typical for postgres"));
      String text = r.toText();
      assertThat(text).contains("recommended:", "snapshots.cron", "WARNING: source 'orders'", "TOO SHORT");
      Map<String, Object> json = r.toJsonTree();
      assertThat(json).containsKeys("recommended", "current", "retention", "warnings", "assumptions");

      // the same question at a live ingest stated for one source: that source's rate is the stated one, the other's measured
      AdviceReport stated = node.advise(Duration.ofMinutes(10),
          Map.of("orders", new io.cairn.node.advise.Advisor.Ingest(5_000, 400_000, Duration.ofHours(1))));
      assertThat(stated.advice().inputs().sources().get(0).ingestRecordsPerSecond()).isEqualTo(5_000);
      assertThat(stated.advice().inputs().sources().get(0).ingestWindow()).isEqualTo(Duration.ofHours(1));
      assertThat(stated.advice().inputs().sources().get(1).ingestRecordsPerSecond()).isPositive().isLessThan(1_000);
      assertThat(stated.advice().liveShare()).as("5,000/s of orders' assumed 200,000/s, plus customers'")
          .isGreaterThan(r.advice().liveShare()).isGreaterThanOrEqualTo(0.025);
    } finally {
      writing.set(false);
      writer.join(5000);
      try (Connection c = pg.connect(db); Statement st = c.createStatement()) {
        st.execute("ALTER SYSTEM RESET max_slot_wal_keep_size");
        st.execute("SELECT pg_reload_conf()");
      }
    }
  }
}
