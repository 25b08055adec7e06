package io.cairn.benchmarks.takeover;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What to run: table sizes, the nodes' heap, the group's session timeout, where the report goes and
 * how the node JVMs start.
 *
 * @param rows table sizes, one takeover and one cold restart each
 * @param heap the nodes' {@code -Xmx} (e.g. {@code 4g}); null: {@link #heapFor} by size
 * @param nodeClassPath the class path of the node JVMs (the product under test)
 * @param nodeJvmOptions JVM options of the node JVMs besides {@code -Xmx}
 * @param standbyWait how long the standby may take to prepare (a warm standby loads the snapshot) before the kill
 * @param keepStore keep each size's store and logs (default: delete the store, keep the logs)
 */
public record TakeoverConfig(List<Long> rows, String heap, Duration sessionTimeout, Path out, String nodeClassPath,
    List<String> nodeJvmOptions, Duration standbyWait, boolean keepStore) {
  static final long CATEGORIES = 100;
  static final long SEED = 7;

  public TakeoverConfig {
    rows = List.copyOf(rows);
    if (rows.isEmpty() || rows.stream().anyMatch(r -> r < 100 || r > 500_000_000L)) {
      throw new IllegalArgumentException("Cannot run the takeover benchmark: --rows must be in [100, 500000000], was " + rows);
    }
    if (sessionTimeout.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("Cannot run the takeover benchmark: --session-timeout must be at least 1 s, was " + sessionTimeout);
    }
    Objects.requireNonNull(out, "out");
    Objects.requireNonNull(nodeClassPath, "nodeClassPath");
    nodeJvmOptions = List.copyOf(nodeJvmOptions);
  }

  /** The heap of a node holding {@code rows} rows: 1g up to 100k, 4g up to 2M, else 16g. */
  String heapFor(long rows) {
    if (heap != null) {
      return heap;
    }
    return rows <= 100_000 ? "1g" : rows <= 2_000_000 ? "4g" : "16g";
  }

  /**
   * The generator's key space for a table of about {@code rows} rows: twice the rows, so that {@link
   * #limitFor} records (random ids, 10 % deletes) leave about {@code rows} ids with a row.
   */
  static long keysFor(long rows) {
    return 2 * rows;
  }

  /**
   * 1.6 records a row: each of 2·rows ids is drawn with probability 1 - e^-0.8 ≈ 0.55 and its last
   * record is an upsert with probability 0.9, which leaves 0.99·rows rows.
   */
  static long limitFor(long rows) {
    return rows * 8 / 5;
  }
}
