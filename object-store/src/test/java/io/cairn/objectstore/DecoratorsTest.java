package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.cairn.objectstore.FaultInjectingObjectStore.InjectedFault;
import io.cairn.objectstore.FaultInjectingObjectStore.Kind;
import io.cairn.objectstore.MeteredObjectStore.CostModel;
import io.cairn.objectstore.MeteredObjectStore.Metrics;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DecoratorsTest {

  @Test
  void failsTheNthCallOnlyAndCountsPerInstance() {
    FaultInjectingObjectStore a = FaultInjectingObjectStore.wrap(new InMemoryObjectStore()).failNthCall(2);
    FaultInjectingObjectStore b = FaultInjectingObjectStore.wrap(new InMemoryObjectStore()).failNthCall(3);
    a.put("k1", new byte[1]);
    assertThatThrownBy(() -> a.put("k2", new byte[1])).isInstanceOf(InjectedFault.class)
        .hasMessageContaining("k2").hasMessageContaining("call 2");
    a.put("k3", new byte[1]);
    assertThat(a.delegate().list("")).extracting(ObjectInfo::key).containsExactly("k1", "k3");
    b.put("x", new byte[1]);
    b.put("y", new byte[1]);
    assertThatThrownBy(() -> b.head("x")).isInstanceOf(InjectedFault.class);
    assertThat(a.injectedFailures()).isEqualTo(1);
    assertThat(b.calls()).isEqualTo(3);
  }

  @Test
  void failsCallsMatchingAPredicateWithAChosenException() {
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(new InMemoryObjectStore())
        .failWhen(c -> c.kind() == Kind.PUT_IF_ABSENT && c.key().startsWith("catalog/"),
            c -> new StoreUnavailableException("Cannot create " + c.key() + ": simulated outage"));
    store.put("catalog/1.json", new byte[1]);
    assertThatThrownBy(() -> store.putIfAbsent("catalog/2.json", new byte[1]))
        .isInstanceOf(StoreUnavailableException.class).hasMessageContaining("catalog/2.json");
    store.putIfAbsent("other/2.json", new byte[1]);
    store.clearFaults();
    store.putIfAbsent("catalog/2.json", new byte[1]);
    assertThat(store.list("catalog/")).hasSize(2);
  }

  @Test
  void truncatesWritesSoTheDelegateRejectsThemAndTruncatesReads() throws Exception {
    InMemoryObjectStore mem = new InMemoryObjectStore();
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(mem)
        .truncateWrites(c -> c.key().endsWith(".parquet"), 100)
        .truncateReads(c -> c.key().equals("cut"), 10);
    assertThatThrownBy(() -> store.put("x.parquet", new byte[1000])).isInstanceOf(ObjectStoreException.class)
        .hasMessageContaining("100 of 1000");
    assertThat(mem.head("x.parquet")).isEmpty();
    store.put("cut", new byte[50]);
    try (InputStream in = store.get("cut")) {
      assertThat(in.readAllBytes()).hasSize(10);
    }
  }

  @Test
  void addsLatency() {
    FaultInjectingObjectStore store = FaultInjectingObjectStore.wrap(new InMemoryObjectStore())
        .addLatency(c -> c.kind() == Kind.HEAD, Duration.ofMillis(50));
    long start = System.nanoTime();
    store.head("a");
    store.head("b");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
  }

  @Test
  void metersRequestsBytesAndEstimatedCost() throws Exception {
    CostModel prices = new CostModel(0.005, 0.0004, 0.09, 16L << 20, 8L << 20);
    MeteredObjectStore store = new MeteredObjectStore(new InMemoryObjectStore(), prices);
    IntStream.range(0, 1500).forEach(i -> store.put("k/" + i, new byte[100]));
    store.put("big", TestData.stream(1, 20L << 20), 20L << 20); // 3 parts + create + complete
    try (InputStream in = store.get("big")) {
      in.readAllBytes();
    }
    try (InputStream in = store.getRange("k/1", 0, 10)) {
      in.readAllBytes();
    }
    store.head("k/1");
    assertThat(store.list("k/")).hasSize(1500); // 2 list pages
    store.delete(List.of("k/1"));
    Metrics m = store.metrics();
    assertThat(m.calls(MeteredObjectStore.Kind.PUT)).isEqualTo(1501);
    assertThat(m.calls(MeteredObjectStore.Kind.DELETE)).isEqualTo(1);
    assertThat(m.putClassRequests()).isEqualTo(1500 + 5 + 2);
    assertThat(m.getClassRequests()).isEqualTo(3);
    assertThat(m.bytesIn()).isEqualTo(150_000 + (20L << 20));
    assertThat(m.bytesOut()).isEqualTo((20L << 20) + 10);
    double expected = 1507 / 1000.0 * 0.005 + 3 / 1000.0 * 0.0004 + ((20L << 20) + 10) / (double) (1L << 30) * 0.09;
    assertThat(m.estimatedCostUsd()).isCloseTo(expected, within(1e-12));
  }
}
