package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.Operator;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dataflow runner: the part of a tick that computes, after the sources have offered their
 * records.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Order. Dataflows run in catalog order (a view after everything it reads), each operator
 *       after its inputs, on all workers at once (worker i processes shard i of every operator),
 *       inputs routed by the {@link Exchange}. An operator none of whose inputs changed is
 *       skipped.
 *   <li>Failure domains. An exception in an operator marks its dataflow FAILED with the error,
 *       discards what the dataflow staged in this tick, and fails every RUNNING dataflow that
 *       reads it; the other dataflows run on.
 *   <li>Seal. At the end of the tick every arrangement of every dataflow seals its staged
 *       updates as one batch per shard with {@code upper = tick + 1} (a failed dataflow seals an
 *       empty batch, which keeps its spines' uppers in step).
 *   <li>Runs only on the thread holding the engine lock.
 * </ul>
 */
final class DataflowRunner {
  private static final Logger LOG = LoggerFactory.getLogger(DataflowRunner.class);
  /** Merge work each arrangement shard does at least per seal. */
  private static final long SEAL_FUEL = 4096;

  private final Workers workers;
  private final int shards;
  private final Exchange exchange;

  /** {@code skipPartitioned}: see {@link Exchange#Exchange}. */
  DataflowRunner(Workers workers, int shards, boolean skipPartitioned) {
    this.workers = workers;
    this.shards = shards;
    this.exchange = new Exchange(workers, shards, skipPartitioned);
  }

  /** See {@link Exchange#updatesExchanged()}. */
  long updatesExchanged() {
    return exchange.updatesExchanged();
  }

  /** See {@link Exchange#exchangesSkipped()}. */
  long exchangesSkipped() {
    return exchange.exchangesSkipped();
  }

  /** Empties every operator's output of the previous tick. */
  void clearOutputs(Collection<Dataflow> dataflows) {
    for (Dataflow d : dataflows) {
      for (Operator op : d.operators()) {
        for (int s = 0; s < shards; s++) {
          op.out(s).clear();
        }
      }
    }
  }

  /** Runs every RUNNING dataflow for {@code tick}, in the given (catalog) order. */
  void run(Collection<Dataflow> dataflows, long tick) {
    for (Dataflow d : dataflows) {
      if (d.state() == Dataflow.State.RUNNING) {
        runDataflow(dataflows, d, tick);
      }
    }
  }

  /** Seals every arrangement of every dataflow for {@code tick}; RUNNING dataflows stop hydrating. */
  void seal(Collection<Dataflow> dataflows, long tick) {
    List<Arrangement> live = new ArrayList<>();
    for (Dataflow d : dataflows) {
      live.addAll(d.arrangements());
    }
    workers.runAll(shard -> {
      for (Arrangement a : live) {
        a.seal(shard, tick, SEAL_FUEL);
      }
    });
    // readers see the tick whole, and a view is complete to them once it stops hydrating: publish first
    for (Arrangement a : live) {
      a.publish();
    }
    for (Dataflow d : dataflows) {
      if (d.state() == Dataflow.State.RUNNING) {
        d.setHydrating(false);
      }
    }
  }

  private void runDataflow(Collection<Dataflow> all, Dataflow d, long tick) {
    long t0 = System.nanoTime();
    try {
      long emitted = 0;
      for (Operator op : d.operators()) {
        runOperator(op, tick);
        for (int s = 0; s < shards; s++) {
          emitted += op.out(s).size();
        }
      }
      d.addComputeNanos(System.nanoTime() - t0);
      d.addUpdatesEmitted(emitted);
    } catch (RuntimeException e) {
      String msg = e.getClass().getSimpleName() + ": " + e.getMessage();
      LOG.warn("Dataflow {} ({}) failed at tick {}: {}", d.name(), d.id(), tick, msg);
      fail(all, d, msg);
    }
  }

  private void fail(Collection<Dataflow> all, Dataflow d, String message) {
    d.fail(message);
    for (Arrangement a : d.arrangements()) {
      for (int s = 0; s < shards; s++) {
        a.discardStaged(s);
      }
    }
    for (Dataflow reader : all) {
      if (reader.state() == Dataflow.State.RUNNING && reader.dependencies().contains(d.name())) {
        fail(all, reader, "input '" + d.name() + "' failed");
      }
    }
  }

  private void runOperator(Operator op, long tick) {
    boolean anyInput = op.inputs().isEmpty();
    for (Operator in : op.inputs()) {
      for (int s = 0; s < shards && !anyInput; s++) {
        anyInput = in.out(s).size() > 0;
      }
    }
    if (!anyInput && !op.runsWithoutInput()) {
      return;
    }
    Exchange.Routed routed = exchange.route(op);
    workers.runAll(shard -> op.process(shard, tick, routed.inputs(shard)));
  }
}
