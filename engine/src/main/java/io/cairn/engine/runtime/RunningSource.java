package io.cairn.engine.runtime;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.dataflow.SourceOp;
import io.cairn.engine.row.Row;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.util.Map;

/**
 * A source and its client. Fields without {@code volatile} are used only by the thread holding
 * the tick lock (the client's owner), except where noted.
 */
final class RunningSource implements SourceOutput {
  final String name;
  final SourceConnector connector;
  final SourceDefinition definition;
  final SourceOp op;
  final Dataflow dataflow;
  volatile Source source; // volatile: Engine.stop() wakes it up from another thread
  boolean open = true;
  boolean seeked;
  /** offsets(T) of the last closed tick: the position the source's state is at (also set by restore). */
  SourceOffsets recorded = SourceOffsets.EMPTY;
  SourceStatus.State state = SourceStatus.State.RUNNING;
  String error;
  int attempts;
  long nextAttemptNanos;
  long runningSinceNanos = System.nanoTime();
  boolean caughtUp;
  Map<String, Long> load = Map.of();
  volatile double rateLimit;
  double appliedRateLimit;
  /** Offsets of the newest committed snapshot holding this source's state (set by the snapshot thread). */
  volatile SourceOffsets committed;
  SourceOffsets acknowledged;
  volatile boolean dropped;
  /** Records read ahead for the next tick while the current one computed ({@link SourceIngest#prefetch}). */
  final Prefetch prefetch = new Prefetch();
  /** The client's position when the open tick's reading ended: becomes {@link #recorded} at the seal. */
  SourceOffsets tickPosition;
  /**
   * An {@linkplain io.cairn.engine.source.SourceException#atRecord() at-record} error met while
   * reading ahead: the records read before it wait in {@link #prefetch}; the next tick takes them
   * and then handles the error ({@link SourceIngest#poll}). The client is not used meanwhile.
   */
  RuntimeException pendingError;
  /** The last at-record error and the position it was met at: the same again fails the source. */
  String lastRecordError;

  RunningSource(String name, SourceConnector connector, SourceDefinition definition, Source source, Dataflow dataflow) {
    this.name = name;
    this.connector = connector;
    this.definition = definition;
    this.source = source;
    this.dataflow = dataflow;
    this.op = dataflow.sourceOp();
  }

  boolean polling() {
    return !held && state == SourceStatus.State.RUNNING && seeked && pendingError == null && dataflow.state() == Dataflow.State.RUNNING;
  }

  /**
   * Held: not sought, not read; its state stays at {@link #recorded} (a standby's source that only
   * the owner may read, {@link io.cairn.engine.source.SourceConnector#sharedReads()}). Set between ticks.
   */
  volatile boolean held;

  @Override
  public void append(Row row, long diff) {
    op.offerAppend(row, diff);
  }

  @Override
  public void upsert(Row key, Row row) {
    op.offerUpsert(key, row);
  }

  @Override
  public void reset() {
    op.reset();
  }
}
