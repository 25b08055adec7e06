package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.InMemoryObjectStore;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Zombies are fenced by construction: an old owner whose epoch check is blind to the new owner
 * (it passed just before the takeover, or its listing is stale) still cannot write, because its
 * next commit slot was claimed by the new owner when it took the store.
 */
class StoreFenceTest {
  private static final byte[] ENTRY = "{}".getBytes(StandardCharsets.UTF_8);

  /** A view of {@code store} whose listing of {@code nodes/} can be frozen (the old owner's stale view). */
  private static final class Blind extends io.cairn.objectstore.ForwardingObjectStore {
    final AtomicBoolean blind = new AtomicBoolean();
    private final ObjectStore d;
    private List<ObjectInfo> frozen = List.of();

    Blind(ObjectStore delegate) {
      this.d = delegate;
    }

    @Override
    protected ObjectStore delegate() {
      return d;
    }

    void freeze() {
      frozen = new ArrayList<>(d.list(StoreFence.PREFIX));
      blind.set(true);
    }

    @Override
    public List<ObjectInfo> list(String prefix) {
      return blind.get() && prefix.equals(StoreFence.PREFIX) ? frozen : d.list(prefix);
    }

    @Override
    public void close() {}
  }

  @Test
  void aZombieWhoseEpochCheckIsBlindCannotAppendCommitOrDelete() {
    InMemoryObjectStore store = new InMemoryObjectStore();
    Blind oldView = new Blind(store);
    StoreFence old = StoreFence.acquire(oldView, Clock.systemUTC(), true);
    AtomicInteger told = new AtomicInteger();
    ObjectStore oldWrites = old.guard(oldView, e -> told.incrementAndGet());
    oldWrites.putIfAbsent("catalog/00000000000000000001.json", ENTRY);
    oldWrites.putIfAbsent("snapshots/a.manifest.json", ENTRY);
    assertThat(old.slot()).isEqualTo(3); // took the store, then two writes

    oldView.freeze(); // from now on the old owner's check sees itself as the newest epoch
    StoreFence fresh = StoreFence.acquire(store, Clock.systemUTC(), true);
    assertThat(fresh.epoch()).isEqualTo(old.epoch() + 1);
    assertThat(fresh.slot()).isEqualTo(4);
    old.check(); // blind: passes, which is exactly the race a check cannot close

    List<String> before = keys(store);
    assertThatThrownBy(() -> oldWrites.putIfAbsent("catalog/00000000000000000002.json", ENTRY))
        .isInstanceOf(StoreFence.FencedException.class).hasMessageContaining("commit slot 4").hasMessageContaining("epoch 2");
    assertThatThrownBy(() -> oldWrites.putIfAbsent("snapshots/b.manifest.json", ENTRY)).isInstanceOf(StoreFence.FencedException.class);
    assertThatThrownBy(() -> oldWrites.delete(List.of("catalog/00000000000000000001.json")))
        .isInstanceOf(StoreFence.FencedException.class);
    assertThat(keys(store)).as("the zombie wrote and deleted nothing").isEqualTo(before);
    assertThat(told.get()).isEqualTo(1);

    ObjectStore freshWrites = fresh.guard(store, e -> { throw new AssertionError(e); });
    freshWrites.putIfAbsent("catalog/00000000000000000002.json", ENTRY);
    assertThat(fresh.slot()).isEqualTo(5);
  }

  @Test
  void aSlotThisEpochWroteBeforeItsAnswerWasLostIsItsOwn() {
    InMemoryObjectStore store = new InMemoryObjectStore();
    StoreFence f = StoreFence.acquire(store, Clock.systemUTC(), true);
    // the write of slot 2 landed but its answer was lost: the retry finds it and goes on
    store.putIfAbsent(StoreFence.slotKey(2), ("{\"epoch\":" + f.epoch() + "}").getBytes(StandardCharsets.UTF_8));
    f.claim("a catalog entry");
    assertThat(f.slot()).isEqualTo(2);
    f.claim("a manifest");
    assertThat(f.slot()).isEqualTo(3);
  }

  @Test
  void aClaimOfTheOldOwnerThatRacedTheTakeoverIsSteppedOver() {
    InMemoryObjectStore store = new InMemoryObjectStore();
    StoreFence old = StoreFence.acquire(store, Clock.systemUTC(), true);
    StoreFence fresh = StoreFence.acquire(store, Clock.systemUTC(), true); // slot 2
    // an older epoch's slot above the new owner's first one (its claim was ordered before the takeover's)
    store.putIfAbsent(StoreFence.slotKey(3), ("{\"epoch\":" + old.epoch() + "}").getBytes(StandardCharsets.UTF_8));
    fresh.claim("a manifest");
    assertThat(fresh.slot()).isEqualTo(4);
    assertThatThrownBy(() -> old.claim("a manifest")).isInstanceOf(StoreFence.FencedException.class);
  }

  private static List<String> keys(ObjectStore store) {
    return store.list("").stream().map(ObjectInfo::key).sorted().toList();
  }
}
