package io.cairn.engine.dataflow;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Multisets;
import io.cairn.engine.testkit.Property;
import io.cairn.engine.testkit.ScriptedConnector;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Joins whose sides share their input's arrangement ({@link JoinOp}: a Get of an upsert source
 * joined on its primary key, of a GROUP BY view joined on its group key, a self-join) or own a
 * copy (an append-only input, a composite key in another order), against a naive oracle that
 * joins the input multisets from scratch, tick by tick: NULL keys, deletes and retractions, 1–4
 * workers, views created after their inputs hold data (the hydrating tick), and capture/restore
 * from shared to own traces and back (a snapshot written with {@code -left}/{@code -right}
 * arrangements restores into shared joins without recomputing them).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 20 s
class JoinTracePropertyTest {
  static final Schema U = Schema.of(Column.of("id", Type.BIGINT), Column.of("x", Type.BIGINT));
  static final Schema W = Schema.of(Column.of("id", Type.BIGINT), Column.of("z", Type.TEXT));
  static final Schema A = Schema.of(Column.of("k", Type.BIGINT), Column.of("v", Type.BIGINT));
  static final Schema C = Schema.of(Column.of("p", Type.BIGINT), Column.of("q", Type.TEXT), Column.of("n", Type.BIGINT));
  static final Schema E = Schema.of(Column.of("q", Type.TEXT), Column.of("p", Type.BIGINT), Column.of("m", Type.BIGINT));
  static final Schema GA = Schema.of(Column.of("k", Type.BIGINT), Column.of("n", Type.BIGINT));
  static final TickPolicy ONE_POLL_PER_TICK = new TickPolicy(1_000_000, Duration.ZERO);

  /** A join view: its plan and whether each side shares a trace when sharing is on. */
  record View(Plan plan, boolean leftShared, boolean rightShared) {}

  static Map<String, View> views() {
    Plan u = new Plan.Get("u", U);
    Plan w = new Plan.Get("w", W);
    Plan a = new Plan.Get("a", A);
    Plan c = new Plan.Get("c", C);
    Plan e = new Plan.Get("e", E);
    Map<String, View> v = new LinkedHashMap<>();
    v.put("uw", new View(Plan.Join.of(u, w, new int[] {0}, new int[] {0}), true, true));
    v.put("au", new View(Plan.Join.of(a, u, new int[] {0}, new int[] {0}), false, true));
    v.put("ua", new View(Plan.Join.of(u, a, new int[] {0}, new int[] {0}), true, false));
    v.put("uu", new View(Plan.Join.of(u, u, new int[] {0}, new int[] {0}), true, true));
    v.put("ux", new View(Plan.Join.of(u, u, new int[] {1}, new int[] {0}), false, true)); // u.x = u.id, x may be NULL
    v.put("gu", new View(Plan.Join.of(new Plan.Get("ga", GA), u, new int[] {0}, new int[] {0}), true, true));
    v.put("ce", new View(Plan.Join.of(c, e, new int[] {0, 1}, new int[] {1, 0}), true, false));
    v.put("cr", new View(Plan.Join.of(c, e, new int[] {1, 0}, new int[] {0, 1}), false, false)); // key in another order
    v.put("cc", new View(Plan.Join.of(c, c, new int[] {0, 1}, new int[] {0, 1}), true, true));
    return v;
  }

  // ------------------------------------------------------------------ inputs

  record Sample(Map<String, Script> scripts, int ticks, int workers, int createAt) {
    @Override
    public String toString() {
      return "workers=" + workers + " createAt=" + createAt + " " + scripts;
    }
  }

