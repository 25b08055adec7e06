package io.cairn.snapshotter.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.sql.SqlSession;
import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.objectstore.FaultInjectingObjectStore.InjectedFault;
import io.cairn.objectstore.FaultInjectingObjectStore.Kind;
import io.cairn.objectstore.InMemoryObjectStore;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

/** A catalog append that fails leaves the engine unchanged; if the entry was in fact written, the next catch-up applies it. */
class UnknownOutcomeTest {
  static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");
  static final String GEN = "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 10, limit = 100)";
  static final String VIEW = "CREATE MATERIALIZED VIEW v AS SELECT id FROM gen";

  @Test
  void writtenButUnacknowledgedAppendIsAppliedByTheNextCatchUp() {
    InMemoryObjectStore mem = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(mem);
    try (Engine e = Engine.builder().workers(1).build()) {
      SqlSession s = new SqlSession(e, new ObjectStoreCatalogLog(store), Clock.fixed(T0, ZoneOffset.UTC));
      s.execute(GEN);
      String hash0 = s.lastHash();
      // the store writes entry 1 (chained to entry 0, as the session writes it), then the response is lost
      store.failWhen(c -> c.kind() == Kind.PUT_IF_ABSENT && c.key().equals(ObjectStoreCatalogLog.key(1)), c -> {
        mem.putIfAbsent(c.key(), ObjectStoreCatalogLog.encode(CatalogEntry.of(1, VIEW, T0, hash0, 0)));
        return new InjectedFault(c);
      });
      assertThatThrownBy(() -> s.execute(VIEW)).isInstanceOf(InjectedFault.class);
      assertThat(e.dataflow("v")).as("the view is undone locally").isEmpty();
      assertThat(s.position()).isEqualTo(1);
      store.clearFaults();
      assertThat(s.replayAll()).isEqualTo(2);
      assertThat(e.dataflow("v")).hasValueSatisfying(d -> assertThat(d.id()).isEqualTo(1));
    }
  }

  @Test
  void failedAppendChangesNothingAndCanBeRetried() {
    InMemoryObjectStore mem = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(mem);
    try (Engine e = Engine.builder().workers(1).build()) {
      SqlSession s = new SqlSession(e, new ObjectStoreCatalogLog(store), Clock.fixed(T0, ZoneOffset.UTC));
      s.execute(GEN);
      store.failWhen(c -> c.kind() == Kind.PUT_IF_ABSENT);
      assertThatThrownBy(() -> s.execute(VIEW)).isInstanceOf(InjectedFault.class);
      assertThatThrownBy(() -> s.execute("DROP SOURCE gen")).isInstanceOf(InjectedFault.class);
      assertThat(e.dataflows()).extracting(d -> d.name()).containsExactly("gen");
      store.clearFaults();
      assertThat(s.replayAll()).isEqualTo(1);
      s.execute(VIEW);
      assertThat(e.dataflow("v")).hasValueSatisfying(d -> assertThat(d.id()).isEqualTo(1));
    }
  }
}
