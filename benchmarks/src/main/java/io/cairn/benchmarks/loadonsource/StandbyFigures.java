package io.cairn.benchmarks.loadonsource;

import java.util.Map;
import java.util.Objects;

/**
 * What a standby strategy measured beyond a recovery's figures: what the standby read from the
 * sources while it stood by (a hot standby reads Kafka on from the snapshot it loaded; a warm one
 * reads nothing), and how the takeover went. The takeover's own reading is in the {@link
 * StrategyResult} that holds this (its {@code kafka*} and {@code pg*} figures).
 *
 * @param mode {@code warm} or {@code hot}
 * @param readyMillis from the standby's start to its serving the snapshot (hot: caught up on the
 *     sources it reads ahead, as its status says)
 * @param loadMillis the standby's load of the snapshot (its status' {@code lastLoadMillis})
 * @param standingByKafkaRecords Kafka records read while standing by (its status' {@code sources.<kafka>.load})
 * @param standingByKafkaBytes key+value bytes of those records
 * @param standingByKafkaBytesFetched bytes its consumer fetched (wire)
 * @param standingByKafkaFetchRequests fetch requests its consumer sent
 * @param standingByPgRecords Postgres rows read while standing by (a slot has one reader: 0)
 * @param pgReadAhead whether the standby's status says it read the Postgres source ahead
 * @param meteredKafkaRecordsBeforeTakeover the Kafka source's load meter after the takeover minus the
 *     takeover's share: the same figure as {@code standingByKafkaRecords} counted another way
 * @param ownerCloseMillis {@code Node.close()} of the owner (it leaves the group as it closes)
 * @param takeoverReturnedMillis from the start of the owner's close until the standby's {@code
 *     Node.recover} returned, taken over and caught up
 * @param takeoverPhases the standby's recovery report's phases, in milliseconds
 */
public record StandbyFigures(
    String mode,
    long readyMillis,
    long loadMillis,
    long standingByKafkaRecords,
    long standingByKafkaBytes,
    long standingByKafkaBytesFetched,
    long standingByKafkaFetchRequests,
    long standingByPgRecords,
    boolean pgReadAhead,
    long meteredKafkaRecordsBeforeTakeover,
    long ownerCloseMillis,
    long takeoverReturnedMillis,
    Map<String, Long> takeoverPhases) {

  public StandbyFigures {
    Objects.requireNonNull(mode, "mode");
    takeoverPhases = Map.copyOf(takeoverPhases);
  }

  public boolean hot() {
    return mode.equals("hot");
  }
}