  static Gen<Sample> samples() {
    return (Random r, int size) -> {
      int ticks = 1 + r.nextInt(Math.max(1, size / 10) + 2);
      int per = Math.max(1, size / 4) + 1;
      Map<String, Script> s = new LinkedHashMap<>();
      s.put("u", new Script(U, List.of("id"), upserts(r, ticks, per, () -> {
        long id = r.nextInt(6);
        return Row.of(id, r.nextInt(5) == 0 ? null : (long) r.nextInt(6));
      }, row -> Row.of(row.get(0)))));
      s.put("w", new Script(W, List.of("id"), upserts(r, ticks, per, () -> {
        long id = r.nextInt(6);
        return Row.of(id, r.nextInt(5) == 0 ? null : "z" + r.nextInt(3));
      }, row -> Row.of(row.get(0)))));
      s.put("a", new Script(A, List.of(), appends(r, ticks, per,
          () -> Row.of(r.nextInt(6) == 0 ? null : (long) r.nextInt(6), (long) r.nextInt(3)))));
      s.put("c", new Script(C, List.of("p", "q"), upserts(r, ticks, per, () -> {
        return Row.of((long) r.nextInt(3), r.nextBoolean() ? "x" : "y", r.nextInt(4) == 0 ? null : (long) r.nextInt(3));
      }, row -> Row.of(row.get(0), row.get(1)))));
      s.put("e", new Script(E, List.of(), appends(r, ticks, per, () -> Row.of(
          r.nextInt(6) == 0 ? null : (r.nextBoolean() ? "x" : "y"), r.nextInt(6) == 0 ? null : (long) r.nextInt(3), (long) r.nextInt(2)))));
      return new Sample(s, ticks, 1 + r.nextInt(4), r.nextInt(ticks + 1));
    };
  }

  /** Per tick, upserts of generated rows and deletes of keys (some never present). */
  static List<List<Rec>> upserts(Random r, int ticks, int per, Supplier<Row> rows, java.util.function.Function<Row, Row> key) {
    List<List<Rec>> out = new ArrayList<>();
    for (int t = 0; t < ticks; t++) {
      List<Rec> recs = new ArrayList<>();
      int n = r.nextInt(per + 1);
      for (int i = 0; i < n; i++) {
        Row row = rows.get();
        recs.add(r.nextInt(4) == 0 ? Rec.upsert(key.apply(row), null) : Rec.upsert(key.apply(row), row));
      }
      out.add(recs);
    }
    return out;
  }

  /** Per tick, inserts (some twice) and retractions of rows present at that moment. */
  static List<List<Rec>> appends(Random r, int ticks, int per, Supplier<Row> rows) {
    List<Row> live = new ArrayList<>();
    List<List<Rec>> out = new ArrayList<>();
    for (int t = 0; t < ticks; t++) {
      List<Rec> recs = new ArrayList<>();
      int n = r.nextInt(per + 1);
      for (int i = 0; i < n; i++) {
        if (!live.isEmpty() && r.nextInt(3) == 0) {
          recs.add(Rec.append(live.remove(r.nextInt(live.size())), -1));
        } else {
          Row row = rows.get();
          int times = r.nextInt(5) == 0 ? 2 : 1;
          for (int k = 0; k < times; k++) {
            live.add(row);
          }
          recs.add(Rec.append(row, times));
        }
      }
      out.add(recs);
    }
    return out;
  }

  // ------------------------------------------------------------------ oracle

  /** Every source's multiset after script ticks {@code [0, ticks)}. */
  static Map<String, Map<Row, Long>> sources(Map<String, Script> scripts, int ticks) {
    Map<String, Map<Row, Long>> out = new LinkedHashMap<>();
    scripts.forEach((name, script) -> {
      Map<Row, Long> appended = new HashMap<>();
      Map<Row, Row> upserted = new LinkedHashMap<>();
      for (int t = 0; t < ticks && t < script.ticks().size(); t++) {
        for (Rec rec : script.ticks().get(t)) {
          if (!rec.upsert()) {
            Multisets.add(appended, rec.row(), rec.diff());
          } else if (rec.row() == null) {
            upserted.remove(rec.key());
          } else {
            upserted.put(rec.key(), rec.row());
          }
        }
      }
      upserted.values().forEach(row -> Multisets.add(appended, row, 1));
      out.put(name, appended);
    });
    return out;
  }

