package io.cairn.snapshotter.format;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A merge's output larger than one chunk keeps its long columns, times and diffs in chunks (see
 * {@code ColumnVector.Longs}); such a batch is written to a batch file and read back entry for
 * entry equal, as a snapshot does with it.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // measured under 10 s
class ChunkedBatchRoundTripTest {
  static final Schema KEY = Schema.of(Column.of("id", Type.BIGINT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT), Column.of("at", Type.TIMESTAMP));

  @Test
  void aChunkedMergeOutputIsWrittenAndReadBackEntryForEntry() {
    Random r = new Random(7);
    // two ticks of 700k entries each: their merge (1.4M entries) is over one chunk of 1Mi values;
    // times differ (1 and 2, nothing compacted) and diffs are mixed, so all five columns are kept
    Batch older = tick(r, 1, new Description(1, 2, 0));
    Batch newer = tick(r, 2, new Description(2, 3, 0));
    Batch merged = Batch.mergeAll(List.of(older, newer));
    assertThat(merged.size()).isGreaterThan(1 << 20);
    assertThat(((ColumnVector.Longs) merged.keyColumn(0)).isChunked()).as("the merge output is chunked").isTrue();
    assertThat(merged.timesOrNull()).isNotNull();
    assertThat(merged.timesOrNull().isChunked()).isTrue();
    assertThat(merged.diffsOrNull()).isNotNull();
    assertThat(merged.diffsOrNull().isChunked()).isTrue();

    byte[] file = ParquetBatchFiles.toBytes("arr", 0, merged);
    Batch back = ParquetBatchFiles.read("test", file, merged.id(), KEY, VAL, merged.description(), merged.size());
    assertThat(back.size()).isEqualTo(merged.size());
    for (int i = 0; i < merged.size(); i++) {
      if (!merged.update(i).equals(back.update(i))) {
        throw new AssertionError("entry " + i + ": wrote " + merged.update(i) + ", read " + back.update(i));
      }
    }
  }

  private static Batch tick(Random r, long time, Description d) {
    List<Update> ups = new ArrayList<>();
    for (int x = 0; x < 700_000; x++) {
      long id = r.nextInt(2_000_000);
      ups.add(new Update(Row.of(id), Row.of(id % 97, 1_700_000_000_000L + id), time, r.nextInt(10) == 0 ? -1 : 1 + r.nextInt(2)));
    }
    return Batch.fromUpdates(KEY, VAL, ups, d);
  }
}
