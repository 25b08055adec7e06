package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.sink.Sink;
import io.cairn.engine.sink.SinkConnector;
import io.cairn.engine.sink.SinkDefinition;
import io.cairn.engine.sink.SinkTrack;
import io.cairn.engine.source.Secrets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The sink's exactly-once bookkeeping ({@link SinkTrack}) against an in-memory destination that
 * fails on purpose: commits that fail before anything lands, commits that land and then report a
 * failure (outcome unknown), and crashes after which a new engine restores a snapshot taken
 * earlier — usually older than what the destination holds. After every commit the destination's
 * contents (the sum of every committed change) must equal the view, and at the end the
 * generator's oracle; labels must only go up.
 */
class SinkTrackTest {

  /** The destination: committed transactions in order; a position is how many of them there are. */
  static final class Destination {
    final List<Row> rows = new ArrayList<>();
    final List<Long> diffs = new ArrayList<>();
    final List<Integer> txnEnds = new ArrayList<>();
    final List<Long> labels = new ArrayList<>();
    int failBefore;
    int failAfter;
    Random random;

    Map<Row, Long> contents(int txns) {
      Map<Row, Long> m = new TreeMap<>();
      int end = txns == 0 ? 0 : txnEnds.get(txns - 1);
      for (int i = 0; i < end; i++) {
        m.merge(rows.get(i), diffs.get(i), (a, b) -> a + b == 0 ? null : a + b);
      }
      return m;
    }
  }

  static final class MemoryConnector implements SinkConnector {
    final Destination dest;

    MemoryConnector(Destination dest) {
      this.dest = dest;
    }

    @Override
    public String name() {
      return "memory";
    }

    @Override
    public void validate(SinkDefinition def, Schema schema) {}

    @Override
    public Sink create(SinkDefinition def, Schema schema, int[] keyCols, Secrets secrets, Consumer<String> points) {
      Destination d = dest;
      return new Sink() {
        @Override
        public Progress open() {
          return new Progress(d.labels.isEmpty() ? -1 : d.labels.get(d.labels.size() - 1), Map.of());
        }

        @Override
        public ReadBack readBack(Map<String, String> from) {
          int start = from == null ? 0 : Integer.parseInt(from.get("0"));
          int startRow = start == 0 ? 0 : d.txnEnds.get(start - 1);
          int end = d.txnEnds.isEmpty() ? 0 : d.txnEnds.get(d.txnEnds.size() - 1);
          long[] diffs = new long[end - startRow];
          for (int i = startRow; i < end; i++) {
            diffs[i - startRow] = d.diffs.get(i);
          }
          return new ReadBack(List.copyOf(d.rows.subList(startRow, end)), diffs, end - startRow, Map.of("0", String.valueOf(d.txnEnds.size())), -1);
        }

        @Override
        public Map<String, String> commit(long tick, SinkTrack.Batch batch) {
          if (d.random.nextInt(8) == 0) {
            d.failBefore++;
            throw new IllegalStateException("broker away before the commit");
          }
          for (int i = 0; i < batch.size(); i++) {
            d.rows.add(batch.rows().get(i));
            d.diffs.add(batch.diffs()[i]);
          }
          d.txnEnds.add(d.rows.size());
          d.labels.add(tick);
          if (d.random.nextInt(8) == 0) {
            d.failAfter++;
            throw new IllegalStateException("the commit landed, then the connection dropped: outcome unknown");
          }
          return Map.of("0", String.valueOf(d.txnEnds.size()));
        }

        @Override
        public void close() {}
      };
    }
  }

  private static Map<Row, Long> counted(List<Row> rows) {
    Map<Row, Long> m = new TreeMap<>();
    rows.forEach(r -> m.merge(r, 1L, Long::sum));
    return m;
  }

  private static final String VIEW = "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category";

  private static Engine engine(Destination dest) {
    return Engine.builder().workers(2).tickPolicy(new io.cairn.engine.runtime.TickPolicy(150, java.time.Duration.ofMillis(20)))
        .clock(SqlFixture.CLOCK).sinkConnector(new MemoryConnector(dest)).build();
  }

