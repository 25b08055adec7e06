package io.cairn.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.objectstore.ObjectInfo;
import io.cairn.objectstore.ObjectStore;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One writer per store: epochs, after Kafka's producer epochs.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>A node that will write (run, recover) takes the store by creating the object {@code
 *       nodes/<epoch, 20 digits>.json} (host, pid, start time) with create-if-absent, one above
 *       the highest epoch it lists; of two nodes racing for one epoch exactly one wins, the other
 *       takes the next. The newest epoch owns the store: a new node <em>fences</em> the old one
 *       (an overlapping deploy hands over to the new node, as a new Kafka producer with the same
 *       transactional id fences the old one). {@code --no-takeover} refuses to start instead while
 *       the owner looks alive.
 *   <li>Every write that changes the store's history — a catalog append, a manifest commit, a
 *       delete by garbage collection — goes through {@link #guard}, which first lists {@code
 *       nodes/} and throws {@link FencedException} if a newer epoch exists. A fenced node writes
 *       nothing more and stops ({@link Node} exits with a message naming the node that fenced it);
 *       it also finds out within {@code checkInterval} when idle. Catalog entries and manifests
 *       record the writer's epoch.
 *   <li>What this cannot prevent, and why it is safe: a write that passed the check just before
 *       a newer node took the store. Such a write is still create-if-absent (a catalog entry the
 *       new node did not read makes its own append at that position fail, and it re-reads — the
 *       catalog's optimistic commit, as in Iceberg), or a complete manifest (a valid snapshot), or
 *       a GC delete that re-listed every manifest just before deleting and honours the grace
 *       period, so it never deletes a file a manifest references.
 *   <li>Readers (snapshots list/verify, sql/status against a node) take no epoch.
 * </ul>
 */
final class StoreFence {
  private static final Logger LOG = LoggerFactory.getLogger(StoreFence.class);
  static final String PREFIX = "nodes/";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A node found a newer epoch in the store: it must stop writing. */
  static final class FencedException extends IllegalStateException {
    FencedException(String message) {
      super(message);
    }
  }

  /** One epoch object. */
  record Owner(long epoch, String host, long pid, String startedAt) {
    String describe() {
      return "node " + host + " (pid " + pid + ", epoch " + epoch + ", started " + startedAt + ")";
    }
  }

  private final ObjectStore store;
  private final Owner self;
  private volatile FencedException fenced;

  private StoreFence(ObjectStore store, Owner self) {
    this.store = store;
    this.self = self;
  }

  static String key(long epoch) {
    return io.cairn.objectstore.NumberedObjects.key(PREFIX, epoch);
  }

  /**
   * Takes the store: writes the next epoch. With {@code takeover} false, refuses while the
   * current owner looks alive (same host and its process exists, or another host and it did not
   * stop cleanly).
   */
  static StoreFence acquire(ObjectStore store, Clock clock, boolean takeover) {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      host = "unknown-host";
    }
    long pid = ProcessHandle.current().pid();
    for (int attempt = 0; attempt < 100; attempt++) {
      Optional<Owner> current = newest(store);
      if (!takeover && current.isPresent() && looksAlive(store, current.get(), host)) {
        throw new FencedException("Cannot start: the store " + store.describe() + " is owned by " + current.get().describe()
            + ", which looks alive; stop it first, or start without --no-takeover to fence it");
      }
      long epoch = current.map(Owner::epoch).orElse(0L) + 1;
      Owner me = new Owner(epoch, host, pid, Instant.now(clock).toString());
      try {
        store.putIfAbsent(key(epoch), JSON.writeValueAsBytes(me));
        current.ifPresent(old -> LOG.warn("Took the store {} as epoch {}: {} is fenced and will stop writing",
            store.describe(), epoch, old.describe()));
        if (current.isEmpty()) {
          LOG.info("Took the store {} as epoch {}", store.describe(), epoch);
        }
        return new StoreFence(store, me);
      } catch (ObjectAlreadyExistsException raced) {
        LOG.debug("Epoch {} was taken by another node; trying the next", epoch);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("Cannot take the store " + store.describe() + ": 100 epochs raced away");
  }

  private static boolean looksAlive(ObjectStore store, Owner owner, String host) {
    if (store.head(PREFIX + String.format(Locale.ROOT, "%020d", owner.epoch()) + ".stopped").isPresent()) {
      return false;
    }
    if (owner.host().equals(host)) {
      return ProcessHandle.of(owner.pid()).map(ProcessHandle::isAlive).orElse(false);
    }
    return true;
  }

  /** The owner with the highest epoch, if any. */
  static Optional<Owner> newest(ObjectStore store) {
    java.util.OptionalLong highest = io.cairn.objectstore.NumberedObjects.highest(store, PREFIX);
    if (highest.isEmpty()) {
      return Optional.empty();
    }
    long max = highest.getAsLong();
    try {
      JsonNode n = JSON.readTree(store.readAllBytes(key(max)));
      return Optional.of(new Owner(max, n.path("host").asText("?"), n.path("pid").asLong(-1), n.path("startedAt").asText("?")));
    } catch (IOException e) {
      return Optional.of(new Owner(max, "?", -1, "?"));
    }
  }

  long epoch() {
    return self.epoch();
  }

  /** Throws {@link FencedException} if a newer epoch owns the store (and remembers it). */
  void check() {
    FencedException f = fenced;
    if (f != null) {
      throw f;
    }
    Optional<Owner> newest = newest(store);
    if (newest.isPresent() && newest.get().epoch() > self.epoch()) {
      f = new FencedException("Fenced: " + newest.get().describe() + " took the store " + store.describe()
          + "; this node (epoch " + self.epoch() + ") stops writing");
      fenced = f;
      throw f;
    }
  }

  /** The fencing error once fenced, else null. */
  FencedException fenced() {
    return fenced;
  }

  /** Marks a clean stop, so that a later {@code --no-takeover} start knows this owner is gone. */
  void release() {
    if (fenced != null) {
      return;
    }
    try {
      store.putIfAbsent(PREFIX + String.format(Locale.ROOT, "%020d", self.epoch()) + ".stopped",
          Instant.now().toString().getBytes(StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      LOG.debug("Could not mark epoch {} stopped: {}", self.epoch(), e.getMessage());
    }
  }

  /**
   * The store as this node writes it: catalog appends, manifest commits and deletes first check
   * the epoch ({@link #check}); {@code onFenced} is told once when that finds a newer owner.
   */
  ObjectStore guard(ObjectStore delegate, Consumer<FencedException> onFenced) {
    return new ObjectStore() {
      private void checked(String what) {
        try {
          check();
        } catch (FencedException e) {
          onFenced.accept(e);
          throw new FencedException(e.getMessage() + " (refused: " + what + ")");
        }
      }

      @Override
      public void put(String key, byte[] bytes) {
        delegate.put(key, bytes);
      }

      @Override
      public void put(String key, InputStream in, long length) {
        delegate.put(key, in, length);
      }

      @Override
      public void put(String key, Path file) {
        delegate.put(key, file);
      }

      @Override
      public boolean supportsStreamingWrites() {
        return delegate.supportsStreamingWrites();
      }

      @Override
      public io.cairn.objectstore.ObjectWrite openWrite(String key) {
        return delegate.openWrite(key); // batch files, like put: the manifest commit checks the epoch
      }

      @Override
      public void putIfAbsent(String key, byte[] bytes) {
        if (!key.startsWith(PREFIX)) {
          checked("write " + key);
        }
        delegate.putIfAbsent(key, bytes);
      }

      @Override
      public InputStream get(String key) {
        return delegate.get(key);
      }

      @Override
      public InputStream getRange(String key, long offset, long length) {
        return delegate.getRange(key, offset, length);
      }

      @Override
      public byte[] readAllBytes(String key) {
        return delegate.readAllBytes(key);
      }

      @Override
      public Optional<ObjectInfo> head(String key) {
        return delegate.head(key);
      }

      @Override
      public List<ObjectInfo> list(String prefix) {
        return delegate.list(prefix);
      }

      @Override
      public void delete(Collection<String> keys) {
        checked("delete " + keys.size() + " objects");
        delegate.delete(keys);
      }

      @Override
      public String describe() {
        return delegate.describe();
      }

      @Override
      public void close() {
        delegate.close();
      }
    };
  }
}
