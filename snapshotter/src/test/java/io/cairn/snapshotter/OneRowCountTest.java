package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.objectstore.InMemoryObjectStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Regression (issue 14): "Snapshot … of tick N: X rows" and "Committed … Y rows" disagreed when a
 * merged batch was stored as its inputs' files (X counted the merged batch, Y the files). Both, the
 * result and the manifest now count the rows of the referenced files, which is what a load yields.
 */
class OneRowCountTest {
  static final Schema KEY = Schema.of(Column.of("k", Type.BIGINT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT));

  static Batch batch(long lower, long upper, long since, long... keysAndDiffs) {
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < keysAndDiffs.length; i += 2) {
      u.add(new Update(Row.of(keysAndDiffs[i]), Row.of(0L), since, keysAndDiffs[i + 1]));
    }
    return Batch.fromUpdates(KEY, VAL, u, new Description(lower, upper, since));
  }

  static EngineState state(long tick, Batch... batches) {
    return new EngineState(tick, 1, Map.of(), List.of(new ArrangementState("arr", 0, KEY, VAL, List.of(batches), tick + 1)));
  }

  @Test
  void logLinesResultManifestAndLoadAgreeWhenAMergeIsStoredAsItsInputs() {
    Logger log = (Logger) LoggerFactory.getLogger(Snapshotter.class);
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    log.addAppender(appender);
    try (InMemoryObjectStore store = new InMemoryObjectStore();
        Snapshotter s = Snapshotter.builder(store).prefix("p").encodeExecutor(Runnable::run).groupRows(0).build();
        SnapshotReader reader = new SnapshotReader(store, "p", Runnable::run, 1)) {
      // tick 5: two batches, 4 + 3 rows; key 2 is retracted in the second
      Batch a = batch(0, 3, 0, 1, 1, 2, 1, 3, 1, 4, 1);
      Batch b = batch(3, 6, 3, 2, -1, 5, 1, 6, 1);
      s.snapshot(state(5, a, b), 1);
      // tick 7: the two merged into one batch of 5 rows (the key 2 updates consolidate away at since 3)
      Batch merged = batch(0, 6, 3, 1, 1, 3, 1, 4, 1, 5, 1, 6, 1);
      SnapshotResult r = s.snapshot(state(7, merged), 2);

      assertThat(r.filesReused()).isEqualTo(2); // the merge is stored as its inputs' files
      Manifest m = reader.read(reader.list().get(0));
      assertThat(r.rows()).isEqualTo(m.rows()).isEqualTo(7);
      assertThat(reader.load(m).rows()).isEqualTo(7);
      List<Long> logged = new ArrayList<>();
      Pattern p = Pattern.compile("of tick 7: (\\d+) rows");
      for (ILoggingEvent e : appender.list) {
        Matcher x = p.matcher(e.getFormattedMessage());
        if (x.find()) {
          logged.add(Long.parseLong(x.group(1)));
        }
      }
      assertThat(logged).containsExactly(7L, 7L);
    } finally {
      log.detachAppender(appender);
    }
  }
}
