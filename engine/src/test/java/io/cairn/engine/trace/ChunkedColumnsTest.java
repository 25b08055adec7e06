package io.cairn.engine.trace;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A merge's output in chunks ({@link ColumnVector.Longs#chunked}) reads like the same output in
 * one array: the same entries, the same key seeks from any position, the same comparisons and the
 * same point lookups through a {@link Spine.Reader}. The chunks here hold 2 to 16 values, so a
 * batch of a few hundred entries spans many of them.
 */
class ChunkedColumnsTest {
  static final Schema KEY = Schema.of(Column.of("k", Type.BIGINT));
  static final Schema VAL = Schema.of(Column.of("v", Type.BIGINT));

  /** A batch of random updates at {@code time}, keys drawn from {@code [0, keys)}. */
  static Batch sealed(Random r, int n, long keys, long time) {
    List<Update> ups = new ArrayList<>();
    for (int x = 0; x < n; x++) {
      ups.add(new Update(Row.of((long) r.nextInt((int) keys)), Row.of((long) r.nextInt(3)), time, r.nextInt(4) == 0 ? -1 : 1));
    }
    return Batch.fromUpdates(KEY, VAL, ups, new Description(time, time + 1, 0));
  }

  static Batch merge(Batch older, Batch newer, int shift) {
    Merger m = new Merger(older, newer, 0, shift, shift == 30 ? Integer.MAX_VALUE : 1 << shift);
    while (!m.isDone()) {
      m.work(7); // a little at a time: segments start and stop anywhere
    }
    return m.result();
  }

  @Test
  void aChunkedMergeOutputHasTheEntriesSeeksAndComparisonsOfOneArray() {
    Random r = new Random(3);
    int checkedSeeks = 0;
    for (int round = 0; round < 200; round++) {
      int shift = 1 + r.nextInt(4);
      Batch older = sealed(r, 1 + r.nextInt(300), 1 + r.nextInt(200), 1);
      Batch newer = sealed(r, 1 + r.nextInt(300), 1 + r.nextInt(200), 2);
      Batch chunked = merge(older, newer, shift);
      Batch whole = merge(older, newer, 30);
      assertThat(((ColumnVector.Longs) whole.keyColumn(0)).isChunked()).isFalse();
      if (chunked.size() > 1 << shift) {
        assertThat(((ColumnVector.Longs) chunked.keyColumn(0)).isChunked()).as("round %d", round).isTrue();
      }
      assertThat(chunked.size()).isEqualTo(whole.size());
      for (int i = 0; i < whole.size(); i++) {
        assertThat(chunked.update(i)).as("round %d entry %d", round, i).isEqualTo(whole.update(i));
        int j = r.nextInt(whole.size());
        assertThat(Integer.signum(chunked.compareEntry(i, whole, j))).isEqualTo(Integer.signum(whole.compareEntry(i, whole, j)));
        assertThat(Integer.signum(whole.compareKey(j, chunked, i))).isEqualTo(Integer.signum(whole.compareKey(j, whole, i)));
      }
      for (int s = 0; s < 50; s++) {
        long key = r.nextInt(220) - 10;
        int from = r.nextInt(whole.size() + 1);
        int naive = from;
        while (naive < whole.size() && (long) whole.key(naive).get(0) < key) {
          naive++;
        }
        assertThat(chunked.seekLongKey(key, from)).as("round %d: seek %d from %d", round, key, from).isEqualTo(naive);
        assertThat(chunked.seekKey(Row.of(key), from)).isEqualTo(naive);
        checkedSeeks++;
      }
    }
    assertThat(checkedSeeks).isEqualTo(200 * 50);
  }

  @Test
  void pointLookupsThroughAReaderFindTheSameEntries() {
    Random r = new Random(5);
    for (int round = 0; round < 50; round++) {
      int shift = 1 + r.nextInt(3);
      Batch a = merge(sealed(r, 200, 150, 1), sealed(r, 200, 150, 2), shift);
      Batch b = merge(sealed(r, 100, 150, 3), sealed(r, 100, 150, 4), shift);
      Batch aw = merge(a, Batch.empty(KEY, VAL, new Description(4, 5, 0)), 30);
      Batch bw = merge(b, Batch.empty(KEY, VAL, new Description(4, 5, 0)), 30);
      Spine.Reader chunked = Spine.reader(List.of(a, b));
      Spine.Reader whole = Spine.reader(List.of(aw, bw));
      for (long key = -2; key < 155; key += 1 + r.nextInt(3)) {
        List<Update> got = new ArrayList<>();
        List<Update> want = new ArrayList<>();
        chunked.forEachLong(key, (batch, i) -> got.add(batch.update(i)));
        whole.forEachLong(key, (batch, i) -> want.add(batch.update(i)));
        assertThat(got).as("round %d key %d", round, key).isEqualTo(want);
      }
    }
  }
}
