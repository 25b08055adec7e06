package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.Values;
import java.util.ArrayList;
import java.util.List;

/**
 * A source's collection. The driver thread {@link #offerAppend offers} records between ticks,
 * routed to the shard owning their key; in the tick each shard applies them to the source's
 * arrangement and passes the changes on. For keyed (upsert) sources the arrangement is the
 * upsert state: primary key → current row; a record for a key retracts the previous row (the
 * last record for a key within a tick wins) and a delete retracts it outright. The changes of
 * an upsert source keyed by one BIGINT/TIMESTAMP column are passed on in key order, as rows built
 * in that order ({@link #processLongKeys}).
 */
public final class SourceOp extends Operator implements Collection {
  private static final Row TOMBSTONE = Row.of("\u0000tombstone");
  private final String name;
  private final Layout layout;
  private final boolean upsert;
  /** The primary key is one BIGINT/TIMESTAMP column: upserts take {@link #processLongKeys}. */
  private final boolean longKey;
  private final Arrangement arrangement;
  /** The layout's value columns (positions in the row). */
  private final int[] valCols;
  private final Rows[] appends;
  private final List<Row[]>[] upserts;
  private final boolean[] resetPending;

  @SuppressWarnings("unchecked")
  public SourceOp(String name, String arrangementName, Schema schema, int[] primaryKey, int shards) {
    super(schema, List.of(), shards);
    this.name = name;
    this.upsert = primaryKey.length > 0;
    this.layout = upsert ? Layout.of(schema, primaryKey) : Layout.wholeRow(schema);
    this.longKey = upsert && primaryKey.length == 1
        && schema.type(primaryKey[0]).isLong();
    this.arrangement = new Arrangement(arrangementName, layout.keySchema(), layout.valSchema(), shards);
    this.valCols = layout.valCols();
    this.appends = new Rows[shards];
    this.upserts = new List[shards];
    this.resetPending = new boolean[shards];
    for (int i = 0; i < shards; i++) {
      appends[i] = new Rows();
      upserts[i] = new ArrayList<>();
    }
  }

  @Override
  public String name() {
    return name;
  }

  public boolean isUpsert() {
    return upsert;
  }

  /** Offers an append-only record for the open tick (driver thread, between process phases). */
  public void offerAppend(Row row, long diff) {
    if (upsert) {
      Row key = layout.key(row);
      if (diff > 0) {
        offerUpsert(key, row);
      } else {
        offerUpsert(key, null);
      }
      return;
    }
    appends[layout.key(row).shard(appends.length)].add(row, diff);
  }

  /** Offers an upsert ({@code row} null deletes the key). */
  public void offerUpsert(Row key, Row row) {
    if (!upsert) {
      throw new IllegalStateException("Cannot upsert into append-only source '" + name + "'");
    }
    Row k = row == null ? key : layout.key(row);
    upserts[k.shard(upserts.length)].add(new Row[] {k, row == null ? TOMBSTONE : row});
  }

  /**
   * Empties the collection at the next tick: all rows held are retracted, records offered before
   * this call in the open tick are dropped, records offered after it apply to an empty collection.
   */
  public void reset() {
    clearOffered();
    java.util.Arrays.fill(resetPending, true);
  }

  /** Drops offered but unprocessed records (and a reset offered in the open tick). */
  public void clearOffered() {
    for (int i = 0; i < appends.length; i++) {
      appends[i].clear();
      upserts[i].clear();
      resetPending[i] = false;
    }
  }

