package io.cairn.benchmarks.snapshot;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The heap a piece of work adds above a baseline, from the collector's own figures: {@link
 * #baseline()} is the heap used after a full collection (live objects only); while watching, every
 * collection reports the heap used after it, and the largest of those minus the baseline is an
 * upper bound of the live memory the work added at that moment (a young collection's figure also
 * counts old-generation garbage not yet collected, so it can only overstate). Collections that
 * happen while watching are counted; with none, {@link #maxAfterGc()} is -1.
 */
final class HeapWatch implements NotificationListener, AutoCloseable {
  private final Set<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
      .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toSet());
  private final List<NotificationEmitter> emitters = new ArrayList<>();
  private final AtomicLong maxAfter = new AtomicLong(-1);
  private final AtomicInteger collections = new AtomicInteger();
  private final AtomicInteger fullCollections = new AtomicInteger();
  private final AtomicLong maxAfterFull = new AtomicLong(-1);

  private HeapWatch() {}

  /** The heap used after {@code System.gc()} (run until the figure settles), in bytes. */
  static long baseline() {
    long prev = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      if (Math.abs(prev - used) < (1 << 20)) {
        return used;
      }
      prev = used;
    }
    return prev;
  }

  /** Starts recording the heap after every collection, until closed. */
  static HeapWatch start() {
    HeapWatch w = new HeapWatch();
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      if (gc instanceof NotificationEmitter e) {
        e.addNotificationListener(w, null, null);
        w.emitters.add(e);
      }
    }
    return w;
  }

  @Override
  public void handleNotification(Notification n, Object handback) {
    if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
      return;
    }
    GarbageCollectionNotificationInfo info = GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData());
    long used = 0;
    for (Map.Entry<String, MemoryUsage> e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
      if (heapPools.contains(e.getKey())) {
        used += e.getValue().getUsed();
      }
    }
    long u = used;
    maxAfter.accumulateAndGet(u, Math::max);
    collections.incrementAndGet();
    if (info.getGcAction().contains("major") || info.getGcName().contains("Old") || info.getGcName().contains("MarkSweep")) {
      fullCollections.incrementAndGet();
      maxAfterFull.accumulateAndGet(u, Math::max);
    }
  }

  /** The most heap used after any collection while watching, or -1 if none ran. */
  long maxAfterGc() {
    return maxAfter.get();
  }

  /** The most heap used after a full collection while watching, or -1 if none ran. */
  long maxAfterFullGc() {
    return maxAfterFull.get();
  }

  int collections() {
    return collections.get();
  }

  int fullCollections() {
    return fullCollections.get();
  }

  @Override
  public void close() {
    for (NotificationEmitter e : emitters) {
      try {
        e.removeNotificationListener(this);
      } catch (ListenerNotFoundException ignored) {
        // not registered
      }
    }
  }
}
