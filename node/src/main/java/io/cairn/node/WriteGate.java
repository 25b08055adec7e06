package io.cairn.node;

import io.cairn.objectstore.ForwardingObjectStore;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.ObjectWrite;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.Collection;

/**
 * The store as a node sees it: reads go to the store; writes are refused until the node owns the
 * store ({@link #open}), and then go through its epoch's guard ({@link StoreFence#guard}). A
 * standby reads the owner's catalog and snapshots through one of these and can write nothing;
 * when it takes the store over, the same catalog log and snapshot writer start writing through
 * the guard — nothing is re-opened.
 */
final class WriteGate extends ForwardingObjectStore {
  private final ObjectStore reads;
  private final String closedBecause;
  private volatile ObjectStore writes;

  /** Reads from {@code reads}; writes refused, saying {@code closedBecause}, until {@link #open}. */
  WriteGate(ObjectStore reads, String closedBecause) {
    this.reads = reads;
    this.closedBecause = closedBecause;
  }

  @Override
  protected ObjectStore delegate() {
    return reads;
  }

  /** From now on writes go to {@code guarded} (the store behind this node's epoch guard). */
  void open(ObjectStore guarded) {
    this.writes = guarded;
  }

  private ObjectStore writer(String what) {
    ObjectStore w = writes;
    if (w == null) {
      throw new IllegalStateException("Cannot " + what + " in " + reads.describe() + ": " + closedBecause);
    }
    return w;
  }

  @Override
  public void put(String key, byte[] bytes) {
    writer("write " + key).put(key, bytes);
  }

  @Override
  public void put(String key, InputStream in, long length) {
    writer("write " + key).put(key, in, length);
  }

  @Override
  public void put(String key, Path file) {
    writer("write " + key).put(key, file);
  }

  @Override
  public ObjectWrite openWrite(String key) {
    return writer("write " + key).openWrite(key);
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    writer("write " + key).putIfAbsent(key, bytes);
  }

  @Override
  public void delete(Collection<String> keys) {
    writer("delete " + keys.size() + " objects").delete(keys);
  }

  @Override
  public void close() {
    ObjectStore w = writes;
    if (w != null) {
      w.close(); // the guard closes the store it wraps: the same one reads go to
    } else {
      reads.close();
    }
  }
}