  /** Records are offered to the shard of their key's hash ({@link #offerAppend}, {@link #offerUpsert}). */
  @Override
  public int[] partitioning() {
    return layout.keyCols();
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    Rows out = out(shard);
    boolean fresh = resetPending[shard];
    if (fresh) {
      resetPending[shard] = false;
      arrangement.spine(shard).forEachLive(Long.MAX_VALUE, (b, i, count) -> {
        Row key = b.key(i);
        Row val = b.val(i);
        arrangement.stage(shard, key, val, tick, -count);
        out.add(layout.join(key, val), -count);
      });
    }
    if (!upsert) {
      Rows a = appends[shard];
      for (int i = 0; i < a.size(); i++) {
        arrangement.stage(shard, a.row(i), Row.EMPTY, tick, a.diff(i));
        out.add(a.row(i), a.diff(i));
      }
      a.clear();
      return;
    }
    List<Row[]> cmds = upserts[shard];
    if (cmds.isEmpty()) {
      return;
    }
    if (cmds.size() > 1024) {
      // a large list is not kept for the next tick: one kept for long is in the old generation,
      // and each command stored into it is an old-to-young reference young collections scan
      upserts[shard] = new ArrayList<>();
    }
    if (longKey && processLongKeys(shard, tick, cmds, fresh, out)) {
      return;
    }
    // sort the commands by key (stable: arrival order within a key) and keep the last one per key
    Row[] cmdKeys = new Row[cmds.size()];
    for (int i = 0; i < cmdKeys.length; i++) {
      cmdKeys[i] = cmds.get(i)[0];
    }
    int[] perm = io.cairn.engine.row.KeySort.byKey(cmdKeys, cmdKeys.length);
    List<Row> keys = new ArrayList<>();
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < perm.length; i++) {
      if (i + 1 < perm.length && cmdKeys[perm[i + 1]].equals(cmdKeys[perm[i]])) {
        continue; // a later command for the same key wins
      }
      keys.add(cmdKeys[perm[i]]);
      rows.add(cmds.get(perm[i])[1]);
    }
    forget(shard, cmds);
    Spine.Reader reader = arrangement.spine(shard).reader();
    Values vals = new Values();
    for (int k = 0; k < keys.size(); k++) {
      Row key = keys.get(k);
      vals.clear();
      if (!fresh) {
        reader.values(key, vals);
        vals.consolidate();
      }
      Row oldVal = vals.size() == 0 ? null : vals.val(0);
      Row now = rows.get(k);
      Row newVal = now == TOMBSTONE ? null : layout.val(now);
      if (oldVal != null && oldVal.equals(newVal)) {
        continue;
      }
      if (oldVal != null) {
        arrangement.stage(shard, key, oldVal, tick, -1);
        out.add(layout.join(key, oldVal), -1);
      }
      if (newVal != null) {
        arrangement.stage(shard, key, newVal, tick, 1);
        out.add(now, 1);
      }
    }
  }

  /**
   * The upserts of one shard when the primary key is one BIGINT/TIMESTAMP column: the same
   * changes as the general path, with the keys sorted as a {@code long[]} (radix) and the old row
   * of a key found by {@link Spine.Reader#forEachLong} and consolidated on the batch columns
   * ({@link KeyEntries}) and compared on them, so no val row is built. The last command per key
   * is first copied, in key order, into a row of its own with its own boxed values; the changes
   * passed on are those rows and the retracted rows written from the batch columns, in key order.
   * Returns false, having done nothing, when a key is NULL (the general path then runs).
   */
  private boolean processLongKeys(int shard, long tick, List<Row[]> cmds, boolean fresh, Rows out) {
    int n = cmds.size();
    long[] keys = new long[n];
    Row[] offered = new Row[n];
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) { // arrival order
      Row[] cmd = cmds.get(i);
      if (!(cmd[0].get(0) instanceof Long k)) {
        return false;
      }
      keys[i] = k;
      offered[i] = cmd[1];
      perm[i] = i;
    }
    forget(shard, cmds);
    if (n < 128) {
      for (int x = 1; x < n; x++) { // stable insertion sort
        int v = perm[x];
        int y = x - 1;
        while (y >= 0 && keys[perm[y]] > keys[v]) {
          perm[y + 1] = perm[y];
          y--;
        }
        perm[y + 1] = v;
      }
    } else {
      perm = io.cairn.engine.row.KeySort.radixPasses(keys, false, perm, new int[n], n);
    }
    // The last command per key, in key order, copied into rows of their own (null: a delete).
    // The offered rows were allocated in arrival order, so this visits them at random; a short
    // loop whose iterations do not depend on each other lets those cache misses overlap, and
    // everything after it (this operator's lookups, a join, a view's staging) reads rows
    // allocated in the order it walks them.
    long[] ukeys = new long[n];
    Row[] rows = new Row[n];
    int u = 0;
    for (int x = 0; x < n; x++) {
      int c = perm[x];
      if (x + 1 < n && keys[perm[x + 1]] == keys[c]) {
        continue; // a later command for the same key wins
      }
      ukeys[u] = keys[c];
      Row now = offered[c];
      rows[u++] = now == TOMBSTONE ? null : freshCopy(keys[c], now);
    }
    Spine.Reader reader = fresh ? null : arrangement.spine(shard).reader();
    KeyEntries entries = new KeyEntries();
    for (int x = 0; x < u; x++) {
      long key = ukeys[x];
      Row now = rows[x];
      Batch oldBatch = null; // the key's live row: entry oldIndex of oldBatch
      int oldIndex = 0;
      if (reader != null) {
        entries.clear();
        reader.forEachLong(key, entries);
        entries.consolidate();
        if (entries.size() > 0) {
          oldBatch = entries.batch(0);
          oldIndex = entries.index(0);
        }
      }
      if (oldBatch != null && now != null && oldBatch.entryEquals(oldIndex, now, NO_COLUMNS, valCols)) {
        continue; // the same row again
      }
      if (oldBatch != null) {
        Row old = storedRow(now == null ? Long.valueOf(key) : (Long) now.get(layout.keyCols()[0]), oldBatch, oldIndex);
        arrangement.stageRow(shard, old, layout, tick, -1);
        out.add(old, -1);
      }
      if (now != null) {
        arrangement.stageRow(shard, now, layout, tick, 1);
        out.add(now, 1);
      }
    }
    return true;
  }

  /** Empties the commands just processed if the shard keeps the list for the next tick (a replaced one is left to the GC as it is). */
  private void forget(int shard, List<Row[]> cmds) {
    if (upserts[shard] == cmds) {
      cmds.clear();
    }
  }

  private static final int[] NO_COLUMNS = new int[0];

  /** The row stored under the one-column {@code key} as entry {@code i} of {@code b} (what {@code layout.join(key, b.val(i))} gives, without the val row). */
  private Row storedRow(Long key, Batch b, int i) {
    Object[] v = new Object[schema().size()];
    v[layout.keyCols()[0]] = key;
    for (int c = 0; c < valCols.length; c++) {
      v[valCols[c]] = b.valColumn(c).get(i);
    }
    return Row.wrap(v);
  }

  /** {@code row} with the one-column key {@code key} and its other values boxed anew (equal values, new objects). */
  private Row freshCopy(long key, Row row) {
    Object[] v = new Object[schema().size()];
    v[layout.keyCols()[0]] = key;
    for (int c : valCols) {
      Object x = row.get(c);
      v[c] = x instanceof Long l ? Long.valueOf(l.longValue()) : x instanceof Double d ? Double.valueOf(d.doubleValue()) : x;
    }
    return Row.wrap(v);
  }

  @Override
  public Rows contents(int shard) {
    return Rows.of(arrangement.spine(shard), layout);
  }

  @Override
  public Rows changes(int shard) {
    return out(shard);
  }

  @Override
  public Arrangement arrangement() {
    return arrangement;
  }

  @Override
  public Layout layout() {
    return layout;
  }

  @Override
  public List<Arrangement> arrangements() {
    return List.of(arrangement);
  }

  @Override
  public String describe() {
    return "Source " + name;
  }
}
