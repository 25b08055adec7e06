package io.cairn.engine.runtime;

import io.cairn.engine.row.Schema;
import io.cairn.engine.trace.Batch;
import java.util.List;
import java.util.Objects;

/** The batches of one arrangement shard as of a closed tick: what a snapshot persists. */
public record ArrangementState(
    String arrangement, int shard, Schema keySchema, Schema valSchema, List<Batch> batches, long upper) {
  public ArrangementState {
    Objects.requireNonNull(arrangement, "arrangement");
    batches = List.copyOf(batches);
  }

  public long rows() {
    long n = 0;
    for (Batch b : batches) {
      n += b.size();
    }
    return n;
  }
}
