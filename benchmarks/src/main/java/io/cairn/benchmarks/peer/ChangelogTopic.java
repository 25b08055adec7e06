package io.cairn.benchmarks.peer;

import java.util.Objects;

/**
 * One internal topic of the peer (a store's changelog or the group-by repartition topic) as the
 * broker reports it: {@code records} is the sum over partitions of end offset minus log start
 * offset, {@code bytes} the sum of the partitions' log sizes on disk (admin describeLogDirs).
 */
public record ChangelogTopic(String name, long records, long bytes) {
  public ChangelogTopic {
    Objects.requireNonNull(name, "name");
    if (records < 0 || bytes < 0) {
      throw new IllegalArgumentException("Cannot describe topic " + name + ": negative size " + records + "/" + bytes);
    }
  }
}
