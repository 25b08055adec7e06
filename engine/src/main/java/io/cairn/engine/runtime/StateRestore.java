package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Update;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * State capture and restore: the engine's side of a snapshot.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Capture is a cut as of the last closed tick T: the immutable batches of every source and
 *       every RUNNING view with {@code offsets(T)}, O(number of batches), nothing copied. A FAILED
 *       view is left out, and so is a view created since T (it has not computed its contents
 *       yet): recovery recomputes each from its inputs.
 *   <li>Restore loads a dataflow only whole: all its arrangements present with the same schemas
 *       and every dataflow it reads loaded too. Otherwise a view hydrates from its inputs at the
 *       next tick and a source is re-read from its beginning — never resumed from offsets its
 *       state is not at. Loaded batches go into the spines as they are (sorted on disk); a state
 *       saved with another number of workers is re-sharded by key. Arrangements in the state that
 *       no dataflow claims are ignored (e.g. a join's {@code -left}/{@code -right} from a build
 *       whose join owned the traces it now shares with its inputs).
 *   <li>Both run under the engine lock, between ticks.
 * </ul>
 */
final class StateRestore {
  private static final Logger LOG = LoggerFactory.getLogger(StateRestore.class);

  private final Workers workers;
  private final int shards;

  StateRestore(Workers workers, int shards) {
    this.workers = workers;
    this.shards = shards;
  }

  /**
   * What a restore did: views it recomputes and sources it re-reads from their beginning (it could
   * not load them), and {@code offsets(T)} as restored.
   */
  record Result(List<String> recomputedViews, List<String> rereadSources, Map<String, SourceOffsets> offsets) {}

  /** The cut of {@code dataflows} (catalog order) as of {@code tick}, whose offsets are {@code offsets}. */
  EngineState capture(Collection<Dataflow> dataflows, long tick, Map<String, SourceOffsets> offsets) {
    List<ArrangementState> out = new ArrayList<>();
    List<EngineState.ViewState> views = new ArrayList<>();
    for (Dataflow d : dataflows) {
      // a view not yet computed (created since the last tick) is left out too: its empty state is not its contents
      if (d.kind() == Dataflow.Kind.VIEW && (d.state() != Dataflow.State.RUNNING || d.hydrating())) {
        continue;
      }
      if (d.kind() == Dataflow.Kind.VIEW) {
        views.add(new EngineState.ViewState(d.name(), d.id(), d.arrangement().name(), d.schema()));
      }
      for (Arrangement a : d.arrangements()) {
        for (int s = 0; s < shards; s++) {
          out.add(new ArrangementState(a.name(), s, a.keySchema(), a.valSchema(), a.spine(s).batches(), a.spine(s).upper()));
        }
      }
    }
    return new EngineState(tick, shards, offsets, out, views);
  }

  /**
   * Loads {@code state} into {@code dataflows} (catalog order, none has run a tick) and sets each
   * source's recorded offsets (empty for one re-read from its beginning).
   */
  Result restore(EngineState state, Collection<Dataflow> dataflows, Collection<RunningSource> sources) {
    Map<String, List<ArrangementState>> byName = new HashMap<>();
    for (ArrangementState a : state.arrangements()) {
      byName.computeIfAbsent(a.arrangement(), k -> new ArrayList<>()).add(a);
    }
    long upper = state.tick() + 1;
    java.util.Set<String> notLoaded = new java.util.HashSet<>();
    List<String> recomputed = new ArrayList<>();
    List<String> reread = new ArrayList<>();
    for (Dataflow d : dataflows) { // catalog order: inputs come first
      boolean complete = true;
      for (Arrangement a : d.arrangements()) {
        List<ArrangementState> parts = byName.get(a.name());
        if (parts == null || !a.keySchema().equals(parts.get(0).keySchema()) || !a.valSchema().equals(parts.get(0).valSchema())) {
          complete = false;
        }
      }
      boolean inputsLoaded = d.dependencies().stream().noneMatch(notLoaded::contains);
      if (!complete || !inputsLoaded) {
        notLoaded.add(d.name());
        if (d.kind() == Dataflow.Kind.SOURCE) {
          LOG.warn("Source {} ({}) has no state in the snapshot: it is re-read from its beginning, not resumed from the "
              + "snapshot's offsets", d.name(), d.id());
          reread.add(d.name());
        } else {
          LOG.warn("View {} ({}) has no {} in the snapshot: it is recomputed from its inputs", d.name(), d.id(),
              complete ? "input state" : "complete state");
          recomputed.add(d.name());
          d.setHydrating(true);
        }
        continue;
      }
      for (Arrangement a : d.arrangements()) {
        load(a, byName.get(a.name()), state.shards(), upper);
      }
      d.setHydrating(false);
    }
    Map<String, SourceOffsets> offsets = new TreeMap<>();
    for (RunningSource s : sources) {
      s.recorded = notLoaded.contains(s.name) ? SourceOffsets.EMPTY : state.offsets().getOrDefault(s.name, SourceOffsets.EMPTY);
      s.seeked = false;
      s.prefetch.clear();
      s.tickPosition = null;
      offsets.put(s.name, s.recorded);
    }
    LOG.info("Restored state as of tick {} ({} rows)", state.tick(), state.rows());
    return new Result(recomputed, reread, offsets);
  }

  private void load(Arrangement a, List<ArrangementState> parts, int savedShards, long upper) {
    if (savedShards == shards && parts.size() == shards) {
      workers.runAll(
          shard -> {
            for (ArrangementState p : parts) {
              if (p.shard() == shard) {
                a.spine(shard).load(p.batches(), upper);
              }
            }
          });
      return;
    }
    List<List<Update>> per = new ArrayList<>();
    for (int s = 0; s < shards; s++) {
      per.add(new ArrayList<>());
    }
    for (ArrangementState p : parts) {
      for (Batch b : p.batches()) {
        for (int i = 0; i < b.size(); i++) {
          Update u = b.update(i);
          per.get(u.key().shard(shards)).add(new Update(u.key(), u.val(), upper - 1, u.diff()));
        }
      }
    }
    for (int s = 0; s < shards; s++) {
      Batch b =
          Batch.fromUpdates(a.keySchema(), a.valSchema(), per.get(s), new io.cairn.engine.trace.Description(0, upper, upper - 1));
      a.spine(s).load(List.of(b), upper);
    }
  }
}
