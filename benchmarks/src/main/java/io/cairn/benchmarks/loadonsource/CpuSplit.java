package io.cairn.benchmarks.loadonsource;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU time spent between {@link #start} and {@link #end()}, split between the Kafka broker (its
 * child JVM's CPU, or its threads when it runs in this JVM) and everyone else (the node: its ticking thread, workers, loaders), plus the
 * whole process, the garbage collector's pause time (wall) and the JIT compilers' time (neither is
 * in the per-thread figures). Threads that both start and end in between are only in the process
 * figure.
 * Tells whether a recovery is bounded by the machine's cores: on 2 cores, {@code process} close
 * to 2 × the wall time means it is.
 */
final class CpuSplit {
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> before;
  private final long processBefore;
  private final long gcBefore;
  private final long jitBefore;
  private final ProcessHandle broker;
  private final long brokerBefore;

  private CpuSplit(Map<Long, Long> before, long processBefore, long gcBefore, long jitBefore, ProcessHandle broker) {
    this.broker = broker;
    this.brokerBefore = childCpu(broker);
    this.before = before;
    this.processBefore = processBefore;
    this.gcBefore = gcBefore;
    this.jitBefore = jitBefore;
  }

  /** Starts counting; {@code broker} is the broker's child JVM, or null when it runs in this one. */
  static CpuSplit start(ProcessHandle broker) {
    return new CpuSplit(threadCpu(), processCpu(), gcMillis(), jitMillis(), broker);
  }

  private static long childCpu(ProcessHandle p) {
    return p == null ? 0 : p.info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(0L);
  }

  /** {@code node}, {@code broker} and {@code process} CPU milliseconds since {@link #start()}. */
  Map<String, Long> end() {
    long node = 0;
    long workers = 0;
    long compute = 0;
    long broker = 0;
    for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (t == null) {
        continue;
      }
      long now = THREADS.getThreadCpuTime(t.getThreadId());
      if (now < 0) {
        continue;
      }
      long delta = now - before.getOrDefault(t.getThreadId(), 0L);
      if (isBroker(t.getThreadName())) {
        broker += delta;
      } else {
        node += delta;
        if (t.getThreadName().startsWith("cairn-worker-")) {
          workers += delta;
        } else if (t.getThreadName().equals("cairn-tick-compute")) {
          compute += delta;
        }
      }
    }
    Map<String, Long> out = new LinkedHashMap<>();
    out.put("node", node / 1_000_000);
    // of which: the workers, the thread that runs a full tick's computation while the next is read,
    // and the rest (the ticking thread that polls the sources, loaders, ...)
    out.put("node workers", workers / 1_000_000);
    out.put("node tick-compute", compute / 1_000_000);
    out.put("node other", (node - workers - compute) / 1_000_000);
    out.put("broker", (broker + childCpu(this.broker) - brokerBefore) / 1_000_000);
    out.put("process", (processCpu() - processBefore) / 1_000_000);
    out.put("gc (wall)", gcMillis() - gcBefore);
    out.put("jit", jitMillis() - jitBefore);
    return out;
  }

  private static boolean isBroker(String name) {
    return name.startsWith("data-plane-kafka") || name.startsWith("kafka-") && !name.contains("cairn")
        || name.startsWith("quorum-controller") || name.startsWith("broker-") || name.contains("raft")
        || name.startsWith("ExpirationReaper") || name.startsWith("LogDirFailureHandler")
        || name.startsWith("controller-") || name.startsWith("executor-");
  }

  private static Map<Long, Long> threadCpu() {
    Map<Long, Long> m = new HashMap<>();
    for (long id : THREADS.getAllThreadIds()) {
      long c = THREADS.getThreadCpuTime(id);
      if (c >= 0) {
        m.put(id, c);
      }
    }
    return m;
  }

  private static long gcMillis() {
    long sum = 0;
    for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      sum += Math.max(0, gc.getCollectionTime());
    }
    return sum;
  }

  private static long jitMillis() {
    java.lang.management.CompilationMXBean c = ManagementFactory.getCompilationMXBean();
    return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime() : 0;
  }

  private static long processCpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }
}
