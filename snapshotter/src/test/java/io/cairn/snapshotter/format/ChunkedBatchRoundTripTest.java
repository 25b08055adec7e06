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
 * entry equal, as a snapshot does with it, and held in chunks again ({@code ColumnVector.LongsWriter}),
 * NULLs included.
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
    assertSameEntries(merged, back);
    // read back, it is held as the merge held it: every long column chunked alike, times and diffs too
    assertThat(((ColumnVector.Longs) back.keyColumn(0)).isChunked()).as("the loaded key column is chunked").isTrue();
    assertThat(((ColumnVector.Longs) back.valColumn(1)).isChunked()).isTrue();
    assertThat(back.timesOrNull().isChunked()).as("the loaded times are chunked").isTrue();
    assertThat(back.diffsOrNull().isChunked()).as("the loaded diffs are chunked").isTrue();
    // and it merges as a merge's output does (a merge refuses a batch whose columns are chunked differently)
    Batch tick = tick(r, 3, new Description(3, 4, 0));
    assertSameEntries(Batch.mergeAll(List.of(merged, tick)), Batch.mergeAll(List.of(back, tick)));
  }

  @Test
  void aLargeBatchWithNullsIsReadBackChunkedWithItsNulls() {
    Schema val = Schema.of(Column.of("v", Type.BIGINT), Column.of("at", Type.TIMESTAMP));
    List<Update> ups = new ArrayList<>();
    int n = (1 << 20) + 12_345;
    for (long id = 0; id < n; id++) {
      ups.add(new Update(Row.of(id), Row.of(id % 1_000 == 7 ? null : id * 3, 1_700_000_000_000L + id), 5, 1));
    }
    Batch batch = Batch.fromUpdates(KEY, val, ups, new Description(5, 6, 0));
    assertThat(((ColumnVector.Longs) batch.keyColumn(0)).isChunked()).as("a sealed batch is one array").isFalse();

    byte[] file = ParquetBatchFiles.toBytes("arr", 0, batch);
    Batch back = ParquetBatchFiles.read("test", file, batch.id(), KEY, val, batch.description(), batch.size());
    ColumnVector.Longs v = (ColumnVector.Longs) back.valColumn(0);
    assertThat(v.isChunked()).as("a loaded column over a million rows is chunked").isTrue();
    int nullRows = 0;
    for (int i = 0; i < n; i++) {
      assertThat(v.isNull(i)).as("row %d", i).isEqualTo(i % 1_000 == 7);
      if (v.isNull(i)) {
        assertThat(v.getLong(i)).as("a NULL row holds 0").isZero();
        nullRows++;
      }
    }
    assertThat(nullRows).isEqualTo((n - 8) / 1_000 + 1);
    assertSameEntries(batch, back);
    // a loaded chunked column with NULLs is written again (the next snapshot) and read back the same
    Batch again = ParquetBatchFiles.read("test", ParquetBatchFiles.toBytes("arr", 0, back), batch.id(), KEY, val,
        batch.description(), batch.size());
    assertSameEntries(batch, again);
  }

  private static void assertSameEntries(Batch expected, Batch actual) {
    assertThat(actual.size()).isEqualTo(expected.size());
    for (int i = 0; i < expected.size(); i++) {
      if (!expected.update(i).equals(actual.update(i))) {
        throw new AssertionError("entry " + i + ": expected " + expected.update(i) + ", got " + actual.update(i));
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
