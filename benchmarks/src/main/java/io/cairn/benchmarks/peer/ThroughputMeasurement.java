package io.cairn.benchmarks.peer;

/**
 * Steady-state processing of the input from its beginning by a fresh application.
 *
 * @param inputRecords records in the input topic (sum of end minus start offsets) at the start
 * @param startupMillis from {@code KafkaStreams.start()} to the first {@code RUNNING} state
 * @param elapsedMillis from {@code start()} until the group's committed offsets reached the end of
 *     the input and of the repartition topic (so it includes startup and up to one commit interval)
 * @param recordsPerSecond {@code inputRecords / elapsedMillis}
 * @param consumerRecords records fetched by the main consumers (input plus repartition topic)
 * @param consumerBytes bytes fetched by the main consumers ({@code bytes-consumed-total})
 * @param cpuMillis CPU time of the application's threads (stream threads, state updaters, client
 *     network threads; not the broker's) until caught up: less sensitive to a busy machine than
 *     elapsed time, -1 if the JVM does not measure thread CPU time
 */
public record ThroughputMeasurement(
    long inputRecords,
    long startupMillis,
    long elapsedMillis,
    double recordsPerSecond,
    long consumerRecords,
    long consumerBytes,
    long cpuMillis) {
}
