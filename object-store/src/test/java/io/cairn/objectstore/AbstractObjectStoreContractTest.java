package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.exceptions.InvalidKeyException;
import io.cairn.objectstore.exceptions.InvalidRangeException;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@link ObjectStore} contract, run against every backend by a subclass. Each test gets an
 * empty store from {@link #newStore()}.
 */
abstract class AbstractObjectStoreContractTest {
  /** Larger than 64 MiB and not a multiple of any part size. */
  static final long LARGE = (64L << 20) + 3 * (1 << 20) + 12_345;

  protected ObjectStore store;

  @TempDir Path tmp;

  /** A fresh, empty store; closed after the test. */
  protected abstract ObjectStore newStore();

  @BeforeEach
  void open() {
    store = newStore();
  }

  @AfterEach
  void closeStore() {
    store.close();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void roundTripsBytesStreamsAndFiles() throws IOException {
    byte[] data = TestData.bytes(1, 10_000);
    store.put("a/b/bytes.bin", data);
    assertThat(store.readAllBytes("a/b/bytes.bin")).isEqualTo(data);
    try (InputStream in = store.get("a/b/bytes.bin")) {
      assertThat(in.readAllBytes()).isEqualTo(data);
    }

    store.put("a/stream.bin", TestData.stream(2, 70_000), 70_000);
    assertThat(store.readAllBytes("a/stream.bin")).isEqualTo(TestData.bytes(2, 70_000));

    Path file = tmp.resolve("source.bin");
    Files.write(file, TestData.bytes(3, 123_456));
    store.put("file.bin", file);
    assertThat(store.readAllBytes("file.bin")).isEqualTo(Files.readAllBytes(file));

    store.put("empty", new byte[0]);
    assertThat(store.readAllBytes("empty")).isEmpty();
    assertThat(store.head("empty")).get().extracting(ObjectInfo::size).isEqualTo(0L);

    ObjectInfo info = store.head("a/b/bytes.bin").orElseThrow();
    assertThat(info.key()).isEqualTo("a/b/bytes.bin");
    assertThat(info.size()).isEqualTo(10_000);
    assertThat(info.etag()).isNotEmpty();
  }

  @Test
  void putReplacesAndChangesTheEtag() {
    store.put("k", utf8("one"));
    String etag1 = store.head("k").orElseThrow().etag();
    store.put("k", utf8("second version"));
    assertThat(store.readAllBytes("k")).isEqualTo(utf8("second version"));
    ObjectInfo info = store.head("k").orElseThrow();
    assertThat(info.size()).isEqualTo(14);
    assertThat(info.etag()).isNotEqualTo(etag1);
  }

  @Test
  void streamThatEndsEarlyLeavesNothingVisible() {
    assertThatThrownBy(() -> store.put("short", TestData.stream(4, 1000), 2000))
        .isInstanceOf(ObjectStoreException.class)
        .hasMessageContaining("short")
        .hasMessageContaining("1000 of 2000");
    assertThat(store.head("short")).isEmpty();
    assertThat(store.list("")).isEmpty();
  }

  @Test
  void missingObjects() {
    assertThat(store.head("no/such/key")).isEmpty();
    assertThatThrownBy(() -> store.get("no/such/key"))
        .isInstanceOf(ObjectNotFoundException.class).hasMessageContaining("no/such/key");
    assertThatThrownBy(() -> store.getRange("no/such/key", 0, 10))
        .isInstanceOf(ObjectNotFoundException.class).hasMessageContaining("no/such/key");
    assertThatThrownBy(() -> store.readAllBytes("no/such/key"))
        .isInstanceOf(ObjectNotFoundException.class);
    store.delete(List.of("no/such/key")); // no-op
  }

  @Test
  void byteRanges() throws IOException {
    byte[] data = TestData.bytes(5, 100_000);
    store.put("r", data);
    assertThat(read(store.getRange("r", 0, 10))).isEqualTo(Arrays.copyOfRange(data, 0, 10));
    assertThat(read(store.getRange("r", 54_321, 1_000))).isEqualTo(Arrays.copyOfRange(data, 54_321, 55_321));
    assertThat(read(store.getRange("r", 99_990, 1_000))).isEqualTo(Arrays.copyOfRange(data, 99_990, 100_000));
    assertThat(read(store.getRange("r", 0, Long.MAX_VALUE))).isEqualTo(data);
    assertThat(read(store.getRange("r", 100_000, 10))).isEmpty();
    assertThat(read(store.getRange("r", 500, 0))).isEmpty();
    assertThatThrownBy(() -> store.getRange("r", 100_001, 10))
        .isInstanceOf(InvalidRangeException.class).hasMessageContaining("r").hasMessageContaining("100001");
    assertThatThrownBy(() -> store.getRange("r", -1, 10)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> store.getRange("r", 0, -1)).isInstanceOf(IllegalArgumentException.class);
  }

  private static byte[] read(InputStream in) throws IOException {
    try (in) {
      return in.readAllBytes();
    }
  }

  @Test
  void listsMoreThanOneThousandKeysInOrderAndDeletesThemInBulk() throws Exception {
    int n = 1_100;
    List<String> keys = IntStream.range(0, n).mapToObj(i -> String.format("many/%05d", (i * 7919) % n)).toList();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (String k : keys) {
        futures.add(pool.submit(() -> store.put(k, utf8(k))));
      }
      for (Future<?> f : futures) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    store.put("many-sibling", utf8("sibling file, not under many/"));
    store.put("manyx/1", utf8("other prefix"));

    List<ObjectInfo> listed = store.list("many/");
    assertThat(listed).hasSize(n);
    assertThat(listed).extracting(ObjectInfo::key).isSorted()
        .containsExactlyElementsOf(keys.stream().sorted().toList());
    assertThat(listed).allSatisfy(i -> assertThat(i.size()).isEqualTo(10));

    assertThat(store.list("many")).hasSize(n + 2);
    assertThat(store.list("many/0109")).extracting(ObjectInfo::key)
        .containsExactly(IntStream.range(1090, 1100).mapToObj(i -> String.format("many/%05d", i)).toArray(String[]::new));
    assertThat(store.list("")).hasSize(n + 2);
    assertThat(store.list("nothing-here/")).isEmpty();

    List<String> toDelete = new ArrayList<>(keys);
    toDelete.add("never-existed");
    store.delete(toDelete);
    assertThat(store.list("")).extracting(ObjectInfo::key).containsExactly("many-sibling", "manyx/1");
  }

  @Test
  void listingOrderIsUtf8ByteOrder() {
    // U+FF5E sorts before U+1F600 in UTF-8 (and in S3) but after it in String.compareTo
    List<String> keys = List.of("u/a", "u/B", "u/\uFF5E", "u/\uD83D\uDE00", "u/a-b", "u/c/b", "u/\u00e9", "u/c~");
    keys.forEach(k -> store.put(k, utf8(k)));
    List<String> expected = keys.stream()
        .sorted((x, y) -> Arrays.compareUnsigned(utf8(x), utf8(y))).toList();
    assertThat(store.list("u/")).extracting(ObjectInfo::key).containsExactlyElementsOf(expected);
    assertThat(store.readAllBytes("u/\uD83D\uDE00")).isEqualTo(utf8("u/\uD83D\uDE00"));
  }

  @Test
  void putIfAbsentCreatesOnceAndNeverOverwrites() {
    store.putIfAbsent("catalog/00000000000000000001.json", utf8("{\"v\":1}"));
    assertThatThrownBy(() -> store.putIfAbsent("catalog/00000000000000000001.json", utf8("{\"v\":2}")))
        .isInstanceOf(ObjectAlreadyExistsException.class)
        .hasMessageContaining("catalog/00000000000000000001.json");
    assertThat(store.readAllBytes("catalog/00000000000000000001.json")).isEqualTo(utf8("{\"v\":1}"));
    store.put("plain", utf8("x"));
    assertThatThrownBy(() -> store.putIfAbsent("plain", utf8("y"))).isInstanceOf(ObjectAlreadyExistsException.class);
    assertThat(store.readAllBytes("plain")).isEqualTo(utf8("x"));
  }

  @Test
  void putIfAbsentRacedByEightThreadsHasExactlyOneWinnerEveryRound() throws Exception {
    int threads = 8;
    int rounds = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < rounds; round++) {
        String key = String.format("race/%020d.json", round);
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger winners = new AtomicInteger();
        Map<Integer, Throwable> unexpected = new ConcurrentHashMap<>();
        AtomicInteger winner = new AtomicInteger(-1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int id = t;
          futures.add(pool.submit(() -> {
            ready.countDown();
            go.await();
            try {
              store.putIfAbsent(key, utf8("writer-" + id));
              winners.incrementAndGet();
              winner.set(id);
            } catch (ObjectAlreadyExistsException expected) {
              // lost the race
            } catch (Throwable e) {
              unexpected.put(id, e);
            }
            return null;
          }));
        }
        ready.await();
        go.countDown();
        for (Future<?> f : futures) {
          f.get(60, TimeUnit.SECONDS);
        }
        assertThat(unexpected).as("round %d: unexpected failures", round).isEmpty();
        assertThat(winners.get()).as("round %d: winners", round).isEqualTo(1);
        assertThat(new String(store.readAllBytes(key), StandardCharsets.UTF_8))
            .as("round %d: content is the winner's", round).isEqualTo("writer-" + winner.get());
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(store.list("race/")).hasSize(rounds);
  }

  @Test
  void largeObjectOverSixtyFourMebibytesStreamsBothWays() throws IOException {
    store.put("big/object.bin", TestData.stream(7, LARGE), LARGE);
    assertThat(store.head("big/object.bin")).get().extracting(ObjectInfo::size).isEqualTo(LARGE);
    try (InputStream in = store.get("big/object.bin")) {
      assertThat(TestData.sha256(in)).isEqualTo(TestData.sha256(7, LARGE));
    }
    // a range across a part boundary (8 MiB default parts, 5 MiB minimum)
    long offset = (8L << 20) - 1000;
    byte[] expected;
    try (InputStream all = TestData.stream(7, LARGE)) {
      all.skipNBytes(offset);
      expected = all.readNBytes(1 << 20);
    }
    assertThat(read(store.getRange("big/object.bin", offset, 1 << 20))).isEqualTo(expected);
    // the tail
    assertThat(read(store.getRange("big/object.bin", LARGE - 5, 100))).hasSize(5);
    store.delete("big/object.bin");
    assertThat(store.head("big/object.bin")).isEmpty();
  }

  @Test
  void invalidKeysAreRejectedBeforeAnyIoNamingTheKey() {
    for (String bad : List.of("", "/abs", "trailing/", "a//b", "a/./b", "../escape", "a/..", "ctl\u0001x",
        "back\\slash", "x".repeat(1025))) {
      assertThatThrownBy(() -> store.put(bad, new byte[1])).as("put %s", bad).isInstanceOf(InvalidKeyException.class)
          .hasMessageContaining(bad.length() > 100 ? "longer than 1024" : bad.replace("\u0001", "\\u0001"));
      assertThatThrownBy(() -> store.putIfAbsent(bad, new byte[1])).isInstanceOf(InvalidKeyException.class);
      assertThatThrownBy(() -> store.get(bad)).isInstanceOf(InvalidKeyException.class);
      assertThatThrownBy(() -> store.head(bad)).isInstanceOf(InvalidKeyException.class);
      assertThatThrownBy(() -> store.delete(List.of("fine", bad))).isInstanceOf(InvalidKeyException.class);
    }
    assertThatThrownBy(() -> store.list("/abs")).isInstanceOf(InvalidKeyException.class);
    assertThat(store.list("")).isEmpty();
  }
}
