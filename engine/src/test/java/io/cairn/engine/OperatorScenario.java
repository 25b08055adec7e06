package io.cairn.engine;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Aggregate.Kind;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Multisets;
import io.cairn.engine.testkit.ScriptedConnector;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Three scripted sources and one view per operator over them, with a naive oracle that
 * recomputes every view from the full input multisets using plain Java collections.
 *
 * <ul>
 *   <li>{@code a (k BIGINT, v BIGINT, d DOUBLE, s TEXT)}: append-only, inserts and retractions of
 *       present rows spread over ticks; every column may be NULL.
 *   <li>{@code b (k BIGINT, w BIGINT)}: append-only likewise.
 *   <li>{@code u (id BIGINT PRIMARY KEY, x BIGINT, y TEXT)}: upserts (last value wins) and deletes.
 * </ul>
 */
final class OperatorScenario {
  static final Schema A =
      Schema.of(Column.of("k", Type.BIGINT), Column.of("v", Type.BIGINT), Column.of("d", Type.DOUBLE), Column.of("s", Type.TEXT));
  static final Schema B = Schema.of(Column.of("k", Type.BIGINT), Column.of("w", Type.BIGINT));
  static final Schema U = Schema.of(Column.of("id", Type.BIGINT), Column.of("x", Type.BIGINT), Column.of("y", Type.TEXT));
  static final TickPolicy ONE_POLL_PER_TICK = new TickPolicy(1_000_000, Duration.ZERO);

  /** One abstract change of an append-only input: insert {@code row} {@code times} times, or retract the present row chosen by {@code pick}. */
  record Action(boolean insert, Row row, int times, int pick) {
    @Override
    public String toString() {
      return insert ? "+" + times + row : "-#" + pick;
    }
  }

  /** One upsert ({@code row} non-null) or delete of key {@code id}. */
  record Upsert(long id, Row row) {
    @Override
    public String toString() {
      return row == null ? "del " + id : "put " + row;
    }
  }

  /** A generated input: per tick, the actions on a and b and the upserts on u. */
  record Input(List<List<Action>> a, List<List<Action>> b, List<List<Upsert>> u) {
    int ticks() {
      return Math.max(a.size(), Math.max(b.size(), u.size()));
    }
  }

  // ------------------------------------------------------------------ generators

  static Gen<Row> rowsA() {
    Gen<Long> k = Gen.longs(0, 4).orNull(0.15);
    Gen<Long> v = Gen.longs(-5, 5).orNull(0.2);
    Gen<Double> d = Gen.ints(-30, 30).map(x -> x / 10.0).orNull(0.2);
    Gen<String> s = Gen.of("a", "b", "c", "dd").orNull(0.2);
    return (r, size) -> Row.of(k.next(r, size), v.next(r, size), d.next(r, size), s.next(r, size));
  }

  static Gen<Row> rowsB() {
    Gen<Long> k = Gen.longs(0, 4).orNull(0.15);
    Gen<Long> w = Gen.longs(-3, 3).orNull(0.2);
    return (r, size) -> Row.of(k.next(r, size), w.next(r, size));
  }

  static Gen<List<List<Action>>> actions(Gen<Row> rows) {
    Gen<Integer> times = Gen.frequency(Gen.weighted(5, Gen.constant(1)), Gen.weighted(1, Gen.constant(2)));
    Gen<Action> insert = (r, size) -> new Action(true, rows.next(r, size), times.next(r, size), 0);
    Gen<Action> retract = Gen.ints(0, 1000).map(p -> new Action(false, null, 1, p));
    Gen<Action> action = Gen.frequency(Gen.weighted(3, insert), Gen.weighted(2, retract));
    return action.list(0, 12).list(1, 8);
  }

  static Gen<List<List<Upsert>>> upserts() {
    Gen<Long> ids = Gen.longs(0, 5);
    Gen<Long> xs = Gen.longs(0, 3).orNull(0.2);
    Gen<String> ys = Gen.of("p", "q", "r").orNull(0.2);
    Gen<Upsert> put = (r, size) -> {
      long id = ids.next(r, size);
      return new Upsert(id, Row.of(id, xs.next(r, size), ys.next(r, size)));
    };
    Gen<Upsert> del = ids.map(id -> new Upsert(id, null));
    Gen<Upsert> any = Gen.frequency(Gen.weighted(3, put), Gen.weighted(1, del));
    return any.list(0, 8).list(1, 8);
  }

