package io.cairn.engine.source;

import io.cairn.engine.row.Schema;
import java.time.Duration;
import java.util.List;

/**
 * A running source. The engine drives one instance per {@code CREATE SOURCE} from its tick loop
 * on a single thread: {@link #seek} once, then {@link #poll} repeatedly; {@link #position()} after
 * a poll is the offset of everything delivered so far, which the engine records per tick as
 * {@code offsets(T)}.
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>Replay: after {@code seek(p)} the source delivers exactly the records that followed
 *       position {@code p} when it was reached — no record lost, none delivered twice. This is
 *       what makes recovery correct; correctness never relies on state kept elsewhere (such as
 *       Kafka consumer-group commits).
 *   <li>Errors: a record the source cannot decode is handled by the source's bad-record policy; an
 *       unrecoverable problem (offsets no longer available, missing replication slot, bad
 *       credentials) is thrown as an unchecked exception whose message names the source, what was
 *       wrong and where (topic/partition/offset, slot name, ...) and contains no secret. When a
 *       {@code poll} throws, what it delivered is dropped and the source resumes from the offsets
 *       of the last closed tick — unless the error is a {@link SourceException#atRecord()} one:
 *       then what was delivered before the failing record stands, and {@link #position()} must be
 *       exactly after it.
 * </ul>
 */
public interface Source extends AutoCloseable {
  /** The full row schema of this source's collection. */
  Schema schema();

  /** Primary-key column names (empty for append-only sources). */
  List<String> primaryKey();

  /** Positions the source; {@link SourceOffsets#EMPTY} means from the beginning (initial load). */
  void seek(SourceOffsets offsets);

  /**
   * Optional: prepares the {@link #seek} that is likely to follow soon — connects and asks what
   * any seek asks — so that it returns quickly; a recovery calls this on the owning thread while
   * the snapshot still loads. Waits at most {@code budget}; never throws (a failure shows at the
   * seek, which must not depend on this having run or succeeded). A source may use what it learnt
   * here in the seek instead of asking again, so that warming up adds no requests to the system it
   * reads.
   */
  default void warmUp(Duration budget) {}

  /**
   * Delivers up to {@code maxRecords} records into {@code out}, waiting at most {@code timeout}
   * for the first one. Returns the number delivered (0 when nothing is available).
   */
  int poll(SourceOutput out, int maxRecords, Duration timeout);

  /** The position after the last delivered record. */
  SourceOffsets position();

  /**
   * Whether the source has delivered everything that existed at its head when last checked
   * (used by {@code cairn recover --until-caught-up}). A source with no head (an endless
   * generator) reports true once it has nothing ready to deliver.
   */
  boolean caughtUp();

  /**
   * Called after a snapshot holding {@code offsets} has committed. A source may now let the
   * system it reads release data before those offsets (Postgres: confirm the LSN to the slot).
   * Never called with offsets not yet in a committed snapshot.
   */
  default void onSnapshotCommitted(SourceOffsets offsets) {}

  /** Optional cap on the read rate (records per second, 0 = none), e.g. during recovery catch-up. */
  default void setReadRateLimit(double recordsPerSecond) {}

  /** This source's load meter. */
  LoadMeter meter();

  /**
   * Asks a blocking call in progress on the owning thread ({@code poll}, {@code seek}, {@code
   * caughtUp}) to return soon by throwing; the only method another thread may call. The engine
   * calls it when it stops and when a recovery's deadline passes; a call that throws because of
   * it is a source failure like any other (the source is closed and restarted). A call that
   * starts after it may throw too. The default does nothing: such a source's calls end by their
   * own timeouts.
   */
  default void wakeup() {}

  @Override
  void close();
}
