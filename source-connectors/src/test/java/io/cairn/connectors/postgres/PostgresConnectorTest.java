package io.cairn.connectors.postgres;

import io.cairn.engine.source.Secrets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** Validation and pure helpers: no server needed. */
class PostgresConnectorTest {
  private static Map<String, String> options() {
    Map<String, String> o = new HashMap<>();
    o.put("host", "127.0.0.1");
    o.put("database", "shop");
    o.put("user", "cairn");
    o.put("password", Secrets.reference("PG_PASSWORD"));
    o.put("table", "public.orders");
    return o;
  }

  private static SourceDefinition def(Map<String, String> o) {
    return new SourceDefinition("orders", "postgres", o, Schema.EMPTY, List.of(), Envelope.NONE);
  }

  @Test
  void isFoundByServiceLoaderUnderItsName() {
    assertThat(ServiceLoader.load(SourceConnector.class).stream().map(p -> p.get().name())).contains("postgres");
  }

  @Test
  void validateCompletesTheEnvelopeWithoutConnecting() {
    SourceDefinition d = new PostgresConnector().validate(def(options()));
    assertThat(d.envelope()).isEqualTo(Envelope.DEBEZIUM);
    PostgresSourceConfig c = PostgresSourceConfig.from(d);
    assertThat(c.port()).isEqualTo(5432);
    assertThat(c.slot()).isEqualTo("cairn_orders");
    assertThat(c.publication()).isEqualTo("cairn_orders");
    assertThat(c.slotLost()).isEqualTo(PostgresSourceConfig.SlotLostPolicy.FAIL);
    assertThat(c.passwordRef()).isEqualTo("PG_PASSWORD");
  }

  @Test
  void badOptionsNameTheKey() {
    Map<String, String> o = options();
    o.remove("host");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(o))).hasMessageContaining("option 'host' is required");
    Map<String, String> p = options();
    p.put("slot-lost", "ignore");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(p)))
        .hasMessageContaining("option 'slot-lost'").hasMessageContaining("fail, reload");
    Map<String, String> q = options();
    q.put("password", "hunter2!");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(q)))
        .hasMessageContaining("option 'password' must be a secret reference").hasMessageNotContaining("hunter2");
    Map<String, String> bare = options();
    bare.put("password", "PG_PASSWORD");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(bare))).hasMessageContaining("option 'password'")
        .hasMessageNotContaining("PG_PASSWORD");
    Map<String, String> r = options();
    r.put("tabel", "x");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(r))).hasMessageContaining("option 'tabel' unknown option");
    Map<String, String> s = options();
    s.put("table", "a.b.c");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(s))).hasMessageContaining("option 'table'");
    Map<String, String> t = options();
    t.put("port", "99999");
    assertThatThrownBy(() -> new PostgresConnector().validate(def(t))).hasMessageContaining("option 'port'");
  }

  @Test
  void offsetsRoundTripWithDebeziumTypes() {
    Map<String, Object> dbz = new HashMap<>();
    dbz.put("lsn", 23_456_789L);
    dbz.put("lsn_proc", 23_456_700L);
    dbz.put("lsn_commit", 23_456_000L);
    dbz.put("txId", 771L);
    dbz.put("ts_usec", 1_700_000_000_000_000L);
    dbz.put("messageType", "UPDATE");
    SourceOffsets s = DebeziumOffsets.toSource(dbz);
    assertThat(DebeziumOffsets.toDebezium(s)).isEqualTo(dbz);
    assertThat(DebeziumOffsets.confirmLsn(s)).isEqualTo(23_456_000L);
    assertThat(DebeziumOffsets.initialLoadIncomplete(s)).isFalse();
    assertThat(DebeziumOffsets.initialLoadIncomplete(new SourceOffsets(Map.of("snapshot", "INITIAL", "lsn", "5")))).isTrue();
    assertThat(DebeziumOffsets.initialLoadIncomplete(
        new SourceOffsets(Map.of("snapshot", "INITIAL", "last_snapshot_record", "true", "lsn", "5")))).isFalse();
    assertThat(DebeziumOffsets.formatLsn(DebeziumOffsets.parseLsn("1A/16B3748"))).isEqualTo("1A/16B3748");
  }

  @Test
  void retentionGuardWarnsWhenOneSnapshotIntervalOfWalDoesNotFit() {
    long oneGiB = 1L << 30;
    // 100 KiB/s for a day is ~8.2 GiB: a 1 GiB limit loses the slot
    assertThat(PostgresRetentionGuard.check(oneGiB, Duration.ofDays(1), 100 * 1024))
        .hasValueSatisfying(w -> assertThat(w).contains("max_slot_wal_keep_size").contains("invalidate"));
    // hourly snapshots: ~351 MiB expected, x2 margin fits in 1 GiB
    assertThat(PostgresRetentionGuard.check(oneGiB, Duration.ofHours(1), 100 * 1024)).isEmpty();
    assertThat(PostgresRetentionGuard.check(-1, Duration.ofDays(1), 100 * 1024)).isEmpty();
    assertThatThrownBy(() -> PostgresRetentionGuard.check(oneGiB, Duration.ZERO, 1)).hasMessageContaining("interval");
  }
}
