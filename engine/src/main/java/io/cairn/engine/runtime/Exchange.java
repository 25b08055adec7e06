package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Operator;
import io.cairn.engine.dataflow.Rows;
import io.cairn.engine.row.Row;
import java.util.List;

/**
 * The exchange: routes an operator's input updates to the worker that owns their key.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>An input whose operator declares an {@link Operator#exchangeKey exchange key} is
 *       re-partitioned: every worker scatters its share of the input by the key's hash ({@link
 *       Row#shardOf}) into one buffer per destination, then each worker gathers the buffers
 *       addressed to it, in worker order. The same key always lands on the same worker, so keyed
 *       state (arrangements, accumulators) is sharded by key and never shared between workers.
 *   <li>An input without an exchange key (stateless operators) stays on the worker that produced it,
 *       and so does every input when there is one worker.
 *   <li>Deterministic: the gathered order depends only on the inputs and the number of workers.
 * </ul>
 */
final class Exchange {
  private final Workers workers;
  private final int shards;

  Exchange(Workers workers, int shards) {
    this.workers = workers;
    this.shards = shards;
  }

  /** The inputs of {@code op} per worker: {@code result[shard][input]}, exchanged where the operator asks. */
  Rows[][] route(Operator op) {
    List<Operator> inputs = op.inputs();
    int n = inputs.size();
    // buckets[input][from][to]
    Rows[][][] buckets = new Rows[n][][];
    boolean exchange = false;
    for (int k = 0; k < n; k++) {
      if (op.exchangeKey(k) != null && shards > 1) {
        buckets[k] = new Rows[shards][shards];
        exchange = true;
      }
    }
    if (exchange) {
      workers.runAll(from -> scatter(op, inputs, buckets, from));
    }
    Rows[][] routed = new Rows[shards][n];
    for (int shard = 0; shard < shards; shard++) {
      for (int k = 0; k < n; k++) {
        routed[shard][k] = buckets[k] == null ? inputs.get(k).out(shard) : null;
      }
    }
    if (exchange) {
      workers.runAll(shard -> {
        for (int k = 0; k < n; k++) {
          if (buckets[k] != null) {
            Rows gathered = new Rows();
            for (int from = 0; from < shards; from++) {
              gathered.addAll(buckets[k][from][shard]);
            }
            routed[shard][k] = gathered;
          }
        }
      });
    }
    return routed;
  }

  private void scatter(Operator op, List<Operator> inputs, Rows[][][] buckets, int from) {
    for (int k = 0; k < inputs.size(); k++) {
      if (buckets[k] == null) {
        continue;
      }
      int[] key = op.exchangeKey(k);
      Rows src = inputs.get(k).out(from);
      Rows[] dst = buckets[k][from];
      for (int t = 0; t < shards; t++) {
        dst[t] = new Rows();
      }
      for (int i = 0; i < src.size(); i++) {
        Row r = src.row(i);
        dst[r.shardOf(key, shards)].add(r, src.diff(i));
      }
    }
  }
}
