package io.cairn.snapshotter;

import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Date;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TimeZone;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.quartz.CronExpression;
import org.quartz.CronScheduleBuilder;
import org.quartz.DisallowConcurrentExecution;
import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDataMap;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobKey;
import org.quartz.Scheduler;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs snapshots on a cron schedule (Quartz syntax, default daily at 00:00) in a configurable
 * time zone, plus "snapshot now".
 *
 * <p>Policy, kept apart from Quartz so it can be driven by an injected clock ({@link #fireDue()}):
 *
 * <ul>
 *   <li>Slots. Each cron fire time is a slot. A scheduled run takes the newest slot at or before
 *       now, once: a slot already taken (by a run of this schedule, or by a snapshot whose time is
 *       at or after the slot) is skipped. So however often the trigger fires, one snapshot per slot.
 *   <li>Misfire. At {@link #start()}, if the newest slot at or before now is after the last
 *       snapshot's time (the node was down at the scheduled time), one snapshot runs at once — one,
 *       however many slots were missed. While running, Quartz's own misfire instruction is
 *       fire-once-and-proceed.
 *   <li>No two at once. Runs are serialized by a lock and the Quartz job disallows concurrent
 *       execution; a manual {@link #snapshotNow()} waits for a running one and then runs.
 * </ul>
 */
public final class SnapshotSchedule implements AutoCloseable {
  /** The configuration key of the schedule's cron expression (Quartz syntax: seconds first). */
  public static final String CRON_KEY = "snapshots.cron";
  /** Daily at midnight. */
  public static final String DEFAULT_CRON = "0 0 0 * * ?";

  /** Checks {@code cron} as the schedule would; throws {@link IllegalArgumentException} naming {@value #CRON_KEY} and Quartz's reason. */
  public static void validate(String cron) {
    try {
      new CronExpression(cron);
    } catch (ParseException e) {
      throw new IllegalArgumentException(CRON_KEY + " '" + cron + "' is not a Quartz cron expression (seconds minutes hours "
          + "day-of-month month day-of-week [year], e.g. '0 0 0 * * ?'): " + e.getMessage(), e);
    }
  }

  /**
   * Checks that {@code cron} (valid, see {@link #validate}) fires again after now in {@code zone}:
   * one whose slots are all in the past (a year gone by) would never take a snapshot, and Quartz
   * refuses to schedule it. Throws {@link IllegalArgumentException} naming {@value #CRON_KEY}.
   */
  public static void validateFires(String cron, ZoneId zone, Clock clock) {
    validate(cron);
    CronExpression c;
    try {
      c = new CronExpression(cron);
    } catch (ParseException e) {
      throw new IllegalArgumentException(CRON_KEY + " '" + cron + "': " + e.getMessage(), e);
    }
    c.setTimeZone(TimeZone.getTimeZone(zone));
    if (c.getNextValidTimeAfter(Date.from(clock.instant())) == null) {
      throw new IllegalArgumentException(CRON_KEY + " '" + cron + "' never fires after " + clock.instant() + " in " + zone
          + " (its slots are all in the past): no snapshot would ever be taken; e.g. '0 0 0 * * ?' for daily at midnight");
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotSchedule.class);
  private static final ConcurrentHashMap<String, SnapshotSchedule> INSTANCES = new ConcurrentHashMap<>();

  /** The snapshot to run; {@code reason} is "scheduled", "missed" or "manual". Runs synchronously. */
  @FunctionalInterface
  public interface Action {
    void snapshot(String reason) throws Exception;
  }

  private final CronExpression cron;
  private final String cronText;
  private final ZoneId zone;
  private final Clock clock;
  private final Action action;
  private final ReentrantLock lock = new ReentrantLock();
  private final String id = UUID.randomUUID().toString();
  private final AtomicLong runs = new AtomicLong();
  private volatile Instant lastSnapshot; // time of the last snapshot (run here or found at start)
  private volatile Instant lastSlotTaken;
  private Scheduler scheduler;
  /** Set by {@link #stop}: no snapshot starts after it (a missed one not begun yet, a trigger, a manual one). */
  private volatile boolean stopped;

  /**
   * @param lastSnapshot when the newest existing snapshot was taken (e.g. the newest manifest's
   *     created-at), or null if there is none
   */
  public SnapshotSchedule(String cron, ZoneId zone, Clock clock, Instant lastSnapshot, Action action) {
    Objects.requireNonNull(cron, "cron");
    this.zone = Objects.requireNonNull(zone, "zone");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.action = Objects.requireNonNull(action, "action");
    try {
      this.cron = new CronExpression(cron);
    } catch (ParseException e) {
      throw new IllegalArgumentException("Cannot schedule snapshots: " + CRON_KEY + " '" + cron + "' is invalid: " + e.getMessage(), e);
    }
    this.cron.setTimeZone(TimeZone.getTimeZone(zone));
    this.cronText = cron;
    this.lastSnapshot = lastSnapshot;
  }

  /** The newest slot at or before {@code now}, if any within ~400 days. */
  public Optional<Instant> slotAtOrBefore(Instant now) {
    for (Duration window : new Duration[] {Duration.ofMinutes(2), Duration.ofHours(2), Duration.ofDays(2), Duration.ofDays(9), Duration.ofDays(400)}) {
      Date t = cron.getNextValidTimeAfter(Date.from(now.minus(window)));
      if (t == null || t.toInstant().isAfter(now)) {
        continue;
      }
      Instant slot = t.toInstant();
      while (true) {
        Date next = cron.getNextValidTimeAfter(Date.from(slot));
        if (next == null || next.toInstant().isAfter(now)) {
          return Optional.of(slot);
        }
        slot = next.toInstant();
      }
    }
    return Optional.empty();
  }

  /** The next slot after {@code now}. */
  public Optional<Instant> nextSlotAfter(Instant now) {
    return Optional.ofNullable(cron.getNextValidTimeAfter(Date.from(now))).map(Date::toInstant);
  }

  /**
   * Runs a scheduled snapshot if the newest slot at or before now is not taken yet. This is what
   * the Quartz trigger calls; tests call it with an injected clock. Returns whether one ran.
   */
  public boolean fireDue() {
    lock.lock();
    try {
      Instant now = clock.instant();
      Optional<Instant> slot = slotAtOrBefore(now);
      if (stopped || slot.isEmpty() || taken(slot.get())) {
        return false;
      }
      run("scheduled", slot.get());
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** At start-up: one snapshot if a slot passed since the last snapshot (node down at the time). */
  public boolean fireMissed() {
    lock.lock();
    try {
      Optional<Instant> slot = slotAtOrBefore(clock.instant());
      if (stopped || slot.isEmpty() || taken(slot.get())) {
        return false;
      }
      LOG.info("A snapshot was due at {} ({} in {}) and none was taken since {}: taking one now", slot.get(), cronText, zone,
          lastSnapshot == null ? "ever" : lastSnapshot);
      run("missed", slot.get());
      return true;
    } finally {
      lock.unlock();
    }
  }

  private boolean taken(Instant slot) {
    return (lastSlotTaken != null && !lastSlotTaken.isBefore(slot)) || (lastSnapshot != null && !lastSnapshot.isBefore(slot));
  }

  private void run(String reason, Instant slot) {
    Instant started = clock.instant();
    try {
      action.snapshot(reason);
      runs.incrementAndGet();
      lastSnapshot = started;
      if (slot != null) {
        lastSlotTaken = slot;
      }
    } catch (Exception e) {
      // the slot stays open: the next trigger (or a restart) tries again
      LOG.warn("{} snapshot failed: {}", reason, e.getMessage(), e);
      if (e instanceof RuntimeException re && reason.equals("manual")) {
        throw re;
      }
      if (reason.equals("manual")) {
        throw new IllegalStateException("Cannot snapshot: " + e.getMessage(), e);
      }
    }
  }

  /** Runs a snapshot now, after a running one finishes (the caller's thread). */
  public void snapshotNowSync() {
    lock.lock();
    try {
      Instant now = clock.instant();
      run("manual", null);
      // a manual snapshot at or after a slot also serves that slot
      slotAtOrBefore(now).ifPresent(s -> {
        if (lastSnapshot != null && !lastSnapshot.isBefore(s)) {
          lastSlotTaken = s;
        }
      });
    } finally {
      lock.unlock();
    }
  }

  /** Runs a snapshot now in the background. */
  public CompletableFuture<Void> snapshotNow() {
    return CompletableFuture.runAsync(this::snapshotNowSync);
  }

  /** Snapshots run by this schedule so far (successful ones). */
  public long runs() {
    return runs.get();
  }

  public Optional<Instant> lastSnapshot() {
    return Optional.ofNullable(lastSnapshot);
  }

  /**
   * Starts the Quartz scheduler, then takes a missed snapshot if one is due, in the background.
   * The future tells whether a missed snapshot ran.
   */
  public synchronized CompletableFuture<Boolean> start() {
    if (scheduler != null) {
      return CompletableFuture.completedFuture(false);
    }
    try {
      Properties p = new Properties();
      p.setProperty("org.quartz.scheduler.instanceName", "cairn-snapshots-" + id);
      p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
      p.setProperty("org.quartz.threadPool.threadCount", "1");
      p.setProperty("org.quartz.threadPool.makeThreadsDaemons", "true");
      p.setProperty("org.quartz.jobStore.class", "org.quartz.simpl.RAMJobStore");
      p.setProperty("org.quartz.jobStore.misfireThreshold", "60000");
      Scheduler s = new StdSchedulerFactory(p).getScheduler();
      INSTANCES.put(id, this);
      JobDataMap data = new JobDataMap();
      data.put("schedule", id);
      JobDetail job = JobBuilder.newJob(FireJob.class).withIdentity(JobKey.jobKey("snapshot", id)).usingJobData(data).storeDurably().build();
      Trigger trigger = TriggerBuilder.newTrigger()
          .withIdentity("snapshot-cron", id)
          .withSchedule(CronScheduleBuilder.cronSchedule(cronText).inTimeZone(TimeZone.getTimeZone(zone))
              .withMisfireHandlingInstructionFireAndProceed())
          .forJob(job)
          .build();
      s.scheduleJob(job, trigger);
      s.start();
      scheduler = s;
      LOG.info("Snapshots scheduled '{}' in {}; next at {}", cronText, zone, nextSlotAfter(clock.instant()).orElse(null));
    } catch (SchedulerException e) {
      INSTANCES.remove(id);
      throw new IllegalStateException("Cannot start the snapshot schedule: " + e.getMessage(), e);
    }
    // on a thread of its own, not the common pool: stop() waits for it, and nothing else shares it
    return CompletableFuture.supplyAsync(this::fireMissed, r -> {
      Thread t = new Thread(r, "cairn-missed-snapshot");
      t.setDaemon(true);
      t.start();
    });
  }

  /** Stops the scheduler, waiting for a running snapshot. Idempotent. */
  public synchronized void stop() {
    stopped = true;
    if (scheduler == null) {
      return;
    }
    try {
      scheduler.shutdown(true);
    } catch (SchedulerException e) {
      LOG.warn("Cannot stop the snapshot schedule cleanly: {}", e.getMessage());
    } finally {
      scheduler = null;
      INSTANCES.remove(id);
    }
    // a missed snapshot taken at start (or a manual one) runs outside Quartz: wait for it too, so
    // that nothing writes to the store once the schedule is stopped
    lock.lock();
    lock.unlock();
  }

  @Override
  public void close() {
    stop();
  }

  /** The Quartz job: fires the schedule named in its data. */
  @DisallowConcurrentExecution
  public static final class FireJob implements Job {
    @Override
    public void execute(JobExecutionContext context) {
      SnapshotSchedule s = INSTANCES.get(context.getMergedJobDataMap().getString("schedule"));
      if (s != null) {
        s.fireDue();
      }
    }
  }
}
