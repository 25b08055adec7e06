package io.cairn.engine.sql;

import java.time.Duration;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * The time and cancellation budget of one statement, as PostgreSQL's {@code statement_timeout}
 * and cancel request: every piece of work a statement starts (parsing, waiting for a view to
 * hydrate, reading an arrangement, filtering, sorting) calls {@link #check()} at short intervals
 * and stops with a {@link StatementCanceledException} once the deadline has passed or the client
 * cancelled (a pgwire CancelRequest, a closed HTTP connection).
 *
 * <p>Contract: {@link #check()} is cheap (a volatile read and, every call, one {@code nanoTime});
 * callers call it at least every few thousand rows or characters, so a cancelled statement frees
 * its thread within milliseconds. DDL is checked before it starts changing the catalog, never in
 * the middle of an append: a CREATE or DROP that has begun completes (its outcome is decided by the
 * catalog's conditional write, and abandoning it would leave the caller not knowing).
 *
 * <p>Thread-safe: {@link #cancel} may be called from any thread.
 */
public final class StatementBudget {
  /** The default statement timeout ({@code sql.statement-timeout}). */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  private final long deadlineNanos;
  private final Duration timeout;
  private final BooleanSupplier externallyCancelled;
  private volatile String cancelReason;
  private final java.util.List<Runnable> onEnd = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** Runs the hooks of budgets whose deadline passes while a hook is registered. */
  private static final java.util.concurrent.ScheduledExecutorService DEADLINES =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "cairn-statement-deadlines");
        t.setDaemon(true);
        return t;
      });

  private StatementBudget(Duration timeout, BooleanSupplier externallyCancelled) {
    this.timeout = timeout;
    this.deadlineNanos = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    this.externallyCancelled = Objects.requireNonNull(externallyCancelled, "externallyCancelled");
  }

  /**
   * A budget that ends {@code timeout} from now (null or zero: no time limit, as {@code
   * statement_timeout = 0}) or when {@code cancelled} says so.
   */
  public static StatementBudget of(Duration timeout, BooleanSupplier cancelled) {
    if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
      timeout = null;
    }
    return new StatementBudget(timeout, cancelled);
  }

  /** A budget of {@code timeout} that only {@link #cancel} ends early. */
  public static StatementBudget of(Duration timeout) {
    return of(timeout, () -> false);
  }

  /** No limit (catalog replay, internal statements). */
  public static StatementBudget unlimited() {
    return new StatementBudget(null, () -> false);
  }

  /** Ends the budget: the next {@link #check()} throws, naming {@code reason}. Idempotent: the first reason stays. */
  public void cancel(String reason) {
    if (cancelReason == null) {
      cancelReason = Objects.requireNonNull(reason, "reason");
    }
    for (Runnable r : onEnd) {
      r.run();
    }
  }

  /**
   * Runs {@code hook} as soon as the budget ends — at a {@link #cancel}, or at the deadline (on a
   * timer thread) — until the returned handle is closed; at once if it has ended already. For work
   * that cannot call {@link #check()} itself (a parser that has a flag to stop it). A cancel that
   * arrives only through the {@code cancelled} supplier of {@link #of(Duration, BooleanSupplier)}
   * runs no hook: whoever sees it calls {@link #cancel}.
   */
  public Hook onEnd(Runnable hook) {
    Objects.requireNonNull(hook, "hook");
    onEnd.add(hook);
    java.util.concurrent.ScheduledFuture<?> timer = deadlineNanos == Long.MAX_VALUE ? null
        : DEADLINES.schedule(() -> cancel(StatementCanceledException.TIMEOUT), Math.max(0, deadlineNanos - System.nanoTime()),
            java.util.concurrent.TimeUnit.NANOSECONDS);
    if (ended()) {
      hook.run();
    }
    return () -> {
      onEnd.remove(hook);
      if (timer != null) {
        timer.cancel(false);
      }
    };
  }

  /** Whether the budget has ended (cancelled or out of time). */
  public boolean ended() {
    return cancelReason != null || externallyCancelled.getAsBoolean() || System.nanoTime() - deadlineNanos > 0;
  }

  /** Nanoseconds left before the deadline (Long.MAX_VALUE when unlimited; 0 when past). */
  public long remainingNanos() {
    if (deadlineNanos == Long.MAX_VALUE) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, deadlineNanos - System.nanoTime());
  }

  /** A hook registered with {@link #onEnd}; closing it unregisters it. */
  public interface Hook extends AutoCloseable {
    @Override
    void close();
  }

  /** The statement timeout this budget was given (null: none). */
  public Duration timeout() {
    return timeout;
  }

  /**
   * Returns normally while the budget lasts.
   *
   * @throws StatementCanceledException when the client cancelled or the timeout passed
   */
  public void check() {
    String reason = cancelReason;
    if (reason == null && externallyCancelled.getAsBoolean()) {
      cancel(StatementCanceledException.USER_REQUEST);
      reason = cancelReason;
    }
    if (reason == null && deadlineNanos != Long.MAX_VALUE && System.nanoTime() - deadlineNanos > 0) {
      cancel(StatementCanceledException.TIMEOUT);
      reason = cancelReason;
    }
    if (reason != null) {
      throw new StatementCanceledException(reason, timeout);
    }
  }

  /**
   * Like {@link #check()}, with what the statement was waiting for added to the message (e.g. a
   * view still hydrating and how far it has come).
   */
  public void check(java.util.function.Supplier<String> waitingFor) {
    try {
      check();
    } catch (StatementCanceledException e) {
      throw new StatementCanceledException(e.reason(), timeout, waitingFor.get());
    }
  }
}
