package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link ObjectStore} in a concurrent sorted map, for fast tests. Objects are immutable byte
 * arrays, so a stream opened before a replace keeps reading the old content. Not for large data:
 * everything is on the heap.
 */
public final class InMemoryObjectStore implements ObjectStore {
  private static final AtomicInteger IDS = new AtomicInteger();

  private record Blob(byte[] bytes, ObjectInfo info) {}

  private final ConcurrentSkipListMap<String, Blob> objects = new ConcurrentSkipListMap<>(ObjectKeys.ORDER);
  private final Clock clock;
  private final String name;

  public InMemoryObjectStore() {
    this(Clock.systemUTC());
  }

  public InMemoryObjectStore(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.name = "memory://" + IDS.incrementAndGet();
  }

  private Blob blob(String key, byte[] bytes) {
    return new Blob(bytes, new ObjectInfo(key, bytes.length, StoreSupport.md5Hex(bytes), clock.instant()));
  }

  @Override
  public void put(String key, byte[] bytes) {
    ObjectKeys.validate(key);
    objects.put(key, blob(key, bytes.clone()));
  }

  @Override
  public void put(String key, InputStream in, long length) {
    ObjectKeys.validate(key);
    StoreSupport.checkLength(key, length);
    if (length > Integer.MAX_VALUE - 8) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": " + length + " bytes do not fit in memory");
    }
    objects.put(key, blob(key, StoreSupport.readExactly(name, key, in, (int) length)));
  }

  @Override
  public void put(String key, Path file) {
    ObjectKeys.validate(key);
    try {
      objects.put(key, blob(key, Files.readAllBytes(file)));
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": cannot read file " + file + ": " + e, e);
    }
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    ObjectKeys.validate(key);
    if (objects.putIfAbsent(key, blob(key, bytes.clone())) != null) {
      throw new ObjectAlreadyExistsException("Cannot create " + key + " in " + name + ": object already exists");
    }
  }

  private Blob require(String key) {
    Blob blob = objects.get(ObjectKeys.validate(key));
    if (blob == null) {
      throw new ObjectNotFoundException("Cannot read " + key + " in " + name + ": no such object");
    }
    return blob;
  }

  @Override
  public InputStream get(String key) {
    return new ByteArrayInputStream(require(key).bytes());
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    StoreSupport.checkRange(key, offset, length);
    byte[] bytes = require(key).bytes();
    if (offset > bytes.length) {
      throw StoreSupport.rangeBeyondEnd(name, key, offset, bytes.length);
    }
    int end = (int) Math.min(bytes.length, offset + Math.min(length, Integer.MAX_VALUE));
    return new ByteArrayInputStream(bytes, (int) offset, end - (int) offset);
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    Blob blob = objects.get(ObjectKeys.validate(key));
    return blob == null ? Optional.empty() : Optional.of(blob.info());
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    ObjectKeys.validatePrefix(prefix);
    List<ObjectInfo> result = new ArrayList<>();
    for (Map.Entry<String, Blob> e : objects.tailMap(prefix, true).entrySet()) {
      if (!e.getKey().startsWith(prefix)) {
        break;
      }
      result.add(e.getValue().info());
    }
    return result;
  }

  @Override
  public void delete(Collection<String> keys) {
    keys.forEach(ObjectKeys::validate);
    keys.forEach(objects::remove);
  }

  @Override
  public String describe() {
    return name;
  }

  @Override
  public void close() {}
}
