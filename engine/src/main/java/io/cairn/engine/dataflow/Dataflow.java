package io.cairn.engine.dataflow;

import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Schema;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;

/**
 * The operators built from one catalog entry (a source or a view), in topological order, with
 * the collection they produce. The dataflow's id is its catalog position; arrangement names are
 * derived from it ({@code d<id>.<operator index>.<role>}), so re-creating the dataflow from the
 * catalog after a restart yields the same names and finds the same batches in a snapshot.
 *
 * <p>Each dataflow is its own failure domain: an exception while processing marks it {@link
 * State#FAILED} with the error; the engine skips it from then on and keeps running the others.
 */
public final class Dataflow implements Collection {
  public enum Kind {
    SOURCE,
    VIEW
  }

  public enum State {
    RUNNING,
    FAILED
  }

  private final long id;
  private final String name;
  private final Kind kind;
  private final List<Operator> operators;
  private final Collection output;
  private final Set<String> dependencies;
  private final List<GetOp> gets;
  private final Plan plan;
  private volatile State state = State.RUNNING;
  private volatile String error;
  private final java.util.concurrent.atomic.AtomicLong computeNanos = new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong updatesEmitted = new java.util.concurrent.atomic.AtomicLong();

  private Dataflow(
      long id, String name, Kind kind, List<Operator> operators, Collection output, Set<String> deps, List<GetOp> gets, Plan plan) {
    this.id = id;
    this.name = name;
    this.kind = kind;
    this.operators = List.copyOf(operators);
    this.output = output;
    this.dependencies = Set.copyOf(deps);
    this.gets = List.copyOf(gets);
    this.plan = plan;
  }

  /** The arrangement-name prefix of dataflow {@code id}. */
  public static String prefix(long id) {
    return String.format(Locale.ROOT, "d%06d", id);
  }

  /**
   * Equivalent operator paths a view may take (the results are the same; tests turn one off to
   * check the other against it).
   *
   * @param typedReduce a reduce whose shape fits takes its typed path ({@code Engine.Builder#typedReduce})
   * @param shareJoinTraces a join side reads its input's arrangement when it is keyed by the join key
   *     ({@code Engine.Builder#shareJoinTraces})
   */
  public record Choices(boolean typedReduce, boolean shareJoinTraces) {
    /** Every faster path on. */
    public static final Choices DEFAULT = new Choices(true, true);
  }

  /** A source dataflow: one {@link SourceOp}. */
  public static Dataflow source(long id, String name, Schema schema, int[] primaryKey, int shards) {
    SourceOp op = new SourceOp(name, prefix(id) + ".0.collection", schema, primaryKey, shards);
    return new Dataflow(id, name, Kind.SOURCE, List.of(op), op, Set.of(), List.of(), null);
  }

  /**
   * A view dataflow compiled from {@code plan}; {@code keyCols} are the output columns the view is
   * arranged (and looked up) by — null for the default: the group-by columns of a top-level
   * Reduce, else the whole row. {@code choices} picks between equivalent paths (the results are
   * the same; tests turn a path off to have its oracle).
   */
  public static Dataflow view(
      long id, String name, Plan plan, int[] keyCols, Function<String, Collection> resolve, int shards,
      Choices choices) {
    Builder b = new Builder(id, resolve, shards, choices);
    Plan pruned = io.cairn.engine.plan.ColumnPruning.prune(io.cairn.engine.plan.FilterPushdown.push(plan),
        n -> resolve.apply(n).layout().keyCols());
    Operator root = b.build(pruned);
    int[] key = keyCols;
    if (key == null) {
      if (plan instanceof Plan.Reduce r && r.groupBy().length > 0) {
        key = new int[r.groupBy().length];
        for (int i = 0; i < key.length; i++) {
          key[i] = i;
        }
      } else {
        key = Layout.wholeRow(plan.schema()).keyCols();
      }
    }
    CollectionOp out = new CollectionOp(b.name("collection"), root, Layout.of(plan.schema(), key), shards);
    b.ops.add(out);
    return new Dataflow(id, name, Kind.VIEW, b.ops, new ViewOutput(name, out), b.deps, b.gets, plan);
  }

  private static final class Builder {
    final long id;
    final Function<String, Collection> resolve;
    final int shards;
    final Choices choices;
    final List<Operator> ops = new ArrayList<>();
    final Set<String> deps = new LinkedHashSet<>();
    final List<GetOp> gets = new ArrayList<>();
    // equal subplans are built once and their operator read by each parent: a semi-join, an anti-join
    // or an outer join reads its input twice (in the join and beside it), and each one nested doubled it
    final java.util.Map<Plan, Operator> built = new java.util.HashMap<>();

    Builder(long id, Function<String, Collection> resolve, int shards, Choices choices) {
      this.id = id;
      this.resolve = resolve;
      this.shards = shards;
      this.choices = choices;
    }

    String name(String role) {
      return prefix(id) + "." + ops.size() + "." + role;
    }

