package io.cairn.engine.dataflow;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.Values;
import java.util.List;

/**
 * Inner equi-join of two arranged inputs. With A, B the collections sealed so far and dA, dB the
 * tick's changes, the output change is {@code dA⋈B + (A+dA)⋈dB}; rows with a NULL key never
 * match. Both inputs are arranged by their key (val = the whole row).
 */
final class JoinOp extends Operator {
  private final int[] leftKeys;
  private final int[] rightKeys;
  private final Arrangement left;
  private final Arrangement right;

  JoinOp(String name, Operator l, Operator r, int[] leftKeys, int[] rightKeys, Schema schema, int shards) {
    super(schema, List.of(l, r), shards);
    this.leftKeys = leftKeys;
    this.rightKeys = rightKeys;
    this.left = new Arrangement(name + "-left", l.schema().select(leftKeys), l.schema(), shards);
    this.right = new Arrangement(name + "-right", r.schema().select(rightKeys), r.schema(), shards);
  }

  @Override
  public int[] exchangeKey(int input) {
    return input == 0 ? leftKeys : rightKeys;
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    List<Keyed> dl = Keyed.sort(in[0], leftKeys, true);
    List<Keyed> dr = Keyed.sort(in[1], rightKeys, true);
    Rows out = out(shard);
    Values vals = new Values();
    // dA ⋈ B
    if (!dl.isEmpty()) {
      Spine.Reader rr = right.spine(shard).reader();
      Row lastKey = null;
      for (Keyed l : dl) {
        if (!l.key().equals(lastKey)) {
          vals.clear();
          rr.values(l.key(), vals);
          vals.consolidate();
          lastKey = l.key();
        }
        for (int i = 0; i < vals.size(); i++) {
          out.add(l.row().concat(vals.val(i)), l.diff() * vals.diff(i));
        }
      }
    }
    // (A + dA) ⋈ dB: dl and dr are both sorted by key, so dA's rows for a key are found by walking dl along
    if (!dr.isEmpty()) {
      Spine.Reader lr = left.spine(shard).reader();
      Row lastKey = null;
      int p = 0;
      for (Keyed r : dr) {
        if (!r.key().equals(lastKey)) {
          vals.clear();
          lr.values(r.key(), vals);
          while (p < dl.size() && dl.get(p).key().compareTo(r.key()) < 0) {
            p++;
          }
          for (int q = p; q < dl.size() && dl.get(q).key().equals(r.key()); q++) {
            vals.add(dl.get(q).row(), dl.get(q).diff());
          }
          vals.consolidate();
          lastKey = r.key();
        }
        for (int i = 0; i < vals.size(); i++) {
          out.add(vals.val(i).concat(r.row()), vals.diff(i) * r.diff());
        }
      }
    }
    for (Keyed l : dl) {
      left.stage(shard, l.key(), l.row(), tick, l.diff());
    }
    for (Keyed r : dr) {
      right.stage(shard, r.key(), r.row(), tick, r.diff());
    }
  }

  @Override
  public List<Arrangement> arrangements() {
    return List.of(left, right);
  }

  @Override
  public String describe() {
    return "Join";
  }
}
