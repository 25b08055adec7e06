package io.cairn.engine.dataflow;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.plan.Plan;
import io.cairn.engine.plan.SortKey;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Multisets;
import io.cairn.engine.testkit.Property;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedView;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Top-k over groups large enough that {@link TopKOp} keeps their heads between ticks, against an
 * oracle that sorts each group from scratch, tick by tick: 1–3 workers, one group or up to three,
 * ascending or descending, an offset, numbered rows, rows present several times, and ticks that
 * retract the group's best rows (so that a head runs short of the window and the group is read
 * again) besides random retractions and inserts that land before and after a head's frontier.
 */
class TopKHeadPropertyTest {
  static final Schema S = Schema.of(Column.of("g", Type.BIGINT), Column.of("v", Type.BIGINT), Column.of("id", Type.BIGINT));

  record Sample(List<List<Rec>> ticks, int workers, boolean grouped, boolean descending, long offset, long limit,
      boolean numbered) {
    @Override
    public String toString() {
      return "workers=" + workers + " grouped=" + grouped + " descending=" + descending + " offset=" + offset + " limit="
          + limit + " numbered=" + numbered + " ticks=" + ticks.size();
    }
  }

  static Gen<Sample> samples() {
    return (Random r, int size) -> {
      boolean grouped = r.nextBoolean();
      int groups = grouped ? 1 + r.nextInt(3) : 1;
      boolean descending = r.nextBoolean();
      boolean numbered = r.nextInt(4) == 0;
      long offset = numbered ? 0 : r.nextInt(11);
      long limit = 1 + r.nextInt(40);
      Comparator<Row> order = order(descending);
      List<Row> live = new ArrayList<>();
      List<List<Rec>> ticks = new ArrayList<>();
      List<Rec> first = new ArrayList<>();
      for (int g = 0; g < groups; g++) {
        int n = 1100 + r.nextInt(1400);
        for (int i = 0; i < n; i++) {
          Row row = Row.of((long) g, (long) r.nextInt(2000), (long) r.nextInt(400)); // some rows twice or more
          live.add(row);
          first.add(Rec.append(row, 1));
        }
      }
      ticks.add(first);
      if (r.nextBoolean()) {
        ticks.add(edge(live, order, grouped, offset + limit));
      }
      if (r.nextBoolean()) {
        trimmed(live, order, groups, descending, offset + limit, ticks, r);
      }
      int more = 4 + r.nextInt(8);
      for (int t = 0; t < more; t++) {
        List<Rec> recs = new ArrayList<>();
        boolean purge = r.nextInt(4) == 0; // retract the best rows, many of them: the heads run short
        int n = purge ? 60 + r.nextInt(120) : r.nextInt(300);
        for (int i = 0; i < n && !live.isEmpty(); i++) {
          int kind = purge ? 0 : r.nextInt(4);
          if (kind == 0) {
            Row best = live.get(0);
            for (Row x : live) {
              if (order.compare(x, best) < 0) {
                best = x;
              }
            }
            live.remove(best);
            recs.add(Rec.append(best, -1));
          } else if (kind == 1) {
            recs.add(Rec.append(live.remove(r.nextInt(live.size())), -1));
          } else {
            long v = switch (r.nextInt(3)) {
              case 0 -> r.nextInt(40);
              case 1 -> 1960 + r.nextInt(40);
              default -> r.nextInt(2000);
            };
            Row row = Row.of((long) r.nextInt(groups), v, (long) r.nextInt(400));
            live.add(row);
            recs.add(Rec.append(row, 1));
          }
        }
        ticks.add(recs);
      }
      return new Sample(ticks, 1 + r.nextInt(3), grouped, descending, offset, limit, numbered);
    };
  }

