package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Operator;
import io.cairn.engine.dataflow.Rows;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The exchange: routes an operator's input updates to the worker that owns their key.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>An input whose operator declares an {@link Operator#exchangeKey exchange key} is
 *       re-partitioned: every worker hashes the key columns of its share of the input into an
 *       {@code int[]} of destinations ({@link io.cairn.engine.row.Row#shardOf}) and orders its
 *       updates by destination with a counting sort (stable); then each worker gathers, in worker
 *       order, the runs addressed to it into one buffer of the exact size. An update is copied
 *       once. The same key always lands on the same worker, so keyed state (arrangements,
 *       accumulators) is sharded by key and never shared between workers.
 *   <li>Skipped: an input whose producer is already {@linkplain Operator#partitioning()
 *       partitioned} by exactly the exchange key stays where it is (routing would move nothing),
 *       and so does an input without an exchange key (stateless operators), and every input when
 *       there is one worker. Built with {@code skipPartitioned} false (tests, through {@link
 *       Engine.Builder#skipPartitionedExchange}), the exchange routes the partitioned inputs too.
 *   <li>Deterministic: the gathered order depends only on the inputs and the number of workers:
 *       for each source worker in order, its updates for this worker in their original order.
 * </ul>
 */
final class Exchange {
  private final Workers workers;
  private final int shards;
  private final boolean skipPartitioned;
  private final LongAdder exchanged = new LongAdder();
  private final LongAdder skipped = new LongAdder();

  /**
   * An exchange among {@code shards} workers; {@code skipPartitioned} false routes also the inputs
   * already partitioned by the key (only tests that compare routing every input with skipping).
   */
  Exchange(Workers workers, int shards, boolean skipPartitioned) {
    this.workers = workers;
    this.shards = shards;
    this.skipPartitioned = skipPartitioned;
  }

  /** Updates routed through the exchange so far (each counted once, whichever worker it went to). */
  long updatesExchanged() {
    return exchanged.sum();
  }

  /** Inputs that had an exchange key but were not routed, their producer being partitioned by it. */
  long exchangesSkipped() {
    return skipped.sum();
  }

  /**
   * One source worker's share of one input, ordered by destination: the updates for worker
   * {@code t} are {@code src} at positions {@code order[start[t]] … order[start[t + 1] - 1]}.
   */
  private record Scattered(Rows src, int[] order, int[] start) {}

  /** An operator's inputs after the scatter: each worker gathers its own ({@link #inputs}). */
  static final class Routed {
    private final Operator op;
    private final Scattered[][] scattered; // [input][from]; null for an input that stays where it is

    private Routed(Operator op, Scattered[][] scattered) {
      this.op = op;
      this.scattered = scattered;
    }

    /** The inputs of worker {@code shard}, one per operator input; called by that worker. */
    Rows[] inputs(int shard) {
      Rows[] in = new Rows[scattered.length];
      for (int k = 0; k < in.length; k++) {
        Scattered[] from = scattered[k];
        if (from == null) {
          in[k] = op.inputs().get(k).out(shard);
          continue;
        }
        int n = 0;
        for (Scattered s : from) {
          n += s.start[shard + 1] - s.start[shard];
        }
        Rows gathered = new Rows(n);
        for (Scattered s : from) {
          for (int j = s.start[shard], end = s.start[shard + 1]; j < end; j++) {
            int i = s.order[j];
            gathered.add(s.src.row(i), s.src.diff(i));
          }
        }
        in[k] = gathered;
      }
      return in;
    }
  }

  /**
   * Scatters the inputs of {@code op} that need routing (all workers at once); each worker then
   * gathers its share with {@link Routed#inputs} in the same pass that processes it.
   */
  Routed route(Operator op) {
    List<Operator> inputs = op.inputs();
    int n = inputs.size();
    Scattered[][] scattered = new Scattered[n][];
    boolean exchange = false;
    for (int k = 0; k < n; k++) {
      int[] key = op.exchangeKey(k);
      if (key == null || shards == 1) {
        continue;
      }
      if (skipPartitioned && Arrays.equals(key, inputs.get(k).partitioning())) {
        skipped.increment();
        continue;
      }
      scattered[k] = new Scattered[shards];
      exchange = true;
    }
    if (exchange) {
      workers.runAll(from -> scatter(op, scattered, from));
    }
    return new Routed(op, scattered);
  }

  private void scatter(Operator op, Scattered[][] scattered, int from) {
    for (int k = 0; k < scattered.length; k++) {
      if (scattered[k] == null) {
        continue;
      }
      int[] key = op.exchangeKey(k);
      Rows src = op.inputs().get(k).out(from);
      int n = src.size();
      int[] dest = new int[n];
      int[] start = new int[shards + 1];
      for (int i = 0; i < n; i++) {
        int t = src.row(i).shardOf(key, shards);
        dest[i] = t;
        start[t + 1]++;
      }
      for (int t = 0; t < shards; t++) {
        start[t + 1] += start[t];
      }
      int[] next = Arrays.copyOf(start, shards);
      int[] order = new int[n];
      for (int i = 0; i < n; i++) {
        order[next[dest[i]]++] = i;
      }
      scattered[k][from] = new Scattered(src, order, start);
      exchanged.add(n);
    }
  }
}
