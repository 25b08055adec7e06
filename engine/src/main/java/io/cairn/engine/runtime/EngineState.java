package io.cairn.engine.runtime;

import io.cairn.engine.source.SourceOffsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A consistent cut of the engine as of closed tick {@code tick}: every arrangement's batches
 * (updates with times ≤ tick) and every source's {@code offsets(tick)}. Taken by {@link
 * Engine#capture()} in O(number of batches) (batches are immutable: nothing is copied), loaded by
 * {@link Engine#restore}.
 */
public record EngineState(
    long tick, int shards, Map<String, SourceOffsets> offsets, List<ArrangementState> arrangements, List<ViewState> views,
    List<io.cairn.engine.sink.SinkTrack.State> sinks) {
  public EngineState {
    offsets = java.util.Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(offsets, "offsets")));
    arrangements = List.copyOf(arrangements);
    views = views == null ? List.of() : List.copyOf(views);
    sinks = sinks == null ? List.of() : List.copyOf(sinks);
  }

  /** A state without sinks. */
  public EngineState(long tick, int shards, Map<String, SourceOffsets> offsets, List<ArrangementState> arrangements, List<ViewState> views) {
    this(tick, shards, offsets, arrangements, views, List.of());
  }

  /** This state with the sinks' bookkeeping {@code s} (see {@link io.cairn.engine.sink.SinkTrack}). */
  public EngineState withSinks(List<io.cairn.engine.sink.SinkTrack.State> s) {
    return new EngineState(tick, shards, offsets, arrangements, views, s);
  }

  /** The stored bookkeeping of sink {@code name} created at catalog position {@code id}, if any. */
  public java.util.Optional<io.cairn.engine.sink.SinkTrack.State> sink(String name, long id) {
    return sinks.stream().filter(s -> s.name().equals(name) && s.id() == id).findFirst();
  }

  /** A state without view metadata (loaded from an older snapshot, or built by hand). */
  public EngineState(long tick, int shards, Map<String, SourceOffsets> offsets, List<ArrangementState> arrangements) {
    this(tick, shards, offsets, arrangements, List.of(), List.of());
  }

  /**
   * What a reader outside cairn needs to find a view's rows: the view's name, its dataflow id
   * (the catalog position of its CREATE), the arrangement that holds its rows (key columns then
   * value columns, named as the view's columns) and its columns in the view's order.
   */
  public record ViewState(String name, long id, String arrangement, io.cairn.engine.row.Schema schema) {
    public ViewState {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(arrangement, "arrangement");
      Objects.requireNonNull(schema, "schema");
    }
  }

  public long rows() {
    return arrangements.stream().mapToLong(ArrangementState::rows).sum();
  }
}
