package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A warm standby applies the catalog entries that follow the snapshot it holds: its engine holds
 * every source (none is sought or read, a source created later included), and one tick computes
 * the new views from the state the snapshot restored — the views the owner would have had at the
 * snapshot's tick.
 */
class StandbyReplayTest {

  @Test
  void viewsCreatedAfterTheSnapshotAreComputedFromItsStateAndNoSourceIsRead() {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    try (Engine owner = SqlFixture.engine(2); Engine standby = SqlFixture.engine(2)) {
      SqlSession o = SqlFixture.session(owner, log);
      o.execute(SqlFixture.GEN);
      owner.tickUntilCaughtUp(1000);
      var snapshot = owner.capture();
      long position = o.position();

      SqlSession s = SqlFixture.session(standby, log);
      s.setReadOnly("a standby");
      s.replay(position);
      standby.restore(snapshot);
      assertThat(standby.holdSources(Engine.Hold.ALL)).containsExactly("gen");

      // the owner goes on: a view over the snapshot's source, a view over it, a new source
      o.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
      o.execute("CREATE MATERIALIZED VIEW busy AS SELECT category FROM by_cat WHERE n > 10");
      o.execute("CREATE SOURCE gen2 FROM LOAD GENERATOR (keys = 10, limit = 100, seed = 3) ENVELOPE UPSERT");
      o.execute("CREATE MATERIALIZED VIEW gen2_n AS SELECT COUNT(*) AS n FROM gen2");

      assertThat(s.replayAll()).isEqualTo(o.position());
      assertThat(standby.heldSources()).as("a source created while every source is held is held").containsExactly("gen", "gen2");
      standby.catchUpTick();

      Map<Long, Long> counts = new TreeMap<>();
      SqlFixture.table(5000).values().forEach(r -> counts.merge(r.getLong(1), 1L, Long::sum));
      List<Row> byCat = counts.entrySet().stream().map(e -> Row.of(e.getKey(), e.getValue())).toList();
      assertThat(standby.peek("by_cat")).containsExactlyElementsOf(byCat);
      assertThat(standby.peek("busy")).containsExactlyElementsOf(
          counts.entrySet().stream().filter(e -> e.getValue() > 10).map(e -> Row.of(e.getKey())).toList());
      assertThat(standby.peek("gen2")).as("a held source is not read").isEmpty();
      assertThat(standby.offsets().get("gen")).isEqualTo(snapshot.offsets().get("gen"));
      assertThat(standby.offsets().get("gen2").values()).as("nothing read from the new source").isEmpty();

      // the same views on the owner, at the same input
      owner.tickUntilCaughtUp(1000);
      assertThat(owner.peek("by_cat")).containsExactlyElementsOf(byCat);

      // at takeover the held sources are released and read from where the snapshot left them
      standby.releaseHeldSources();
      standby.tickUntilCaughtUp(1000);
      assertThat(standby.peek("gen2")).as("the new source read from its start").hasSameElementsAs(owner.peek("gen2")).isNotEmpty();
      assertThat(standby.peek("gen2_n")).isEqualTo(owner.peek("gen2_n"));
      assertThat(standby.peek("by_cat")).containsExactlyElementsOf(byCat);
    }
  }
}
