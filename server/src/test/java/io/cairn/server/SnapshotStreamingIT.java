package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.S3ObjectStore;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.testkit.s3.S3ProxyServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node's snapshots stream their batch files into the store (S3: parts as they are encoded)
 * through everything the node wraps its store in (the fence guard, a metering decorator): the
 * streaming path is the product's path, not only the snapshotter's in tests.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // measured 4 s
class SnapshotStreamingIT {
  private static final String DAILY = "0 0 0 * * ?";

  @Test
  void aNodeOnS3StreamsItsBatchFilesAndRecoversFromThem(@TempDir Path dir) throws Exception {
    S3ProxyServer s3 = S3ProxyServer.shared();
    String bucket = s3.createBucket();
    Path f = Http.config(dir, DAILY, List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 20000, categories = 10, seed = 3, limit = 60000)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category"));
    String yaml = Files.readString(f).replaceFirst("uri: \"[^\"]*\"", "uri: \"" + s3.uri(bucket, "stream") + "\"\n  properties:\n"
        + "    s3.access-key-id: \"" + s3.accessKeyId() + "\"\n    s3.secret-access-key: \"" + s3.secretAccessKey() + "\"\n"
        + "    s3.region: \"" + s3.region() + "\"");
    Files.writeString(f, yaml);
    CairnConfig cfg = ConfigLoader.load(f, Map.of());
    AtomicReference<ObjectStore> raw = new AtomicReference<>();
    Node.Options options = Node.Options.defaults().withStoreDecorator(st -> {
      raw.set(st);
      return new io.cairn.objectstore.MeteredObjectStore(st);
    });
    List<io.cairn.engine.row.Row> before;
    try (Node node = Node.recover(cfg, options)) {
      assertThat(raw.get()).isInstanceOf(S3ObjectStore.class);
      node.snapshotNow();
      before = node.engine().peek("by_cat");
      S3ObjectStore store = (S3ObjectStore) raw.get();
      assertThat(store.streamingBufferPeakBytes()).as("batch files went through streaming writes").isPositive();
      assertThat(store.streamingBufferedBytes()).as("their buffers were released").isZero();
    }
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.report().fullReplay()).isFalse();
      assertThat(node.report().rowsLoaded()).isPositive();
      assertThat(node.engine().peek("by_cat")).isEqualTo(before);
    }
  }
}
