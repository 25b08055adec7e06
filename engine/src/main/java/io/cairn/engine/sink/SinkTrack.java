package io.cairn.engine.sink;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.SourceOffsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The engine's side of one sink: what the destination holds is known up to a position, and what
 * it still lacks is kept here, so that every change leaves exactly once whatever happens to the
 * node, the destination or the connection between them.
 *
 * <p>Design (why not "suppress the ticks up to T"): a tick's number is not a function of the
 * input — how many records a tick takes depends on timing — so a recovery from an older snapshot
 * recomputes the same input with other tick boundaries, and a rule on tick numbers would drop or
 * repeat changes. What does not depend on timing is the <em>contents</em>: a view's rows after a
 * prefix of its inputs are a function of that prefix (sources are replayed exactly from their
 * offsets, every operator is a function of its input collections, and the contents are
 * consolidated, so neither sharding nor the order of work shows). So the bookkeeping is about
 * contents. The invariant, held under this object's lock at all times:
 *
 * <pre>
 *   E(positions) + pending = V(tick)
 * </pre>
 *
 * where {@code V(tick)} is the view's contents as of the last engine tick this track took,
 * {@code E(positions)} what a reader of the destination rebuilds from its records up to {@code
 * positions} (null: none of this sink's), and {@code pending} a consolidated collection of
 * (row, diff) — what the destination still lacks. Each operation keeps it:
 *
 * <ul>
 *   <li>a closed tick adds its consolidated changes to {@code pending} ({@link #afterTick}, on the
 *       ticking thread, under the engine lock);
 *   <li>a commit of a {@link Batch} taken from {@code pending} subtracts exactly that batch and
 *       moves {@code positions} past it ({@link #committed});
 *   <li>after a failure whose outcome is unknown (a commit timed out, the node died), the
 *       destination's records after {@code positions} are read back and subtracted ({@link
 *       #reconcile}): whatever of an earlier commit did land is then not written again, whatever
 *       did not is still pending;
 *   <li>a snapshot stores {@code (positions, pending)} as of its tick ({@link #state}); a recovery
 *       from it restores them next to {@code V(tick)} and reconciles before writing anything. That
 *       holds for a snapshot older than the destination's progress too: the records committed
 *       since are read back and subtracted, which is what "changes up to T that recovery
 *       recomputes are not emitted again" means here, independent of tick numbers;
 *   <li>a sink with no state in the snapshot (created later, or no snapshot at all) starts with
 *       {@code positions = null} and {@code pending} = the view's contents when it starts; its
 *       reconcile reads this sink's records from the destination's beginning.
 * </ul>
 *
 * The ticks a sink writes are its own labels: strictly increasing, the engine's tick when that is
 * larger than the last label written, else one more than it ({@link #nextLabel}), so a consumer
 * sees ticks in order across restarts. A label's progress record names the sources' offsets of
 * the engine tick it covers, so a reader can relate it to its input.
 *
 * <p>Bounded: {@code pending} holds at most {@code maxPending} rows (a destination down for long
 * while the view changes a lot); past it the track FAILS with an error saying so, rather than
 * holding the heap hostage; the view keeps running. {@code pending} is consolidated, so a
 * destination that is away while the same rows change again and again costs no more memory.
 *
 * <p>Thread-safe: the engine calls {@link #afterTick} and {@link #state} under its lock, the
 * sink's thread calls the rest.
 */
public final class SinkTrack {
  private final SinkDefinition def;
  private final Schema schema;
  private final int[] keyCols;
  private final long maxPending;
  private ChangeFeed.Subscription subscription;
  private final HashMap<Row, Long> pending = new HashMap<>();
  /** The destination's position up to which it is known what it holds; null: none of this sink's records. */
  private Map<String, String> positions;
  private long lastLabel = -1;
  private long engineTick = -1;
  private Map<String, SourceOffsets> offsets = Map.of();
  private String failure;
  private boolean dropped;
  /** {@link System#nanoTime()} when the oldest tick whose changes are pending closed; 0 when nothing is pending. */
  private long pendingSinceNanos;
  /** The same moment as wall-clock milliseconds (a progress record names it, so a consumer can time the commit). */
  private long pendingSinceMillis;

  public SinkTrack(SinkDefinition def, Schema schema, int[] keyCols, long maxPending) {
    this.def = Objects.requireNonNull(def, "def");
    this.schema = Objects.requireNonNull(schema, "schema");
    this.keyCols = keyCols.clone();
    this.maxPending = maxPending;
  }

  public SinkDefinition definition() {
    return def;
  }

  public Schema schema() {
    return schema;
  }

  public int[] keyCols() {
    return keyCols.clone();
  }

  /**
   * What a snapshot stores of a sink as of its tick: its labels so far and the bookkeeping's
   * position and pending changes.
   */
  public record State(String name, long id, long lastLabel, Map<String, String> positions, Schema schema, List<Row> rows, long[] diffs) {
    public State {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(schema, "schema");
      positions = positions == null ? null : Map.copyOf(positions);
      rows = List.copyOf(rows);
      diffs = diffs.clone();
    }
  }

  /**
   * A set of changes taken to be written: the pending changes as of engine tick {@code
   * engineTick}, sorted by row, with the sources' offsets at that tick.
   */
  public record Batch(
      long engineTick, Map<String, SourceOffsets> offsets, List<Row> rows, long[] diffs, long pendingSinceNanos, long pendingSinceMillis) {
    public int size() {
      return rows.size();
    }
  }

  // ------------------------------------------------------------------ engine side

  /** Starts reading the view's changes (under the engine lock): {@code sub} starts at the engine's last closed tick. */
  public synchronized void attach(ChangeFeed.Subscription sub, long tick, Map<String, SourceOffsets> offsetsNow) {
    if (subscription != null) {
      subscription.close();
    }
    subscription = sub;
    engineTick = tick;
    offsets = Map.copyOf(offsetsNow);
    take();
  }

  /** Restores what a snapshot stored (before {@link #attach} of a subscription without the contents). */
  public synchronized void restore(State s) {
    pending.clear();
    for (int i = 0; i < s.rows().size(); i++) {
      pending.merge(s.rows().get(i), s.diffs()[i], SinkTrack::sum);
    }
    positions = s.positions();
    lastLabel = s.lastLabel();
  }

  /** Takes tick {@code tick}'s changes (the engine, after each tick, under its lock). */
  public synchronized void afterTick(long tick, Map<String, SourceOffsets> offsetsNow) {
    engineTick = tick;
    offsets = offsetsNow;
    take();
  }

  private void take() {
    if (subscription == null || failure != null) {
      return;
    }
    try {
      ChangeFeed.Changes c;
      while ((c = subscription.next(0)) != null) {
        if (pendingSinceNanos == 0 && c.size() > 0) {
          pendingSinceNanos = System.nanoTime();
          pendingSinceMillis = System.currentTimeMillis();
        }
        for (int i = 0; i < c.size(); i++) {
          pending.merge(c.rows().get(i), c.diffs()[i], SinkTrack::sum);
        }
      }
    } catch (ChangeFeed.Ended e) {
      if (!dropped) {
        fail(e.getMessage());
      }
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (pending.size() > maxPending) {
      fail("sink '" + def.name() + "' has " + pending.size() + " rows its destination does not hold yet, more than its bound of "
          + maxPending + " (sink.max-pending-rows): the destination was away too long while '" + def.from()
          + "' changed. Its output stops at tick " + lastLabel + "; DROP SINK and CREATE SINK again to start over from the view's contents");
    }
    notifyAll();
  }

  private static Long sum(Long a, Long b) {
    long s = a + b;
    return s == 0 ? null : s;
  }

  /** The bookkeeping as of the engine's last closed tick (under the engine lock: a snapshot's capture). */
  public synchronized State state() {
    List<Row> rows = new ArrayList<>(pending.size());
    long[] diffs = new long[pending.size()];
    int i = 0;
    for (Map.Entry<Row, Long> e : pending.entrySet()) {
      rows.add(e.getKey());
      diffs[i++] = e.getValue();
    }
    return new State(def.name(), def.id(), lastLabel, positions, schema, rows, diffs);
  }

  /** The sink was dropped: its reader ends, a waiting sink thread wakes. */
  public synchronized void drop() {
    dropped = true;
    if (subscription != null) {
      subscription.close();
    }
    notifyAll();
  }

  // ------------------------------------------------------------------ the sink's thread

  public synchronized boolean dropped() {
    return dropped;
  }

  /** Why the track stopped for good, or null. */
  public synchronized String failure() {
    return failure;
  }

  private void fail(String why) {
    if (failure == null) {
      failure = why;
      pending.clear();
      if (subscription != null) {
        subscription.close();
      }
    }
    notifyAll();
  }

  public synchronized long lastLabel() {
    return lastLabel;
  }

  public synchronized long engineTick() {
    return engineTick;
  }

  public synchronized Map<String, String> positions() {
    return positions;
  }

  public synchronized int pendingRows() {
    return pending.size();
  }

  /** The label of a commit now: the engine's tick, or one more than the last label when that is not larger. */
  public synchronized long nextLabel() {
    return Math.max(engineTick, lastLabel + 1);
  }

  /**
   * Waits up to {@code millis} until a tick after {@code afterTick} was taken (or the track
   * dropped or failed); returns whether one was.
   */
  public synchronized boolean awaitTick(long afterTick, long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000;
    while (engineTick <= afterTick && !dropped && failure == null) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return engineTick > afterTick;
  }

  /** The pending changes now, sorted by row, to be committed (they stay pending until {@link #committed}). */
  public synchronized Batch batch() {
    List<Map.Entry<Row, Long>> es = new ArrayList<>(pending.entrySet());
    es.sort(Map.Entry.comparingByKey());
    List<Row> rows = new ArrayList<>(es.size());
    long[] diffs = new long[es.size()];
    for (int i = 0; i < es.size(); i++) {
      rows.add(es.get(i).getKey());
      diffs[i] = es.get(i).getValue();
    }
    return new Batch(engineTick, offsets, List.copyOf(rows), diffs, pendingSinceNanos, pendingSinceMillis);
  }

  /** {@code b} was committed with label {@code label}: the destination now holds it, up to {@code to}. */
  public synchronized void committed(Batch b, long label, Map<String, String> to) {
    for (int i = 0; i < b.size(); i++) {
      pending.merge(b.rows().get(i), -b.diffs()[i], SinkTrack::sum);
    }
    Map<String, String> merged = positions == null ? new java.util.HashMap<>() : new java.util.HashMap<>(positions);
    merged.putAll(to);
    positions = Map.copyOf(merged);
    lastLabel = Math.max(lastLabel, label);
    pendingSinceNanos = pending.isEmpty() ? 0 : System.nanoTime();
    pendingSinceMillis = pending.isEmpty() ? 0 : System.currentTimeMillis();
  }

  /**
   * The destination holds, after {@link #positions()}, the committed records {@code back} found,
   * and its progress says it wrote through {@code progressTick}: subtract them from what is
   * pending, and label on above both the progress and the records read back (a record committed
   * without its progress record still carries its label).
   */
  public synchronized void reconcile(Sink.ReadBack back, long progressTick) {
    for (int i = 0; i < back.rows().size(); i++) {
      pending.merge(back.rows().get(i), -back.diffs()[i], SinkTrack::sum);
    }
    positions = Map.copyOf(back.to());
    lastLabel = Math.max(lastLabel, Math.max(progressTick, back.lastLabel()));
  }

  @Override
  public synchronized String toString() {
    return "SinkTrack[" + def.name() + ", pending " + pending.size() + ", last " + lastLabel + ", positions " + positions + "]";
  }
}