    Operator build(Plan p) {
      Operator existing = built.get(p);
      if (existing != null) {
        return existing;
      }
      Operator op;
      if (p instanceof Plan.Get g) {
        Collection c = resolve.apply(g.name());
        deps.add(c.name());
        GetOp get = new GetOp(g.name(), c, shards);
        gets.add(get);
        op = get;
      } else if (p instanceof Plan.Map m) {
        op = new Stateless.MapOp(build(m.input()), m.exprs(), m.schema(), shards);
      } else if (p instanceof Plan.Filter f) {
        op = new Stateless.FilterOp(build(f.input()), f.predicate(), shards);
      } else if (p instanceof Plan.Union u) {
        Operator l = build(u.left());
        Operator r = build(u.right());
        op = new Stateless.UnionOp(l, r, shards);
      } else if (p instanceof Plan.Negate n) {
        op = new Stateless.NegateOp(build(n.input()), shards);
      } else if (p instanceof Plan.Join j) {
        Operator l = build(j.left());
        Operator r = build(j.right());
        op = new JoinOp(name("join"), l, r, j.leftKeys(), j.rightKeys(), j.schema(), shards, choices.shareJoinTraces());
      } else if (p instanceof Plan.Reduce r) {
        Operator in = build(r.input());
        op = new ReduceOp(name("reduce"), in, r.groupBy(), r.aggregates(), r.schema(), shards, choices.typedReduce());
      } else if (p instanceof Plan.TopK t) {
        Operator in = build(t.input());
        op = new TopKOp(name("topk"), in, t.groupBy(), t.order(), t.offset(), t.limit(), t.schema(), t.rowNumber() != null, shards);
      } else {
        Plan.Distinct d = (Plan.Distinct) p;
        Operator in = build(d.input());
        op = new DistinctOp(name("distinct"), in, shards);
      }
      ops.add(op);
      built.put(p, op);
      return op;
    }
  }

  /** The collection of a view: its {@link CollectionOp}. */
  private record ViewOutput(String name, CollectionOp op) implements Collection {
    @Override
    public Schema schema() {
      return op.schema();
    }

    @Override
    public Rows contents(int shard) {
      return op.contents(shard);
    }

    @Override
    public Rows changes(int shard) {
      return op.out(shard);
    }

    @Override
    public Arrangement arrangement() {
      return op.arrangement();
    }

    @Override
    public Layout layout() {
      return op.layout();
    }
  }

  public long id() {
    return id;
  }

  @Override
  public String name() {
    return name;
  }

  public Kind kind() {
    return kind;
  }

  /** The plan a view was built from (null for sources). */
  public Plan plan() {
    return plan;
  }

  public List<Operator> operators() {
    return operators;
  }

  /** Names of the collections this dataflow reads. */
  public Set<String> dependencies() {
    return dependencies;
  }

  public State state() {
    return state;
  }

  /** The error that failed this dataflow, or null. */
  public String error() {
    return error;
  }

  public void fail(String message) {
    this.error = message;
    this.state = State.FAILED;
  }

  /** Every arrangement the dataflow owns (its whole state). */
  public List<Arrangement> arrangements() {
    List<Arrangement> all = new ArrayList<>();
    for (Operator op : operators) {
      all.addAll(op.arrangements());
    }
    return all;
  }

  /** The heap its operators hold outside its arrangements ({@link Operator#memoryBytes}); under the engine lock. */
  public long operatorBytes() {
    long b = 0;
    for (Operator op : operators) {
      b += op.memoryBytes();
    }
    return b;
  }

  /**
   * Wall time its operators have run, summed over every tick since it was built (the seal of its
   * arrangements, shared with the other dataflows of a tick, is not in it): what this dataflow costs
   * the ticks that change its inputs.
   */
  public long computeNanos() {
    return computeNanos.get();
  }

  /** Adds {@code nanos} of operator time (the runner, once per tick that runs it). */
  public void addComputeNanos(long nanos) {
    computeNanos.addAndGet(nanos);
  }

  /**
   * Updates its operators have passed on, summed over every operator and tick since it was built:
   * a source's records as rows, a join's matches, a map's results, a reduce's changed groups. Unlike
   * the updates its arrangements seal, this counts what flows between operators without being
   * arranged, such as a join's output feeding a reduce: a change to a joined row fans out here.
   */
  public long updatesEmitted() {
    return updatesEmitted.get();
  }

  /** Adds {@code n} updates passed on by one operator in one tick (the runner). */
  public void addUpdatesEmitted(long n) {
    updatesEmitted.addAndGet(n);
  }

  /** Whether the next tick re-reads the inputs' whole contents (a new dataflow, or one recovered without state). */
  public boolean hydrating() {
    return gets.stream().anyMatch(GetOp::hydrating);
  }

  public void setHydrating(boolean value) {
    operators.forEach(o -> o.setHydrating(value));
  }

  /** The source operator of a source dataflow. */
  public SourceOp sourceOp() {
    return (SourceOp) output;
  }

  @Override
  public Schema schema() {
    return output.schema();
  }

  @Override
  public Rows contents(int shard) {
    return output.contents(shard);
  }

  @Override
  public Rows changes(int shard) {
    return output.changes(shard);
  }

  @Override
  public Arrangement arrangement() {
    return output.arrangement();
  }

  @Override
  public Layout layout() {
    return output.layout();
  }
}
