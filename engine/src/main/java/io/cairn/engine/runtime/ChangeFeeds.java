package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.sink.ChangeFeed;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The engine's {@link ChangeFeed}s: the readers of each dataflow, and what a closing tick hands
 * them.
 *
 * <p>Design: {@link #publish} runs at the end of every tick under the engine lock, after the
 * dataflows are sealed and before the tick is published as closed; it costs nothing for a
 * dataflow nobody reads. For one that is read, it gathers the tick's changes of every shard, sorts
 * and sums them once, and appends the same immutable {@link ChangeFeed.Changes} to each reader's
 * queue. A reader's queue is bounded in rows; one that would pass its bound is ended (its queue
 * dropped, the error kept for its next {@code next}), never waited for. {@link #subscribe} runs
 * under the engine lock too, so a reader's snapshot (the contents at the last closed tick) and
 * its first tick are consecutive.
 */
final class ChangeFeeds {
  private final Map<String, List<Reader>> readers = new ConcurrentHashMap<>();

  /** Registers a reader of {@code d}, at {@code tick}; under the engine lock. */
  Reader subscribe(Dataflow d, long tick, boolean snapshot, int maxRows, int shards) {
    Reader r = new Reader(d.name(), tick, maxRows);
    if (snapshot) {
      Rows all = new Rows();
      for (int s = 0; s < shards; s++) {
        all.addAll(d.contents(s));
      }
      r.offer(consolidate(tick, all), true);
    }
    readers.computeIfAbsent(d.name(), k -> new CopyOnWriteArrayList<>()).add(r);
    return r;
  }

  /** Hands tick {@code tick}'s changes to the readers of each dataflow; under the engine lock, after the tick is sealed. */
  void publish(long tick, Collection<Dataflow> dataflows, int shards) {
    if (readers.isEmpty()) {
      return;
    }
    for (Dataflow d : dataflows) {
      List<Reader> rs = readers.get(d.name());
      if (rs == null || rs.isEmpty()) {
        continue;
      }
      Rows all = new Rows();
      if (d.state() == Dataflow.State.RUNNING) {
        for (int s = 0; s < shards; s++) {
          all.addAll(d.changes(s));
        }
      }
      ChangeFeed.Changes c = consolidate(tick, all);
      for (Reader r : rs) {
        r.offer(c, false);
      }
    }
  }

  /** Ends the readers of {@code name} (dropped, failed) with {@code why}. */
  void end(String name, String why) {
    List<Reader> rs = readers.remove(name);
    if (rs != null) {
      rs.forEach(r -> r.end(why));
    }
  }

  /** Ends every reader (the engine closes). */
  void endAll(String why) {
    for (String name : List.copyOf(readers.keySet())) {
      end(name, why);
    }
  }

  /** Readers of {@code name} now. */
  int readers(String name) {
    List<Reader> rs = readers.get(name);
    return rs == null ? 0 : rs.size();
  }

  /** Readers of every dataflow now. */
  int readers() {
    return readers.values().stream().mapToInt(List::size).sum();
  }

  private void remove(Reader r) {
    List<Reader> rs = readers.get(r.name);
    if (rs != null) {
      rs.remove(r);
    }
  }

  /** Sorts {@code all} by row and sums the diffs of equal rows, leaving out the ones that sum to 0. */
  static ChangeFeed.Changes consolidate(long tick, Rows all) {
    int n = all.size();
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, (a, b) -> all.row(a).compareTo(all.row(b)));
    List<Row> rows = new ArrayList<>();
    long[] diffs = new long[n];
    int k = 0;
    for (int i = 0; i < n; ) {
      Row row = all.row(order[i]);
      long sum = 0;
      int j = i;
      while (j < n && all.row(order[j]).compareTo(row) == 0) {
        sum += all.diff(order[j]);
        j++;
      }
      if (sum != 0) {
        rows.add(row);
        diffs[k++] = sum;
      }
      i = j;
    }
    return new ChangeFeed.Changes(tick, List.copyOf(rows), java.util.Arrays.copyOf(diffs, k));
  }

  /** One reader: a queue of ticks bounded in rows. */
  final class Reader implements ChangeFeed.Subscription {
    private final String name;
    private final long startTick;
    private final int maxRows;
    private final ArrayDeque<ChangeFeed.Changes> queue = new ArrayDeque<>();
    private int rowsHeld;
    private String ended;
    private boolean fellBehind;
    private boolean closed;

    Reader(String name, long startTick, int maxRows) {
      this.name = name;
      this.startTick = startTick;
      this.maxRows = maxRows;
    }

    synchronized void offer(ChangeFeed.Changes c, boolean always) {
      if (ended != null || closed) {
        return;
      }
      if (!always && !queue.isEmpty() && rowsHeld + c.size() > maxRows) {
        fellBehind = true;
        end("the reader fell behind: it had not taken " + queue.size() + " ticks (" + rowsHeld + " rows, ticks " + queue.peekFirst().tick()
            + " to " + queue.peekLast().tick() + ") when tick " + c.tick() + " closed with " + c.size() + " more; the bound is " + maxRows
            + " rows");
        return;
      }
      queue.addLast(c);
      rowsHeld += c.size();
      notifyAll();
    }

    synchronized void end(String why) {
      if (ended == null && !closed) {
        ended = why;
        queue.clear();
        rowsHeld = 0;
        remove(this);
        notifyAll();
      }
    }

    @Override
    public long startTick() {
      return startTick;
    }

    @Override
    public synchronized ChangeFeed.Changes next(long timeoutMillis) throws InterruptedException {
      long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
      while (queue.isEmpty() && ended == null && !closed) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        wait(Math.max(1, left / 1_000_000));
      }
      if (ended != null) {
        throw new ChangeFeed.Ended("Subscription to '" + name + "' ended: " + ended, fellBehind);
      }
      if (closed) {
        throw new ChangeFeed.Ended("Subscription to '" + name + "' is closed", false);
      }
      ChangeFeed.Changes c = queue.pollFirst();
      rowsHeld -= c.size();
      return c;
    }

    @Override
    public synchronized boolean isEnded() {
      return ended != null;
    }

    @Override
    public synchronized void close() {
      closed = true;
      queue.clear();
      rowsHeld = 0;
      remove(this);
      notifyAll();
    }
  }

  /** The feed of one dataflow, as {@link Engine#feed} hands it out. */
  record Feed(Engine engine, String name, Schema schema) implements ChangeFeed {
    @Override
    public Subscription subscribe(boolean snapshot, int maxRows) {
      return engine.subscribe(name, snapshot, maxRows);
    }
  }
}
