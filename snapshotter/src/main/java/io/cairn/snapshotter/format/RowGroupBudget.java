package io.cairn.snapshotter.format;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many encoded row groups may be held in memory at once, across every batch file written with
 * the same {@link BatchFileOptions} (one snapshot's files share one budget). A row group holds a
 * permit from before its encoding starts until its pages are appended to the file (or the write
 * failed). A writer that holds no permit waits for one; a writer that holds some only takes
 * another if one is free, then appends what it has, so every holder can always finish its next
 * row group and the writers cannot deadlock.
 */
public final class RowGroupBudget {
  private final int size;
  private final Semaphore permits;
  private final AtomicInteger held = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();

  public RowGroupBudget(int size) {
    if (size < 1) {
      throw new IllegalArgumentException("Cannot make a row group budget: its size must be >= 1, got " + size);
    }
    this.size = size;
    this.permits = new Semaphore(size);
  }

  /** The most row groups held at once. */
  public int size() {
    return size;
  }

  /** The most row groups that were held at once so far (for tests and metrics). */
  public int peakHeld() {
    return peak.get();
  }

  /** Row groups held now (0 once every write finished). */
  public int held() {
    return held.get();
  }

  void acquire() throws InterruptedException {
    permits.acquire();
    taken();
  }

  boolean tryAcquire() {
    if (!permits.tryAcquire()) {
      return false;
    }
    taken();
    return true;
  }

  void release() {
    held.decrementAndGet();
    permits.release();
  }

  private void taken() {
    peak.accumulateAndGet(held.incrementAndGet(), Math::max);
  }
}
