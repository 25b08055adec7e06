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

  /** An operator's inputs after the scatter: each worker gathers its own ({@link #inputs}). */
  static final class Routed {
    private final Operator op;
    private final Rows[][][] buckets; // [input][from][to]; null for an input that stays where it is
    private final int shards;

    private Routed(Operator op, Rows[][][] buckets, int shards) {
      this.op = op;
      this.buckets = buckets;
      this.shards = shards;
    }

    /** The inputs of worker {@code shard}, one per operator input; called by that worker. */
    Rows[] inputs(int shard) {
      Rows[] in = new Rows[buckets.length];
      for (int k = 0; k < in.length; k++) {
        if (buckets[k] == null) {
          in[k] = op.inputs().get(k).out(shard);
        } else {
          Rows gathered = new Rows();
          for (int from = 0; from < shards; from++) {
            gathered.addAll(buckets[k][from][shard]);
          }
          in[k] = gathered;
        }
      }
      return in;
    }
  }

  /**
   * Scatters the inputs of {@code op} that it asks to exchange (all workers at once); each worker
   * then gathers its share with {@link Routed#inputs} in the same pass that processes it.
   */
  Routed route(Operator op) {
    List<Operator> inputs = op.inputs();
    int n = inputs.size();
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
    return new Routed(op, buckets, shards);
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
