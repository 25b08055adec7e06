package io.cairn.engine.runtime;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tick driver: a thread that runs ticks one after the other until stopped.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>After a tick in which no source could be read it sleeps for the tick duration (at least
 *       250 ms); {@link #wake()} (a new source) ends the sleep early.
 *   <li>After a tick that threw it backs off exponentially (100 ms to 5 s), so a broken engine
 *       does not spin; the next good tick resets the backoff.
 *   <li>{@link #stop()} lets the current tick finish and waits for the thread (at most 30 s).
 * </ul>
 */
final class TickDriver {
  private static final Logger LOG = LoggerFactory.getLogger(TickDriver.class);
  private static final long IDLE_PAUSE_NANOS = 250_000_000L;

  private final Runnable tick;
  private final BooleanSupplier lastTickIdle;
  private final long idlePauseNanos;
  private volatile Thread thread;
  private volatile boolean running;

  /** {@code tick} runs one tick; {@code lastTickIdle} says whether it could read no source. */
  TickDriver(Runnable tick, BooleanSupplier lastTickIdle, TickPolicy policy) {
    this.tick = tick;
    this.lastTickIdle = lastTickIdle;
    this.idlePauseNanos = Math.max(IDLE_PAUSE_NANOS, policy.maxDuration().toNanos());
  }

  synchronized void start() {
    if (running) {
      return;
    }
    running = true;
    Thread t = new Thread(this::loop, "cairn-driver");
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  private void loop() {
    int failures = 0;
    while (running) {
      long pause;
      try {
        tick.run();
        failures = 0;
        pause = lastTickIdle.getAsBoolean() ? idlePauseNanos : 0;
      } catch (RuntimeException e) {
        failures++;
        pause = Math.min(5_000_000_000L, 100_000_000L << Math.min(6, failures - 1));
        LOG.error("Tick failed ({} in a row); next try in {} ms", failures, pause / 1_000_000, e);
      }
      if (pause > 0 && running) {
        LockSupport.parkNanos(this, pause);
      }
    }
  }

  /** Whether the driver thread ticks (started and not stopped). */
  boolean running() {
    return running;
  }

  /** Ends an idle pause now (e.g. a source was created). */
  void wake() {
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** Lets the current tick be the last one (any thread; {@link #stop()} then waits for it). */
  void stopping() {
    running = false;
  }

  synchronized void stop() {
    running = false;
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      thread = null;
    }
  }
}
