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
 * One writer per store: epochs, after Kafka's producer epochs, and commit slots that fence a
 * zombie by construction.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>A node that will write (run, recover, a standby taking over) takes the store by creating
 *       the object {@code nodes/<epoch, 20 digits>.json} (host, pid, start time) with
 *       create-if-absent, one above the highest epoch it lists; of two nodes racing for one epoch
 *       exactly one wins, the other takes the next. The newest epoch owns the store: a new node
 *       <em>fences</em> the old one (an overlapping deploy hands over to the new node, as a new Kafka
 *       producer with the same transactional id fences the old one). {@code --no-takeover} refuses
 *       to start instead while the owner looks alive.
 *   <li><b>Fenced by construction.</b> Every write that changes the store's history — a catalog
 *       append (and its head witness), a manifest commit, a delete by garbage collection — first
 *       claims the next <em>commit slot</em>: it creates {@code commits/<n, 20 digits>.json}
 *       (the writer's epoch and what it is about to write) with create-if-absent, where {@code n}
 *       is one above the slot this node claimed last. A node never re-lists to find {@code n}:
 *       right after taking its epoch, and before it reads anything to recover from, a new owner
 *       claims one above the highest slot it lists. So a node that froze (SIGSTOP, a long GC, a
 *       partition) and wakes up after a takeover finds its next slot already taken by a newer
 *       epoch: that conditional write fails, nothing of the write it guarded happens, and the node
 *       is fenced ({@link FencedException}; {@link Node} stops and exits 5). A check made after a
 *       write would come too late: the write would have happened. A slot that exists with this
 *       node's own epoch is its own (an earlier attempt whose answer was lost) and counts as
 *       claimed.
 *   <li>What a claim cannot prevent, and why it is safe: a write whose claim landed just before
 *       the new owner's first claim (the old owner was still the owner then). It completes as
 *       a create-if-absent catalog entry (the new owner's own append at that position then fails
 *       and it re-reads, the catalog's optimistic commit, as in Iceberg), a complete manifest (a
 *       valid snapshot of a prefix of every source), or a GC delete that re-listed every manifest
 *       and honours the grace period, so it never deletes a file a manifest references.
 *   <li>Batch files are written before their manifest under names no one else uses; a node checks
 *       its epoch (one listing of {@code nodes/}, at most once a second) before writing one, so a
 *       zombie that wakes up in the middle of an upload stops at its next file instead of leaving
 *       files behind. The background check every few seconds finds out when idle.
 *   <li>Readers (snapshots list/verify, sql/status against a node, a standby) take no epoch and
 *       claim nothing.
 * </ul>
 */
final class StoreFence {
  private static final Logger LOG = LoggerFactory.getLogger(StoreFence.class);
  static final String PREFIX = "nodes/";
  /** Where commit slots are claimed ({@link #claim}). */
  static final String COMMITS = "commits/";
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
  /** The last commit slot this node claimed (guarded by {@code this}). */
  private long slot;
  /** When {@link #check} last found this node the owner (nanoTime), for {@link #checkRecently}. */
  private volatile long checkedAt;

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
        StoreFence f = new StoreFence(store, me);
        long first = f.claimFirstSlot();
        current.ifPresent(old -> LOG.warn("Took the store {} as epoch {} (commit slot {}): {} is fenced and will stop writing",
            store.describe(), epoch, first, old.describe()));
        if (current.isEmpty()) {
          LOG.info("Took the store {} as epoch {} (commit slot {})", store.describe(), epoch, first);
        }
        return f;
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

  static String slotKey(long n) {
    return io.cairn.objectstore.NumberedObjects.key(COMMITS, n);
  }

  /**
   * Right after taking the epoch: claims one above the highest commit slot listed (the one listing
   * a node ever makes of them), so that the previous owner's next claim fails. A slot taken
   * meanwhile by an older epoch is passed over (that write was ordered before this epoch); one
   * taken by a newer epoch means this node is fenced already.
   */
  private synchronized long claimFirstSlot() {
    long n = io.cairn.objectstore.NumberedObjects.highest(store, COMMITS).orElse(0L);
    for (int attempt = 0; attempt < 100; attempt++) {
      n++;
      Slot held = tryClaim(n, "took the store");
      if (held == Slot.MINE) {
        slot = n;
        return n;
      }
      if (held == Slot.OLDER) {
        continue;
      }
      FencedException f = new FencedException("Fenced while taking the store " + store.describe() + ": commit slot " + n
          + " was claimed by newer epoch " + slotEpoch(n) + "; this node (epoch " + self.epoch() + ") stops writing");
      fenced = f;
      throw f;
    }
    throw new IllegalStateException("Cannot take the store " + store.describe() + ": 100 commit slots raced away");
  }

  /**
   * Claims the next commit slot before {@code what} is written (see the design block): throws
   * {@link FencedException} when a newer epoch claimed it first.
   */
  synchronized void claim(String what) {
    FencedException f = fenced;
    if (f != null) {
      throw f;
    }
    long n = slot + 1;
    Slot held = tryClaim(n, what);
    while (held == Slot.OLDER) {
      n++; // an older epoch's claim that raced this node's first one; never more than a few
      held = tryClaim(n, what);
    }
    if (held == Slot.NEWER) {
      Optional<Owner> newest = newest(store);
      f = new FencedException("Fenced: commit slot " + n + " was claimed by epoch " + slotEpoch(n) + " after "
          + newest.map(Owner::describe).orElse("another node") + " took the store " + store.describe()
          + "; this node (epoch " + self.epoch() + ") stops writing");
      fenced = f;
      throw f;
    }
    slot = n;
  }

  /** Who holds a commit slot after {@link #tryClaim}. */
  private enum Slot {
    /** This epoch (claimed now, or by an earlier attempt whose answer was lost). */
    MINE,
    /** An older epoch: that write was ordered before this epoch's first claim; the next slot is tried. */
    OLDER,
    /** A newer epoch (or one that cannot be read): this node is fenced. */
    NEWER
  }

  /** Creates slot {@code n} for this epoch and says who holds it. */
  private Slot tryClaim(long n, String what) {
    try {
      java.util.Map<String, Object> body = new java.util.LinkedHashMap<>();
      body.put("epoch", self.epoch());
      body.put("pid", self.pid());
      body.put("write", what);
      store.putIfAbsent(slotKey(n), JSON.writeValueAsBytes(body));
      return Slot.MINE;
    } catch (ObjectAlreadyExistsException taken) {
      long by = slotEpoch(n);
      return by == self.epoch() ? Slot.MINE : by >= 0 && by < self.epoch() ? Slot.OLDER : Slot.NEWER;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private long slotEpoch(long n) {
    try {
      return JSON.readTree(store.readAllBytes(slotKey(n))).path("epoch").asLong(-1);
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  /** The last commit slot this node claimed. */
  synchronized long slot() {
    return slot;
  }

  /** {@link #check}, unless it found this node the owner less than a second ago. */
  void checkRecently() {
    if (fenced == null && System.nanoTime() - checkedAt < 1_000_000_000L) {
      return;
    }
    check();
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
    checkedAt = System.nanoTime();
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
   * The store as this node writes it: catalog appends, manifest commits and deletes first claim a
   * commit slot ({@link #claim}), batch files first check the epoch ({@link #checkRecently});
   * {@code onFenced} is told once when either finds a newer owner.
   */
  ObjectStore guard(ObjectStore delegate, Consumer<FencedException> onFenced) {
    java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
    return new io.cairn.objectstore.ForwardingObjectStore() {
      @Override
      protected ObjectStore delegate() {
        return delegate;
      }

      /** Runs {@code gate} ({@link #claim} or {@link #checkRecently}); fenced, tells {@code onFenced} once and refuses {@code what}. */
      private void gated(Runnable gate, String what) {
        try {
          gate.run();
        } catch (FencedException e) {
          if (told.compareAndSet(false, true)) {
            onFenced.accept(e);
          }
          throw new FencedException(e.getMessage() + " (refused: " + what + ")");
        }
      }

      @Override
      public void put(String key, byte[] bytes) {
        gated(StoreFence.this::checkRecently, "write " + key);
        delegate.put(key, bytes);
      }

      @Override
      public void put(String key, InputStream in, long length) {
        gated(StoreFence.this::checkRecently, "write " + key);
        delegate.put(key, in, length);
      }

      @Override
      public void put(String key, Path file) {
        gated(StoreFence.this::checkRecently, "write " + key);
        delegate.put(key, file);
      }

      @Override
      public io.cairn.objectstore.ObjectWrite openWrite(String key) {
        gated(StoreFence.this::checkRecently, "write " + key);
        return delegate.openWrite(key); // batch files, like put: the manifest commit claims a slot
      }

      @Override
      public void putIfAbsent(String key, byte[] bytes) {
        if (!key.startsWith(PREFIX)) {
          gated(() -> claim("write " + key), "write " + key);
        }
        delegate.putIfAbsent(key, bytes);
      }

      @Override
      public void delete(Collection<String> keys) {
        gated(() -> claim("delete " + keys.size() + " objects"), "delete " + keys.size() + " objects");
        delegate.delete(keys);
      }
    };
  }
}