  static Gen<Input> inputs() {
    Gen<List<List<Action>>> a = actions(rowsA());
    Gen<List<List<Action>>> b = actions(rowsB());
    Gen<List<List<Upsert>>> u = upserts();
    return (r, size) -> new Input(a.next(r, size), b.next(r, size), u.next(r, size));
  }

  // ------------------------------------------------------------------ scripts

  /** Turns actions into records: a retraction removes one copy of a row present at that moment. */
  static List<List<Rec>> materialize(List<List<Action>> ticks) {
    Map<Row, Long> live = new TreeMap<>();
    List<List<Rec>> out = new ArrayList<>();
    for (List<Action> tick : ticks) {
      List<Rec> recs = new ArrayList<>();
      for (Action a : tick) {
        if (a.insert()) {
          recs.add(Rec.append(a.row(), a.times()));
          Multisets.add(live, a.row(), a.times());
        } else if (!live.isEmpty()) {
          Row victim = new ArrayList<>(live.keySet()).get(a.pick() % live.size());
          recs.add(Rec.append(victim, -1));
          Multisets.add(live, victim, -1);
        }
      }
      out.add(recs);
    }
    return out;
  }

  static List<List<Rec>> upsertRecords(List<List<Upsert>> ticks) {
    List<List<Rec>> out = new ArrayList<>();
    for (List<Upsert> tick : ticks) {
      out.add(tick.stream().map(u -> Rec.upsert(Row.of(u.id()), u.row())).toList());
    }
    return out;
  }

  static Map<String, Script> scripts(Input in) {
    Map<String, Script> s = new LinkedHashMap<>();
    s.put("a", new Script(A, List.of(), materialize(in.a())));
    s.put("b", new Script(B, List.of(), materialize(in.b())));
    s.put("u", new Script(U, List.of("id"), upsertRecords(in.u())));
    return s;
  }

  /** A fresh connector (one per engine: it holds the released-tick gate) for {@code scripts}. */
  static ScriptedConnector connector(Map<String, Script> scripts) {
    ScriptedConnector c = new ScriptedConnector();
    scripts.forEach(c::script);
    return c;
  }

  // ------------------------------------------------------------------ views

  static Expr col(Schema s, String name) {
    int i = s.indexOf(name);
    return Expr.col(i, s.type(i));
  }

  static Plan.Map project(Plan in, Schema out, Expr... exprs) {
    return new Plan.Map(in, List.of(exprs), out);
  }

  static Aggregate agg(Kind kind, Schema in, String column) {
    int i = in.indexOf(column);
    return new Aggregate(kind, i, in.type(i));
  }

