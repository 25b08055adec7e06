package io.cairn.snapshotter;

import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/** Forwards every call; tests override what they need. */
class DelegatingStore implements ObjectStore {
  final ObjectStore d;

  DelegatingStore(ObjectStore d) {
    this.d = d;
  }

  @Override public void put(String key, byte[] bytes) { d.put(key, bytes); }
  @Override public void put(String key, InputStream in, long length) { d.put(key, in, length); }
  @Override public void put(String key, Path file) { d.put(key, file); }
  @Override public void putIfAbsent(String key, byte[] bytes) { d.putIfAbsent(key, bytes); }
  @Override public InputStream get(String key) { return d.get(key); }
  @Override public InputStream getRange(String key, long offset, long length) { return d.getRange(key, offset, length); }
  @Override public Optional<ObjectInfo> head(String key) { return d.head(key); }
  @Override public List<ObjectInfo> list(String prefix) { return d.list(prefix); }
  @Override public void delete(Collection<String> keys) { d.delete(keys); }
  @Override public String describe() { return "delegating(" + d.describe() + ")"; }
  @Override public void close() { d.close(); }
}
