package io.cairn.objectstore;

import java.io.InputStream;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * An object store that hands every call to {@link #delegate()}: a view of another store (a cache,
 * a guard, a gate) overrides only the calls it changes.
 */
public abstract class ForwardingObjectStore implements ObjectStore {
  /** The store calls go to. */
  protected abstract ObjectStore delegate();

  @Override
  public void put(String key, byte[] bytes) {
    delegate().put(key, bytes);
  }

  @Override
  public void put(String key, InputStream in, long length) {
    delegate().put(key, in, length);
  }

  @Override
  public void put(String key, Path file) {
    delegate().put(key, file);
  }

  @Override
  public boolean supportsStreamingWrites() {
    return delegate().supportsStreamingWrites();
  }

  @Override
  public ObjectWrite openWrite(String key) {
    return delegate().openWrite(key);
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    delegate().putIfAbsent(key, bytes);
  }

  @Override
  public InputStream get(String key) {
    return delegate().get(key);
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    return delegate().getRange(key, offset, length);
  }

  @Override
  public byte[] readAllBytes(String key) {
    return delegate().readAllBytes(key);
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    return delegate().head(key);
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    return delegate().list(prefix);
  }

  @Override
  public void delete(Collection<String> keys) {
    delegate().delete(keys);
  }

  @Override
  public String describe() {
    return delegate().describe();
  }

  @Override
  public void close() {
    delegate().close();
  }
}
