package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.UpdateBuffer;
import java.util.List;

/**
 * A named, key-sharded collection of updates: one {@link Spine} per worker shard. Operators
 * stage the updates of the open tick per shard; {@link #seal} turns them into one batch per shard
 * at the tick's end. The name is deterministic (dataflow id, operator index, role), so the
 * arrangement re-created from the catalog after a restart finds its batches in the snapshot.
 */
public final class Arrangement {
  private final String name;
  private final Schema keySchema;
  private final Schema valSchema;
  private final Spine[] spines;
  private final UpdateBuffer[] staged;
  /**
   * Every shard's batches as of the last closed tick, set in one write once all shards have sealed
   * (or a snapshot has loaded): readers take this array and read its immutable batches with no
   * lock, while the next tick inserts and merges. It is never a mix of two ticks.
   */
  private volatile List<Batch>[] published;
  /** Updates sealed into each shard since this arrangement was created (a snapshot's load is not counted). */
  private final long[] sealed;

  public Arrangement(String name, Schema keySchema, Schema valSchema, int shards) {
    this.name = name;
    this.keySchema = keySchema;
    this.valSchema = valSchema;
    this.spines = new Spine[shards];
    this.staged = new UpdateBuffer[shards];
    this.sealed = new long[shards];
    for (int i = 0; i < shards; i++) {
      spines[i] = new Spine(keySchema, valSchema);
      staged[i] = new UpdateBuffer(keySchema, valSchema);
    }
    publish();
  }

  /**
   * Makes the spines' current batches what {@link #published()} returns. Called by whoever holds
   * the engine lock, after every shard has sealed a tick and after a restore.
   */
  @SuppressWarnings("unchecked")
  public void publish() {
    List<Batch>[] p = new List[spines.length];
    for (int i = 0; i < spines.length; i++) {
      p[i] = spines[i].batches();
    }
    published = p;
  }

  /** The batches of every shard as of the last {@link #publish()}: immutable, readable without a lock. */
  public List<Batch>[] published() {
    return published;
  }

  public String name() {
    return name;
  }

  public Schema keySchema() {
    return keySchema;
  }

  public Schema valSchema() {
    return valSchema;
  }

  public int shards() {
    return spines.length;
  }

  public Spine spine(int shard) {
    return spines[shard];
  }

  /** Stages an update of the open tick for {@code shard} (called by the worker owning it). */
  public void stage(int shard, Row key, Row val, long time, long diff) {
    staged[shard].add(key, val, time, diff);
  }

  /** Makes room in shard {@code shard}'s staging buffer for {@code more} updates (a large input staged in one go). */
  public void reserve(int shard, int more) {
    staged[shard].reserve(more);
  }

  /** Stages {@code row} split by {@code layout} into (key, val), without building either row. */
  public void stageRow(int shard, Row row, Layout layout, long time, long diff) {
    staged[shard].addRow(row, layout.keyCols(), layout.valCols(), time, diff);
  }

  /** Stages an update keyed by one non-null long, values as in {@link UpdateBuffer#addLongKey}. */
  public void stageLongKey(int shard, long key, long[] vals, long nulls, long time, long diff) {
    staged[shard].addLongKey(key, vals, nulls, time, diff);
  }

  /** Stages an update under a key row, values as in {@link UpdateBuffer#addLongKey}. */
  public void stageKeyLongs(int shard, Row key, long[] vals, long nulls, long time, long diff) {
    staged[shard].addKeyLongs(key, vals, nulls, time, diff);
  }

  /** Drops staged updates (a failed dataflow's partial tick). */
  public void discardStaged(int shard) {
    staged[shard].clear();
  }

  /** Seals the staged updates of {@code shard} as the batch for {@code tick}. */
  public void seal(int shard, long tick, long fuel) {
    Spine spine = spines[shard];
    long lower = Math.max(spine.upper(), tick);
    Batch b = staged[shard].seal(new Description(lower, tick + 1, spine.since()));
    spine.insert(b);
    sealed[shard] += b.size();
    spine.advanceSince(tick);
    // Merging keeps pace with insertion only if every inserted update pays for one merge per
    // level of the spine (log2 of its size); a constant multiple of the batch size falls behind.
    long levels = 64 - Long.numberOfLeadingZeros(spine.updateCount() + 1);
    spine.exert(Math.max(fuel, 2L * b.size() * levels));
  }

  /**
   * Updates sealed into this arrangement since it was created, over every shard: the work its
   * operator did, before consolidation across batches (a snapshot's load adds none). Read it
   * between ticks (the engine lock held), when every shard's count is final.
   */
  public long updatesSealed() {
    long n = 0;
    for (long x : sealed) {
      n += x;
    }
    return n;
  }

  public long updateCount() {
    long n = 0;
    for (Spine s : spines) {
      n += s.updateCount();
    }
    return n;
  }

  public long heapBytes() {
    long n = 0;
    for (Spine s : spines) {
      n += s.heapBytes();
    }
    return n;
  }
}