  /** The expected contents of every join view after script ticks {@code [0, ticks)}. */
  static Map<String, Map<Row, Long>> oracle(Map<String, Script> scripts, int ticks) {
    Map<String, Map<Row, Long>> src = sources(scripts, ticks);
    Map<Row, Long> ga = new HashMap<>();
    Map<Object, Long> counts = new HashMap<>();
    src.get("a").forEach((row, n) -> counts.merge(Objects.requireNonNullElse(row.get(0), NULL_KEY), n, Long::sum));
    counts.forEach((k, n) -> {
      if (n != 0) {
        Multisets.add(ga, Row.of(k == NULL_KEY ? null : k, n), 1);
      }
    });
    src.put("ga", ga);
    Map<String, Map<Row, Long>> out = new LinkedHashMap<>();
    views().forEach((name, view) -> {
      Plan.Join j = (Plan.Join) view.plan();
      Map<Row, Long> joined = new HashMap<>();
      src.get(((Plan.Get) j.left()).name()).forEach((l, nl) -> src.get(((Plan.Get) j.right()).name()).forEach((r, nr) -> {
        if (matches(l, j.leftKeys(), r, j.rightKeys())) {
          Multisets.add(joined, l.concat(r), nl * nr);
        }
      }));
      out.put(name, joined);
    });
    return out;
  }

  private static final Object NULL_KEY = new Object();

  static boolean matches(Row l, int[] lk, Row r, int[] rk) {
    for (int i = 0; i < lk.length; i++) {
      if (l.get(lk[i]) == null || !l.get(lk[i]).equals(r.get(rk[i]))) {
        return false;
      }
    }
    return true;
  }

  // ------------------------------------------------------------------ engine

  static Engine engine(ScriptedConnector c, int workers, boolean share) {
    Engine e = Engine.builder().workers(workers).tickPolicy(ONE_POLL_PER_TICK).connector(c).shareJoinTraces(share).build();
    long id = 1;
    for (String s : List.of("u", "w", "a", "c", "e")) {
      e.createSource(id++, ScriptedConnector.definition(s));
    }
    return e;
  }

  /** Creates the GROUP BY view and the join views on an engine built with sharing {@code share}; checks which sides share. */
  static void createViews(Engine e, boolean share) {
    e.createView(10, "ga", new Plan.Reduce(new Plan.Get("a", A), new int[] {0}, List.of(Aggregate.countStar()), GA));
    long id = 11;
    for (Map.Entry<String, View> v : views().entrySet()) {
      e.createView(id++, v.getKey(), v.getValue().plan());
      JoinOp join = e.dataflow(v.getKey()).orElseThrow().operators().stream()
          .filter(JoinOp.class::isInstance).map(JoinOp.class::cast).findFirst().orElseThrow();
      assertThat(join.shares(0)).as("%s: left shares", v.getKey()).isEqualTo(share && v.getValue().leftShared());
      assertThat(join.shares(1)).as("%s: right shares", v.getKey()).isEqualTo(share && v.getValue().rightShared());
    }
  }

  static Map<String, Map<Row, Long>> read(Engine e) {
    Map<String, Map<Row, Long>> out = new LinkedHashMap<>();
    for (String name : views().keySet()) {
      out.put(name, Multisets.contents(e, name));
    }
    return out;
  }

  static void assertSame(String when, Map<String, Map<Row, Long>> actual, Map<String, Map<Row, Long>> expected) {
    for (String name : expected.keySet()) {
      Multisets.assertSame("'" + name + "' " + when, actual.get(name), expected.get(name));
    }
  }

  static void assertRunning(Engine e) {
    for (Dataflow d : e.dataflows()) {
      assertThat(d.state()).as("state of %s (%s)", d.name(), d.error()).isEqualTo(Dataflow.State.RUNNING);
    }
  }

  // ------------------------------------------------------------------ properties

