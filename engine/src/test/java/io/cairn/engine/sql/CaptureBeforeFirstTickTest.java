package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A view created after the last tick and captured before its first one has computed nothing: its
 * empty state is not its contents. The capture leaves it out, so the restore recomputes it from
 * its inputs instead of taking the empty state for complete (which lost every row its inputs held).
 */
class CaptureBeforeFirstTickTest {
  @Test
  void aViewCapturedBeforeItsFirstTickIsRecomputedNotRestoredEmpty() {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    EngineState state;
    long position;
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a, log);
      s.execute(SqlFixture.GEN);
      a.tickUntilCaughtUp(1000);
      s.execute("CREATE MATERIALIZED VIEW per_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
      state = a.capture(); // between the CREATE and the view's first tick
      position = s.position();
    }
    Map<Long, Long> counts = new TreeMap<>();
    SqlFixture.table(5000).values().forEach(r -> counts.merge(r.getLong(1), 1L, Long::sum));
    List<Row> expected = new ArrayList<>();
    counts.forEach((c, n) -> expected.add(Row.of(c, n)));
    try (Engine b = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(b, log);
      s.replay(position);
      Engine.Restored restored = b.restore(state);
      assertThat(restored.recomputedViews()).containsExactly("per_cat");
      assertThat(restored.rereadSources()).isEmpty();
      b.tickUntilCaughtUp(1000);
      assertThat(b.peek("per_cat")).isEqualTo(expected);
    }
  }
}