  @Test
  void theDestinationHoldsEveryChangeOnceThroughFailedCommitsAndRestoresOfOlderSnapshots() {
    Destination dest = new Destination();
    dest.random = new Random(42);
    Random random = new Random(7);
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    Engine e = engine(dest);
    SqlSession s = SqlFixture.session(e, log);
    s.execute(SqlFixture.GEN);
    s.execute(VIEW);
    s.execute("CREATE SINK out FROM by_cat INTO MEMORY (topic = 't') FORMAT JSON ENVELOPE UPSERT");
    List<EngineState> snapshots = new ArrayList<>();
    Sink sink = null;
    int crashes = 0;
    int olderThanDestination = 0;
    int commitsChecked = 0;
    try {
      for (int step = 0; step < 400; step++) {
        e.catchUpTick();
        if (random.nextInt(5) == 0) {
          snapshots.add(e.capture());
        }
        SinkTrack track = e.sink("out").orElseThrow();
        try {
          if (sink == null) {
            sink = new MemoryConnector(dest).create(track.definition(), track.schema(), track.keyCols(), null, p -> {});
            Sink.Progress p = sink.open();
            track.reconcile(sink.readBack(track.positions()), p.tick());
          }
          SinkTrack.Batch b = track.batch();
          long label = track.nextLabel();
          track.committed(b, label, sink.commit(label, b));
          assertThat(track.pendingRows()).isZero();
          assertThat(dest.contents(dest.txnEnds.size())).as("the destination after the commit of tick %d", label)
              .isEqualTo(counted(e.peek("by_cat")));
          commitsChecked++;
        } catch (IllegalStateException failed) {
          sink = null; // settled by the read-back at the next open
        }
        if (step % 37 == 36 && !snapshots.isEmpty()) {
          // a crash: a new engine restores one of the snapshots, perhaps one older than the destination
          EngineState st = snapshots.get(random.nextInt(snapshots.size()));
          if (!dest.labels.isEmpty() && dest.labels.get(dest.labels.size() - 1) > st.tick()) {
            olderThanDestination++;
          }
          e.close();
          e = engine(dest);
          s = SqlFixture.session(e, log);
          s.replayAll();
          e.restore(st);
          snapshots.removeIf(x -> x.tick() > st.tick()); // what the crashed run took after it is gone with it
          sink = null;
          crashes++;
        }
      }
      assertThat(e.caughtUp()).as("the generator's 5,000 records are read").isTrue();
      assertThat(dest.contents(dest.txnEnds.size())).as("the destination at the end: the oracle").isEqualTo(counted(e.peek("by_cat")));
      Map<Long, long[]> oracle = new TreeMap<>();
      SqlFixture.table(5000).values().forEach(r -> {
        long[] a = oracle.computeIfAbsent(r.getLong(1), k -> new long[2]);
        a[0]++;
        a[1] += r.getLong(2);
      });
      Map<Row, Long> want = new TreeMap<>();
      oracle.forEach((k, a) -> want.put(Row.of(k, a[0], a[1]), 1L));
      assertThat(dest.contents(dest.txnEnds.size())).isEqualTo(want);
      for (int i = 1; i < dest.labels.size(); i++) {
        assertThat(dest.labels.get(i)).as("labels only go up").isGreaterThan(dest.labels.get(i - 1));
      }
      assertThat(crashes).as("crashes").isGreaterThanOrEqualTo(8);
      assertThat(olderThanDestination).as("restores of a snapshot older than the destination's progress").isGreaterThanOrEqualTo(3);
      assertThat(dest.failBefore).as("commits that failed before landing").isGreaterThanOrEqualTo(5);
      assertThat(dest.failAfter).as("commits that landed and then failed").isGreaterThanOrEqualTo(5);
      assertThat(commitsChecked).as("commits checked against the view").isGreaterThan(100);
    } finally {
      e.close();
    }
  }

  @Test
  void anUpsertSinkNeedsAKeyAndADroppedViewTakesItsSinkOnlyWithCascade() {
    Destination dest = new Destination();
    try (Engine e = engine(dest)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM gen WHERE amount > 700");
      s.execute(VIEW);
      assertThatThrownBy(() -> s.execute("CREATE SINK k FROM big INTO MEMORY (topic = 't') FORMAT JSON ENVELOPE UPSERT"))
          .hasMessageContaining("ENVELOPE UPSERT needs a key").hasMessageContaining("KEY (col, ...)");
      s.execute("CREATE SINK k FROM big INTO MEMORY (topic = 't') KEY (id) FORMAT JSON ENVELOPE UPSERT");
      s.execute("CREATE SINK d FROM big INTO MEMORY (topic = 't2') FORMAT JSON ENVELOPE DEBEZIUM");
      s.execute("CREATE SINK c FROM by_cat INTO MEMORY (topic = 't3') FORMAT JSON ENVELOPE UPSERT");
      assertThat(e.sink("c").orElseThrow().definition().key()).containsExactly("category");
      assertThat(e.sink("d").orElseThrow().definition().key()).isEmpty();
      assertThatThrownBy(() -> s.execute("CREATE SINK k FROM big INTO MEMORY (topic = 't') KEY (id) FORMAT JSON ENVELOPE UPSERT"))
          .hasMessageContaining("already exists");
      assertThatThrownBy(() -> s.execute("CREATE SINK x FROM nope INTO MEMORY (topic = 't') FORMAT JSON ENVELOPE DEBEZIUM"))
          .hasMessageContaining("unknown view or source 'nope'");
      assertThatThrownBy(() -> s.execute("CREATE SINK x FROM big INTO NOWHERE (topic = 't') FORMAT JSON ENVELOPE DEBEZIUM"))
          .hasMessageContaining("connector 'nowhere' is not available");
      assertThatThrownBy(() -> s.execute("CREATE SINK x FROM big INTO MEMORY (topic = 't') KEY (nope) FORMAT JSON ENVELOPE UPSERT"))
          .hasMessageContaining("key column 'nope'");
      assertThatThrownBy(() -> s.execute("CREATE SINK x FROM big INTO MEMORY (topic = 't') FORMAT JSON"))
          .hasMessageContaining("ENVELOPE UPSERT or ENVELOPE DEBEZIUM");
      assertThatThrownBy(() -> s.execute("DROP VIEW big")).hasMessageContaining("sinks [k, d] write its changes");
      assertThat(s.execute("SHOW SINKS").rows()).hasSize(3);
      s.execute("DROP VIEW big CASCADE");
      assertThat(s.execute("SHOW SINKS").rows()).extracting(r -> r.get(0)).containsExactly("c");
      s.execute("DROP SINK c");
      s.execute("DROP SINK IF EXISTS c");
      assertThatThrownBy(() -> s.execute("DROP SINK c")).hasMessageContaining("unknown sink 'c'");
      assertThat(e.sinks()).isEmpty();
    }
  }
}