  /**
   * A tick right after the first (whose heads hold the first {@code 2 × extent + 16} distinct rows
   * of each group, the last of them the frontier) that retracts every copy of the group's best
   * {@code head − extent} distinct rows and of the frontier row itself: the window then runs one
   * row past what is left before the frontier, which only a head that took the frontier's
   * retraction knows.
   */
  static List<Rec> edge(List<Row> live, Comparator<Row> order, boolean grouped, long extent) {
    int head = (int) (2 * extent + 16);
    Map<Long, java.util.TreeSet<Row>> distinct = new HashMap<>();
    for (Row x : live) {
      distinct.computeIfAbsent(grouped ? x.getLong(0) : 0L, g -> new java.util.TreeSet<>(order)).add(x);
    }
    java.util.Set<Row> gone = new java.util.HashSet<>();
    for (java.util.TreeSet<Row> g : distinct.values()) {
      List<Row> sorted = new ArrayList<>(g);
      for (int i = 0; i < head - extent; i++) {
        gone.add(sorted.get(i));
      }
      gone.add(sorted.get(head - 1));
    }
    List<Rec> recs = new ArrayList<>();
    for (java.util.Iterator<Row> it = live.iterator(); it.hasNext(); ) {
      Row x = it.next();
      if (gone.contains(x)) {
        it.remove();
        recs.add(Rec.append(x, -1));
      }
    }
    return recs;
  }

  /**
   * Two ticks: the first inserts, in each group, five heads' worth of rows better than any other
   * (the head outgrows twice its size and is trimmed back, its frontier moving up to the last row it
   * keeps); the second retracts the best of them down to one row short of the window and inserts
   * a row between them and the rest. That row lies after the moved frontier: only a head whose
   * frontier moved leaves it out, and reads the group again.
   */
  static void trimmed(List<Row> live, Comparator<Row> order, int groups, boolean descending, long extent,
      List<List<Rec>> ticks, Random r) {
    int head = (int) (2 * extent + 16);
    List<Rec> grow = new ArrayList<>();
    List<Rec> cut = new ArrayList<>();
    for (int g = 0; g < groups; g++) {
      List<Row> better = new ArrayList<>();
      for (int i = 0; i < 5 * head; i++) {
        Row row = Row.of((long) g, descending ? 10_000L + i : -10_000L - i, (long) r.nextInt(400));
        better.add(row);
        live.add(row);
        grow.add(Rec.append(row, 1));
      }
      better.sort(order);
      for (int i = 0; i < head - extent + 1; i++) {
        live.remove(better.get(i));
        cut.add(Rec.append(better.get(i), -1));
      }
      Row between = Row.of((long) g, descending ? 5_000L : -5_000L, (long) r.nextInt(400));
      live.add(between);
      cut.add(Rec.append(between, 1));
    }
    ticks.add(grow);
    ticks.add(cut);
  }

  static Comparator<Row> order(boolean descending) {
    return SortKey.total(List.of(new SortKey(1, descending, false)));
  }

  @Test
  void keptHeadsGiveTheWindowsOfTheWholeGroupsTickByTick() {
    long hits = TopKOp.HEAD_HITS.sum();
    long refills = TopKOp.HEAD_REFILLS.sum();
    Property.tries(16).forAll(samples(), TopKHeadPropertyTest::check);
    assertThat(TopKOp.HEAD_HITS.sum() - hits).as("group-ticks served from a kept head").isPositive();
    assertThat(TopKOp.HEAD_REFILLS.sum() - refills).as("kept heads that ran short of the window and were read again")
        .isPositive();
  }

  private static void check(Sample s) {
    ScriptedView.assertEqualsOracleTickByTick(S, s.ticks(), s.workers(), b -> b,
        new Plan.TopK(new Plan.Get("s", S), s.grouped() ? new int[] {0} : new int[0],
            List.of(new SortKey(1, s.descending(), false)), s.offset(), s.limit(), s.numbered() ? "rn" : null),
        in -> oracle(in, s));
  }

  /** Each group sorted from scratch, every copy of a row a position; the window's positions kept (numbered). */
  static Map<Row, Long> oracle(Map<Row, Long> input, Sample s) {
    Map<Long, List<Row>> groups = new HashMap<>();
    input.forEach((row, n) -> {
      for (long i = 0; i < n; i++) {
        groups.computeIfAbsent(s.grouped() ? row.getLong(0) : 0L, g -> new ArrayList<>()).add(row);
      }
    });
    Map<Row, Long> out = new HashMap<>();
    for (List<Row> g : groups.values()) {
      g.sort(order(s.descending()));
      for (int p = (int) s.offset(); p < Math.min(g.size(), s.offset() + s.limit()); p++) {
        Row r = g.get(p);
        Multisets.add(out, s.numbered() ? Row.of(r.get(0), r.get(1), r.get(2), (long) p + 1) : r, 1);
      }
    }
    return out;
  }
}