  /** The views, in creation order (a view may read one created before it). */
  static Map<String, Plan> views() {
    Plan a = new Plan.Get("a", A);
    Plan b = new Plan.Get("b", B);
    Plan u = new Plan.Get("u", U);
    Schema kv = Schema.of(Column.of("k", Type.BIGINT), Column.of("v", Type.BIGINT));
    Plan akv = project(a, kv, col(A, "k"), col(A, "v"));
    Map<String, Plan> v = new LinkedHashMap<>();
    v.put(
        "proj",
        project(
            a,
            Schema.of(Column.of("k", Type.BIGINT), Column.of("v1", Type.BIGINT), Column.of("vnull", Type.BOOLEAN), Column.of("s", Type.TEXT)),
            col(A, "k"),
            new Expr.Arith(Expr.ArithOp.ADD, col(A, "v"), Expr.lit(1L)),
            new Expr.IsNull(col(A, "v"), false),
            col(A, "s")));
    v.put(
        "filt",
        new Plan.Filter(
            a, new Expr.Or(new Expr.Cmp(Expr.CmpOp.GT, col(A, "v"), Expr.lit(0L)), new Expr.IsNull(col(A, "k"), false))));
    v.put("uni", new Plan.Union(akv, b));
    v.put("neg", new Plan.Negate(b));
    v.put("minus", new Plan.Union(akv, new Plan.Negate(b)));
    Plan.Join join = Plan.Join.of(a, b, new int[] {0}, new int[] {0});
    v.put("join", join);
    v.put(
        "jcount",
        new Plan.Reduce(
            new Plan.Get("join", join.schema()),
            new int[] {0},
            List.of(Aggregate.countStar(), agg(Kind.SUM, join.schema(), "w")),
            Schema.of(Column.of("k", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("sw", Type.BIGINT))));
    v.put(
        "agg",
        new Plan.Reduce(
            a,
            new int[] {0},
            List.of(
                Aggregate.countStar(),
                agg(Kind.COUNT, A, "v"),
                agg(Kind.SUM, A, "v"),
                agg(Kind.MIN, A, "v"),
                agg(Kind.MAX, A, "v"),
                agg(Kind.AVG, A, "v"),
                agg(Kind.SUM, A, "d"),
                agg(Kind.AVG, A, "d"),
                agg(Kind.MIN, A, "d"),
                agg(Kind.MAX, A, "d"),
                agg(Kind.MIN, A, "s"),
                agg(Kind.MAX, A, "s")),
            Schema.of(
                Column.of("k", Type.BIGINT),
                Column.of("n", Type.BIGINT),
                Column.of("nv", Type.BIGINT),
                Column.of("sv", Type.BIGINT),
                Column.of("minv", Type.BIGINT),
                Column.of("maxv", Type.BIGINT),
                Column.of("avgv", Type.DOUBLE),
                Column.of("sd", Type.DOUBLE),
                Column.of("avgd", Type.DOUBLE),
                Column.of("mind", Type.DOUBLE),
                Column.of("maxd", Type.DOUBLE),
                Column.of("mins", Type.TEXT),
                Column.of("maxs", Type.TEXT))));
    v.put(
        "total",
        new Plan.Reduce(
            a,
            new int[0],
            List.of(Aggregate.countStar(), agg(Kind.SUM, A, "v"), agg(Kind.MAX, A, "s")),
            Schema.of(Column.of("n", Type.BIGINT), Column.of("sv", Type.BIGINT), Column.of("maxs", Type.TEXT))));
    v.put(
        "dist",
        new Plan.Distinct(
            project(a, Schema.of(Column.of("k", Type.BIGINT), Column.of("s", Type.TEXT)), col(A, "k"), col(A, "s"))));
    v.put("distb", new Plan.Distinct(b));
    v.put(
        "uagg",
        new Plan.Reduce(
            u,
            new int[] {1},
            List.of(Aggregate.countStar(), agg(Kind.SUM, U, "id"), agg(Kind.MIN, U, "y"), agg(Kind.MAX, U, "id")),
            Schema.of(Column.of("x", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("sid", Type.BIGINT),
                Column.of("miny", Type.TEXT), Column.of("maxid", Type.BIGINT))));
    // keyed operators whose input is already sharded by their key: the exchange leaves it in place
    Schema aggOut = v.get("agg").schema();
    v.put(
        "regroup", // a view's collection (sharded by k), columns reordered by a Map, grouped by k again
        new Plan.Reduce(
            project(new Plan.Get("agg", aggOut),
                Schema.of(Column.of("n", Type.BIGINT), Column.of("sv", Type.BIGINT), Column.of("k", Type.BIGINT)),
                col(aggOut, "n"), col(aggOut, "sv"), col(aggOut, "k")),
            new int[] {2},
            List.of(Aggregate.countStar(), new Aggregate(Kind.SUM, 0, Type.BIGINT)),
            Schema.of(Column.of("k", Type.BIGINT), Column.of("groups", Type.BIGINT), Column.of("sn", Type.BIGINT))));
    v.put(
        "ukey", // an upsert source (sharded by its primary key) grouped by that key
        new Plan.Reduce(
            u,
            new int[] {0},
            List.of(Aggregate.countStar(), agg(Kind.SUM, U, "x")),
            Schema.of(Column.of("id", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("sx", Type.BIGINT))));
    return v;
  }

  /** Every collection that is checked: the three sources and all views. */
  static List<String> collections() {
    List<String> all = new ArrayList<>(List.of("a", "b", "u"));
    all.addAll(views().keySet());
    return all;
  }

  /** An engine with the sources (ids 1-3) and views (ids 4...) created, nothing ticked. */
  static Engine engine(ScriptedConnector c, int workers) {
    return engine(c, Engine.builder().workers(workers));
  }

  /** As {@link #engine(ScriptedConnector, int)}, built by {@code b} (its workers and options) with {@code c}. */
  static Engine engine(ScriptedConnector c, Engine.Builder b) {
    Engine e = b.tickPolicy(ONE_POLL_PER_TICK).connector(c).build();
    e.createSource(1, ScriptedConnector.definition("a"));
    e.createSource(2, ScriptedConnector.definition("b"));
    e.createSource(3, ScriptedConnector.definition("u"));
    long id = 4;
    for (Map.Entry<String, Plan> v : views().entrySet()) {
      e.createView(id++, v.getKey(), v.getValue());
    }
    return e;
  }

  /** Contents of every checked collection. */
  static Map<String, Map<Row, Long>> read(Engine e) {
    Map<String, Map<Row, Long>> out = new LinkedHashMap<>();
    for (String name : collections()) {
      out.put(name, Multisets.contents(e, name));
    }
    return out;
  }

  static void assertSame(String when, Map<String, Map<Row, Long>> actual, Map<String, Map<Row, Long>> expected) {
    for (String name : expected.keySet()) {
      Multisets.assertSame("'" + name + "' " + when, actual.get(name), expected.get(name));
    }
  }

  // ------------------------------------------------------------------ oracle

  /** The expected contents of every checked collection after script ticks {@code [0, ticks)}. */
  static Map<String, Map<Row, Long>> oracle(Map<String, Script> scripts, int ticks) {
    Script sa = scripts.get("a");
    Script sb = scripts.get("b");
    Script su = scripts.get("u");
    Map<Row, Long> a = new HashMap<>();
    Map<Row, Long> b = new HashMap<>();
    Map<Long, Row> u = new HashMap<>();
    for (int t = 0; t < ticks; t++) {
      if (t < sa.ticks().size()) {
        sa.ticks().get(t).forEach(r -> Multisets.add(a, r.row(), r.diff()));
      }
      if (t < sb.ticks().size()) {
        sb.ticks().get(t).forEach(r -> Multisets.add(b, r.row(), r.diff()));
      }
      if (t < su.ticks().size()) {
        for (Rec r : su.ticks().get(t)) {
          if (r.row() == null) {
            u.remove(r.key().getLong(0));
          } else {
            u.put(r.key().getLong(0), r.row());
          }
        }
      }
    }
    Map<String, Map<Row, Long>> out = new LinkedHashMap<>();
    out.put("a", a);
    out.put("b", b);
    Map<Row, Long> um = new HashMap<>();
    u.values().forEach(r -> Multisets.add(um, r, 1));
    out.put("u", um);
    out.put("proj", map(a, r -> Row.of(r.get(0), r.get(1) == null ? null : r.getLong(1) + 1, r.get(1) == null, r.get(3))));
    Map<Row, Long> filt = new HashMap<>();
    a.forEach((r, n) -> {
      if ((r.get(1) != null && r.getLong(1) > 0) || r.get(0) == null) {
        Multisets.add(filt, r, n);
      }
    });
    out.put("filt", filt);
    Map<Row, Long> akv = map(a, r -> Row.of(r.get(0), r.get(1)));
    Map<Row, Long> uni = new HashMap<>(akv);
    b.forEach((r, n) -> Multisets.add(uni, r, n));
    out.put("uni", uni);
    out.put("neg", map(b, r -> r, -1));
    Map<Row, Long> minus = new HashMap<>(akv);
    b.forEach((r, n) -> Multisets.add(minus, r, -n));
    out.put("minus", minus);
    Map<Row, Long> join = new HashMap<>();
    a.forEach((ra, na) -> b.forEach((rb, nb) -> {
      if (ra.get(0) != null && ra.get(0).equals(rb.get(0))) {
        Multisets.add(join, ra.concat(rb), na * nb);
      }
    }));
    out.put("join", join);
    out.put("jcount", groupBy(join, r -> Row.of(r.get(0)), (k, rows) -> {
      return k.concat(Row.of(count(rows, -1), sum(rows, 5)));
    }));
    out.put("agg", groupBy(a, r -> Row.of(r.get(0)), (k, rows) -> k.concat(Row.of(
        count(rows, -1), count(rows, 1), sum(rows, 1), min(rows, 1), max(rows, 1), avg(rows, 1),
        sum(rows, 2), avg(rows, 2), min(rows, 2), max(rows, 2), min(rows, 3), max(rows, 3)))));
    Map<Row, Long> total = groupBy(a, r -> Row.EMPTY, (k, rows) -> Row.of(count(rows, -1), sum(rows, 1), max(rows, 3)));
    if (total.isEmpty()) { // SQL: an aggregate without GROUP BY over no rows is one row, COUNT 0 and the rest NULL
      total.put(Row.wrap(new Object[] {0L, null, null}), 1L);
    }
    out.put("total", total);
    Map<Row, Long> dist = new HashMap<>();
    map(a, r -> Row.of(r.get(0), r.get(3))).forEach((r, n) -> {
      if (n > 0) {
        dist.put(r, 1L);
      }
    });
    out.put("dist", dist);
    Map<Row, Long> distb = new HashMap<>();
    b.forEach((r, n) -> {
      if (n > 0) {
        distb.put(r, 1L);
      }
    });
    out.put("distb", distb);
    out.put("regroup", map(out.get("agg"), r -> Row.of(r.get(0), 1L, r.get(1))));
    out.put("ukey", groupBy(um, r -> Row.of(r.get(0)), (k, rows) -> k.concat(Row.of(count(rows, -1), sum(rows, 1)))));
    out.put("uagg", groupBy(um, r -> Row.of(r.get(1)), (k, rows) -> k.concat(Row.of(count(rows, -1), sum(rows, 0), min(rows, 2), max(rows, 0)))));
    return out;
  }

  static Map<Row, Long> map(Map<Row, Long> in, Function<Row, Row> f) {
    return map(in, f, 1);
  }

  static Map<Row, Long> map(Map<Row, Long> in, Function<Row, Row> f, long sign) {
    Map<Row, Long> out = new HashMap<>();
    in.forEach((r, n) -> Multisets.add(out, f.apply(r), sign * n));
    return out;
  }

  /** Groups rows (repeated by multiplicity; all positive here) and emits one output row per non-empty group. */
  static Map<Row, Long> groupBy(Map<Row, Long> in, Function<Row, Row> key, java.util.function.BiFunction<Row, List<Row>, Row> agg) {
    Map<Row, List<Row>> groups = new TreeMap<>();
    in.forEach((r, n) -> {
      if (n < 0) {
        throw new AssertionError("the oracle's input has a negative multiplicity: " + r + " x " + n);
      }
      for (long i = 0; i < n; i++) {
        groups.computeIfAbsent(key.apply(r), k -> new ArrayList<>()).add(r);
      }
    });
    Map<Row, Long> out = new HashMap<>();
    groups.forEach((k, rows) -> Multisets.add(out, agg.apply(k, rows), 1));
    return out;
  }

  static long count(List<Row> rows, int col) {
    return col < 0 ? rows.size() : rows.stream().filter(r -> r.get(col) != null).count();
  }

  static Object sum(List<Row> rows, int col) {
    List<Object> vals = rows.stream().map(r -> r.get(col)).filter(x -> x != null).toList();
    if (vals.isEmpty()) {
      return null;
    }
    if (vals.get(0) instanceof Double) {
      return vals.stream().mapToDouble(x -> (Double) x).sum();
    }
    return vals.stream().mapToLong(x -> (Long) x).sum();
  }

  static Object avg(List<Row> rows, int col) {
    Object s = sum(rows, col);
    return s == null ? null : ((Number) s).doubleValue() / count(rows, col);
  }

  static Object min(List<Row> rows, int col) {
    return rows.stream().map(r -> r.get(col)).filter(x -> x != null).min(Row::compareValues).orElse(null);
  }

  static Object max(List<Row> rows, int col) {
    return rows.stream().map(r -> r.get(col)).filter(x -> x != null).max(Row::compareValues).orElse(null);
  }
}
