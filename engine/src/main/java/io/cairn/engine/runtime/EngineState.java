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
public record EngineState(long tick, int shards, Map<String, SourceOffsets> offsets, List<ArrangementState> arrangements) {
  public EngineState {
    offsets = java.util.Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(offsets, "offsets")));
    arrangements = List.copyOf(arrangements);
  }

  public long rows() {
    return arrangements.stream().mapToLong(ArrangementState::rows).sum();
  }
}
