package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.InvalidKeyException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class LocalObjectStoreTest extends AbstractObjectStoreContractTest {
  private Path root;

  @Override
  protected ObjectStore newStore() {
    root = tmp.resolve("store");
    return LocalObjectStore.createDirectories(root);
  }

  private long tempFiles() throws IOException {
    try (Stream<Path> s = Files.list(root.resolve(LocalObjectStore.TMP_DIR))) {
      return s.count();
    }
  }

  @Test
  void objectsAreFilesUnderTheRootAndTempFilesDoNotLinger() throws IOException {
    store.put("a/b/c.txt", "hello".getBytes());
    store.putIfAbsent("catalog/1.json", "{}".getBytes());
    assertThat(root.resolve("a/b/c.txt")).hasContent("hello");
    assertThat(root.resolve("catalog/1.json")).hasContent("{}");
    assertThatThrownBy(() -> store.put("short", TestData.stream(1, 10), 20)).isInstanceOf(ObjectStoreException.class);
    assertThatThrownBy(() -> store.putIfAbsent("catalog/1.json", new byte[1])).isInstanceOf(ObjectStoreException.class);
    assertThat(tempFiles()).isZero();
    assertThat(store.list("")).extracting(ObjectInfo::key).containsExactly("a/b/c.txt", "catalog/1.json");
  }

  @Test
  void deleteRemovesEmptiedDirectories() {
    store.put("x/y/z", new byte[3]);
    store.delete("x/y/z");
    assertThat(root.resolve("x")).doesNotExist();
    store.put("x/y", new byte[1]); // the former directory name is usable as a key
    assertThat(store.readAllBytes("x/y")).hasSize(1);
  }

  @Test
  void aKeyCannotBeBothAnObjectAndAPrefixOfAnother() {
    store.put("a", new byte[1]);
    assertThatThrownBy(() -> store.put("a/b", new byte[1]))
        .isInstanceOf(ObjectStoreException.class).hasMessageContaining("a/b");
    store.put("d/e", new byte[1]);
    assertThatThrownBy(() -> store.put("d", new byte[1]))
        .isInstanceOf(ObjectStoreException.class).hasMessageContaining("directory");
    assertThat(store.head("a/b")).isEmpty();
    assertThat(store.head("d")).isEmpty();
  }

  @Test
  void reservedTempSegmentAndMissingRoot() {
    assertThatThrownBy(() -> store.put(LocalObjectStore.TMP_DIR + "/x", new byte[1]))
        .isInstanceOf(InvalidKeyException.class).hasMessageContaining("reserved");
    Path missing = tmp.resolve("does-not-exist");
    assertThatThrownBy(() -> new LocalObjectStore(missing))
        .isInstanceOf(BucketNotFoundException.class).hasMessageContaining("does-not-exist");
  }
}
