package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.node.SnapshotOutcome;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30: a committed snapshot is reported as committed, whatever the ownership check after the
 * commit finds; offsets are confirmed to the sources only once a check that started after the
 * commit finds this node the owner. Both tests failed on the build before (snapshotNow threw).
 */
class CommittedSnapshotIT {
  private static boolean manifestWrite(FaultInjectingObjectStore.Call c) {
    return c.kind() == FaultInjectingObjectStore.Kind.PUT_IF_ABSENT && c.key().endsWith(".manifest.json");
  }

  @Test
  @Timeout(120)
  void anOwnershipCheckThatCannotReachTheStoreDoesNotTurnACommitIntoAFailure(@TempDir Path dir) throws Exception {
    CairnConfig cfg = ConfigLoader.load(Http.config(dir, StoreIntegrityIT.DAILY, StoreIntegrityIT.INIT), Map.of());
    AtomicBoolean committed = new AtomicBoolean();
    AtomicBoolean storeDown = new AtomicBoolean();
    Thread test = Thread.currentThread(); // serve() may take a snapshot for a missed slot: not that one
    Node.Options opts = Node.Options.defaults().withStoreDecorator(s -> FaultInjectingObjectStore.wrap(s).failWhen(c -> {
      if (manifestWrite(c) && Thread.currentThread() == test) {
        committed.set(true); // the guard's check ran before this write; the next nodes/ listing is the one after it
        storeDown.set(true);
      }
      return storeDown.get() && c.kind() == FaultInjectingObjectStore.Kind.LIST && c.key().startsWith("nodes/");
    }));
    String id;
    try (Node node = Node.recover(cfg, opts)) {
      node.serve();
      node.engine().tick();
      SnapshotOutcome figures = node.snapshotNow();
      assertThat(committed).isTrue();
      id = figures.snapshotId();
      assertThat(figures.committed()).isTrue();
      assertThat(figures.sourcesConfirmed()).isFalse();
      assertThat(figures.ownership()).startsWith("unknown");
      String status = node.statusJson();
      assertThat(status).contains(id).contains("\"lastError\" : null");
      // the store answers again: the next check confirms the offsets of the committed snapshot
      storeDown.set(false);
      NodeUnderTrafficIT.await("the offsets confirmed", Duration.ofSeconds(20),
          () -> node.statusJson().contains("\"sourcesConfirmed\" : true"));
      assertThat(node.statusJson()).contains("confirmed (epoch " + node.epoch() + ")");
    }
    try (Node next = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(next.report().snapshotId()).as("the next recovery uses the committed snapshot").isEqualTo(id);
    }
  }

  @Test
  @Timeout(120)
  void aNodeFencedJustBeforeItsCommitReportsTheCommitAndConfirmsNothing(@TempDir Path dir) throws Exception {
    CairnConfig cfg = ConfigLoader.load(Http.config(dir, StoreIntegrityIT.DAILY, StoreIntegrityIT.INIT), Map.of());
    AtomicReference<FaultInjectingObjectStore> store = new AtomicReference<>();
    AtomicBoolean takeOver = new AtomicBoolean();
    Node.Options opts = Node.Options.defaults().withStoreDecorator(s -> {
      FaultInjectingObjectStore f = FaultInjectingObjectStore.wrap(s);
      store.set(f);
      return f.failWhen(c -> {
        if (takeOver.get() && manifestWrite(c)) {
          // another node takes the store after this one's check and before its manifest lands
          f.delegate().putIfAbsent("nodes/00000000000000000099.json",
              "{\"host\":\"other\",\"pid\":1,\"startedAt\":\"now\"}".getBytes(StandardCharsets.UTF_8));
        }
        return false;
      });
    });
    Node node = Node.recover(cfg, opts);
    try {
      node.engine().tick();
      takeOver.set(true);
      SnapshotOutcome figures = node.snapshotNow();
      assertThat(figures.committed()).isTrue();
      assertThat(figures.sourcesConfirmed()).isFalse();
      assertThat(figures.ownership()).startsWith("fenced").contains("epoch 99");
      NodeUnderTrafficIT.await("the fenced node to stop", Duration.ofSeconds(20), () -> node.state() == Node.State.CLOSED);
      assertThat(node.fencedBy()).contains("epoch 99");
    } finally {
      node.close();
    }
  }
}