  @Test
  void sharedAndOwnTracesMatchTheOracleAfterEveryTick() {
    Property.tries(120).forAll(samples(), s -> {
      for (boolean share : new boolean[] {true, false}) {
        ScriptedConnector c = new ScriptedConnector();
        s.scripts().forEach(c::script);
        try (Engine e = engine(c, s.workers(), share)) {
          for (int t = 0; t < s.ticks(); t++) {
            if (t == s.createAt()) {
              createViews(e, share);
            }
            c.release(t + 1);
            e.tick();
            if (t >= s.createAt()) {
              assertSame("after tick " + (t + 1) + " (share " + share + ", " + s.workers() + " workers, views created before tick "
                  + (s.createAt() + 1) + ")", read(e), oracle(s.scripts(), t + 1));
            }
          }
          if (s.createAt() == s.ticks()) { // created after the last tick: hydrated by one more (empty) tick
            createViews(e, share);
            e.tick();
            assertSame("after hydrating (share " + share + ")", read(e), oracle(s.scripts(), s.ticks()));
          }
          assertRunning(e);
        }
      }
    });
  }

  record CaptureCase(Sample sample, int workersAfter, boolean shareBefore, boolean shareAfter, int cut) {}

  /**
   * State captured after tick T by an engine whose joins share (or own) their traces, restored
   * into one whose joins own (or share) them, with the same or another number of workers, then
   * fed the rest of the stream, equals the oracle after every tick. A snapshot with own traces
   * restores into shared joins without recomputing any view.
   */
  @Test
  void captureAndRestoreAcrossSharedAndOwnTraces() {
    Gen<CaptureCase> gen = (r, size) -> {
      Sample s = samples().next(r, size);
      return new CaptureCase(s, 1 + r.nextInt(4), r.nextBoolean(), r.nextBoolean(), r.nextInt(s.ticks() + 1));
    };
    Property.tries(100).forAll(gen, k -> {
      Sample s = k.sample();
      EngineState state;
      ScriptedConnector c1 = new ScriptedConnector();
      s.scripts().forEach(c1::script);
      try (Engine e = engine(c1, s.workers(), k.shareBefore())) {
        createViews(e, k.shareBefore());
        for (int t = 0; t < k.cut(); t++) {
          c1.release(t + 1);
          e.tick();
        }
        state = e.capture();
        c1.release(s.ticks()); // the engine runs on after the capture: the captured batches must not change
        e.tick();
      }
      ScriptedConnector c2 = new ScriptedConnector();
      s.scripts().forEach(c2::script);
      try (Engine e = engine(c2, k.workersAfter(), k.shareAfter())) {
        createViews(e, k.shareAfter());
        Engine.Restored restored = e.restore(state);
        String how = "(restored at " + k.cut() + ", share " + k.shareBefore() + " -> " + k.shareAfter() + ", workers " + s.workers()
            + " -> " + k.workersAfter() + ")";
        if (k.cut() == 0) {
          // captured before the views' first tick: they had computed nothing, so they are not in the state
          assertThat(restored.recomputedViews()).as("views not yet computed at the capture %s", how).isNotEmpty();
        } else if (!k.shareBefore() || k.shareAfter()) {
          assertThat(restored.recomputedViews()).as("views recomputed %s", how).isEmpty();
        }
        if (k.cut() > 0 && restored.recomputedViews().isEmpty()) {
          assertSame("right after restoring " + how, read(e), oracle(s.scripts(), k.cut()));
        }
        for (int t = k.cut(); t < s.ticks(); t++) {
          c2.release(t + 1);
          e.tick();
          assertSame("after tick " + (t + 1) + " " + how, read(e), oracle(s.scripts(), t + 1));
        }
        if (k.cut() == s.ticks() && !restored.recomputedViews().isEmpty()) {
          e.tick(); // recomputed views hydrate in the next tick
          assertSame("after recomputing " + how, read(e), oracle(s.scripts(), s.ticks()));
        }
        assertRunning(e);
      }
    });
  }
}
