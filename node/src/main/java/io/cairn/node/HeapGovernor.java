package io.cairn.node;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.VMOption;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the heap a node touches in proportion to what it holds, by moving the JVM's soft heap
 * limit ({@code SoftMaxHeapSize}) after each collection cycle.
 *
 * <h2>Why</h2>
 * A concurrent collector (Shenandoah, cairn's default, and ZGC) starts a cycle as its soft limit
 * fills, and the soft limit is the maximum heap unless someone sets it. So a fresh process lets its
 * heap grow to {@code -Xmx} before it collects, whatever its state holds. Each page of heap touched
 * the first time costs a page fault, and on a virtual machine that is expensive: here about 2 s of
 * kernel time per GB touched. A 15M-record replay with 0.4 GB of state grew a 6 GB heap to 5.7 GB
 * and spent 12.7 s of its 58 s of CPU in the kernel (benchmarks/RESULTS.md, "The heap a fresh
 * process touches"). A restart is always a fresh process, so that is paid on every recovery.
 *
 * <h2>The rule</h2>
 * It starts at a floor of {@value #FLOOR_GIB} GiB (or the maximum heap, if smaller). After each
 * cycle the limit becomes the larger of the limit before and {@value #FACTOR} × the heap used after
 * the cycle (the state plus what was allocated during the cycle), at most the maximum heap. It
 * never goes down: a page once touched costs nothing more to use. A smaller floor or factor was
 * measured to cost more in marking than it saves in page faults; a rule that also grew the limit
 * whenever a cycle ran more than a quarter of the wall time grew it to the maximum within 6 s of a
 * replay (cycles are slow while the JIT holds the cores) and saved nothing. The limit is soft: a
 * collector may still use the whole heap when allocation outruns it, so no allocation fails that
 * would not have failed without it.
 *
 * <h2>When it stays out</h2>
 * {@code -Dcairn.heap.floor=512m} moves the floor (a laptop with a small state can keep its heap smaller).
 * It is installed once per process ({@link #install()}), and only when the collector honours a
 * soft limit (Shenandoah, ZGC; G1 and the serial collector ignore it on Java 17), the operator did
 * not set {@code SoftMaxHeapSize} (in {@code CAIRN_JAVA_OPTS}), and {@code -Dcairn.heap.governor=false}
 * is not given.
 */
public final class HeapGovernor {
  static final long FLOOR_GIB = 3;
  static final double FACTOR = 3.0;
  private static final Logger LOG = LoggerFactory.getLogger(HeapGovernor.class);
  private static final Object LOCK = new Object();
  private static volatile HeapGovernor installed;

  private final HotSpotDiagnosticMXBean hotspot;
  private final long maxHeap;
  private final long floor;
  private final AtomicLong softLimit = new AtomicLong();
  private final AtomicLong cycles = new AtomicLong();

  private HeapGovernor(HotSpotDiagnosticMXBean hotspot, long maxHeap, long floor) {
    this.hotspot = hotspot;
    this.maxHeap = maxHeap;
    this.floor = floor;
  }

  /**
   * The soft limit after a cycle, from the limit before it ({@code current}) and the heap used
   * after it: the largest of {@code current}, the floor and {@link #FACTOR} × used, at most {@code
   * maxHeap}. It never goes down: a page once touched costs nothing more to use.
   */
  static long next(long current, long usedAfterCycle, long maxHeap, long floorBytes) {
    double wanted = Math.max(Math.max(current, Math.min(maxHeap, floorBytes)), FACTOR * Math.max(0, usedAfterCycle));
    return (long) Math.min(maxHeap, wanted);
  }

  /**
   * Installs the governor in this process unless it does not apply (see the class comment);
   * idempotent. Returns it, or null when it stays out.
   */
  public static HeapGovernor install() {
    synchronized (LOCK) {
      if (installed != null) {
        return installed;
      }
      long t0 = System.nanoTime();
      if (!Boolean.parseBoolean(System.getProperty("cairn.heap.governor", "true"))) {
        return null;
      }
      List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
      boolean concurrent = collectors.stream().anyMatch(c -> c.getName().startsWith("Shenandoah") || c.getName().startsWith("ZGC"));
      if (!concurrent) {
        return null;
      }
      HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      VMOption option;
      try {
        option = hotspot.getVMOption("SoftMaxHeapSize");
      } catch (IllegalArgumentException e) {
        return null; // a JVM without the flag
      }
      // ERGONOMIC: the JVM set it to the maximum heap itself
      boolean ours = option.getOrigin() == VMOption.Origin.DEFAULT || option.getOrigin() == VMOption.Origin.ERGONOMIC;
      if (!ours || !option.isWriteable()) {
        LOG.info("Heap governor off: SoftMaxHeapSize is {} ({})", option.getValue(), option.getOrigin());
        return null;
      }
      long max = Runtime.getRuntime().maxMemory();
      long floor;
      try {
        floor = floorBytes(System.getProperty("cairn.heap.floor"));
      } catch (IllegalArgumentException e) {
        floor = FLOOR_GIB << 30;
        LOG.warn("{}; the floor stays {} GiB", e.getMessage(), FLOOR_GIB);
      }
      HeapGovernor g = new HeapGovernor(hotspot, max, floor);
      // the cycle beans where a collector reports cycles and pauses apart ("Shenandoah Cycles", "ZGC Cycles")
      boolean hasCycles = collectors.stream().anyMatch(c -> c.getName().endsWith("Cycles"));
      for (GarbageCollectorMXBean c : collectors) {
        if (c instanceof NotificationEmitter emitter && (!hasCycles || c.getName().endsWith("Cycles"))) {
          emitter.addNotificationListener((n, handback) -> {
            if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(n.getType())) {
              g.afterCycle(GarbageCollectionNotificationInfo.from((CompositeData) n.getUserData()).getGcInfo());
            }
          }, null, null);
        }
      }
      g.set(next(0, 0, max, floor));
      LOG.info("Heap governor on: soft heap limit max({} MiB, {} × heap used after a cycle), maximum heap {} MiB ({} ms)",
          floor >> 20, FACTOR, max >> 20, (System.nanoTime() - t0) / 1_000_000);
      installed = g;
      return g;
    }
  }

  /** The floor from {@code -Dcairn.heap.floor} ({@code 512m}, {@code 3g}, bytes), or the default. */
  static long floorBytes(String text) {
    if (text == null || text.isBlank()) {
      return FLOOR_GIB << 30;
    }
    String t = text.trim().toLowerCase(java.util.Locale.ROOT);
    int shift = t.endsWith("g") ? 30 : t.endsWith("m") ? 20 : t.endsWith("k") ? 10 : 0;
    try {
      long n = Long.parseLong(shift == 0 ? t : t.substring(0, t.length() - 1));
      if (n <= 0) {
        throw new NumberFormatException();
      }
      return n << shift;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("cairn.heap.floor: '" + text + "' is not a size such as 512m or 3g");
    }
  }

  /** The soft heap limit set last, in bytes. */
  public long softLimitBytes() {
    return softLimit.get();
  }

  /** Collection cycles seen since installed. */
  public long cycles() {
    return cycles.get();
  }

  private synchronized void afterCycle(com.sun.management.GcInfo info) {
    long used = 0;
    for (var e : info.getMemoryUsageAfterGc().entrySet()) {
      // heap pools only: the collectors' pools are named for the heap ("Shenandoah", "ZHeap")
      if (!e.getKey().contains("Metaspace") && !e.getKey().contains("CodeHeap") && !e.getKey().contains("Compressed Class")) {
        used += e.getValue().getUsed();
      }
    }
    cycles.incrementAndGet();
    set(next(softLimit.get(), used, maxHeap, floor));
  }

  private void set(long bytes) {
    long before = softLimit.getAndSet(bytes);
    if (before != bytes) {
      try {
        hotspot.setVMOption("SoftMaxHeapSize", Long.toString(bytes));
      } catch (RuntimeException e) {
        LOG.warn("Heap governor could not set SoftMaxHeapSize to {}: {}", bytes, e.toString());
      }
      if (LOG.isDebugEnabled()) {
        LOG.debug("Soft heap limit {} MiB (was {} MiB)", bytes >> 20, before >> 20);
      }
    }
  }
}
