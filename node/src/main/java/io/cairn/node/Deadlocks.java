package io.cairn.node;

import java.lang.management.ManagementFactory;

/**
 * How many threads are deadlocked, for status and the liveness probe. The JVM's check stops every
 * thread at a safepoint, so it runs at most once per {@value #MAX_AGE_MILLIS} ms however often
 * monitoring polls (several pollers every few milliseconds would otherwise stop the node that
 * often); between checks the last answer is given.
 */
final class Deadlocks {
  static final long MAX_AGE_MILLIS = 1000;
  private static volatile long checkedAtNanos = System.nanoTime() - MAX_AGE_MILLIS * 2_000_000;
  private static volatile int last;

  private Deadlocks() {}

  /** Threads deadlocked as of at most a second ago. */
  static int count() {
    long now = System.nanoTime();
    if (now - checkedAtNanos > MAX_AGE_MILLIS * 1_000_000) {
      synchronized (Deadlocks.class) {
        if (now - checkedAtNanos > MAX_AGE_MILLIS * 1_000_000) {
          long[] d = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
          last = d == null ? 0 : d.length;
          checkedAtNanos = System.nanoTime();
        }
      }
    }
    return last;
  }
}
