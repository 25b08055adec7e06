package io.cairn.snapshotter;

import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The snapshotter's settings, with dotted kebab-case keys and defaults. {@link #fromProperties}
 * validates eagerly and names the offending key.
 *
 * <table>
 *   <tr><th>key</th><th>default</th></tr>
 *   <tr><td>{@value #PREFIX}</td><td>"" (the store's root)</td></tr>
 *   <tr><td>{@value #UPLOAD_PARALLELISM}</td><td>4 concurrent batch file uploads (bounds memory too)</td></tr>
 *   <tr><td>{@value #LOAD_PARALLELISM}</td><td>4 concurrent batch file downloads</td></tr>
 *   <tr><td>{@value #SPILL_THRESHOLD}</td><td>64 MiB: batches larger in memory are encoded to a temporary file</td></tr>
 *   <tr><td>{@value #SCHEDULE_ENABLED}</td><td>true</td></tr>
 *   <tr><td>{@value #SCHEDULE_CRON}</td><td>"0 0 0 * * ?" (Quartz syntax: daily at 00:00)</td></tr>
 *   <tr><td>{@value #SCHEDULE_ZONE}</td><td>UTC</td></tr>
 *   <tr><td>{@value #KEEP_LAST}</td><td>7</td></tr>
 *   <tr><td>{@value #DAILY_DAYS}</td><td>30</td></tr>
 *   <tr><td>{@value #GC_GRACE}</td><td>6h (ISO-8601 like PT6H, or 90s / 30m / 6h / 2d)</td></tr>
 * </table>
 */
public record SnapshotterConfig(
    String prefix,
    int uploadParallelism,
    int loadParallelism,
    long spillThresholdBytes,
    boolean scheduleEnabled,
    String cron,
    ZoneId zone,
    RetentionPolicy retention) {
  public static final String PREFIX = "snapshot.prefix";
  public static final String UPLOAD_PARALLELISM = "snapshot.upload-parallelism";
  public static final String LOAD_PARALLELISM = "snapshot.load-parallelism";
  public static final String SPILL_THRESHOLD = "snapshot.spill-threshold-bytes";
  public static final String SCHEDULE_ENABLED = "snapshot.schedule.enabled";
  public static final String SCHEDULE_CRON = "snapshot.schedule.cron";
  public static final String SCHEDULE_ZONE = "snapshot.schedule.zone";
  public static final String KEEP_LAST = "snapshot.retention.keep-last";
  public static final String DAILY_DAYS = "snapshot.retention.daily-days";
  public static final String GC_GRACE = "snapshot.gc.grace";

  public static final String DEFAULT_CRON = "0 0 0 * * ?";

  public SnapshotterConfig {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(cron, "cron");
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(retention, "retention");
    if (uploadParallelism < 1 || uploadParallelism > 256) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + UPLOAD_PARALLELISM + " must be in [1, 256], got " + uploadParallelism);
    }
    if (loadParallelism < 1 || loadParallelism > 256) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + LOAD_PARALLELISM + " must be in [1, 256], got " + loadParallelism);
    }
    if (spillThresholdBytes < 0) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + SPILL_THRESHOLD + " must be >= 0, got " + spillThresholdBytes);
    }
    if (!org.quartz.CronExpression.isValidExpression(cron)) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + SCHEDULE_CRON + " '" + cron + "' is not a valid Quartz cron expression");
    }
  }

  public static SnapshotterConfig defaults() {
    return fromProperties(Map.of());
  }

  /** Reads the {@code snapshot.*} keys of {@code props}; other keys are ignored, unknown {@code snapshot.*} keys rejected. */
  public static SnapshotterConfig fromProperties(Map<String, String> props) {
    Map<String, String> p = new LinkedHashMap<>();
    props.forEach((k, v) -> {
      if (k.startsWith("snapshot.")) {
        p.put(k, v == null ? "" : v.strip());
      }
    });
    for (String k : p.keySet()) {
      if (!java.util.Set.of(PREFIX, UPLOAD_PARALLELISM, LOAD_PARALLELISM, SPILL_THRESHOLD, SCHEDULE_ENABLED, SCHEDULE_CRON,
          SCHEDULE_ZONE, KEEP_LAST, DAILY_DAYS, GC_GRACE).contains(k)) {
        throw new IllegalArgumentException("Cannot configure snapshotter: unknown key '" + k + "'");
      }
    }
    ZoneId zone;
    try {
      zone = ZoneId.of(p.getOrDefault(SCHEDULE_ZONE, "UTC"));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + SCHEDULE_ZONE + " '" + p.get(SCHEDULE_ZONE) + "' is not a time zone");
    }
    String enabled = p.getOrDefault(SCHEDULE_ENABLED, "true").toLowerCase(Locale.ROOT);
    if (!enabled.equals("true") && !enabled.equals("false")) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + SCHEDULE_ENABLED + " must be true or false, got '" + enabled + "'");
    }
    RetentionPolicy retention;
    try {
      retention = new RetentionPolicy(intKey(p, KEEP_LAST, 7), intKey(p, DAILY_DAYS, 30), duration(GC_GRACE, p.getOrDefault(GC_GRACE, "6h")));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + e.getMessage(), e);
    }
    return new SnapshotterConfig(
        p.getOrDefault(PREFIX, ""),
        intKey(p, UPLOAD_PARALLELISM, 4),
        intKey(p, LOAD_PARALLELISM, 4),
        longKey(p, SPILL_THRESHOLD, 64L << 20),
        enabled.equals("true"),
        p.getOrDefault(SCHEDULE_CRON, DEFAULT_CRON),
        zone,
        retention);
  }

  private static int intKey(Map<String, String> p, String key, int def) {
    long v = longKey(p, key, def);
    if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + key + " is out of range: " + v);
    }
    return (int) v;
  }

  private static long longKey(Map<String, String> p, String key, long def) {
    String v = p.get(key);
    if (v == null) {
      return def;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("Cannot configure snapshotter: " + key + " must be an integer, got '" + v + "'");
    }
  }

  /** Parses ISO-8601 (PT6H) or a number with unit s, m, h, d. */
  public static Duration duration(String key, String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    try {
      if (t.startsWith("p")) {
        return Duration.parse(t.toUpperCase(Locale.ROOT));
      }
      if (t.length() >= 2) {
        long n = Long.parseLong(t.substring(0, t.length() - 1));
        switch (t.charAt(t.length() - 1)) {
          case 's': return Duration.ofSeconds(n);
          case 'm': return Duration.ofMinutes(n);
          case 'h': return Duration.ofHours(n);
          case 'd': return Duration.ofDays(n);
          default: break;
        }
      }
    } catch (RuntimeException e) {
      // fall through
    }
    throw new IllegalArgumentException(key + " must be a duration like PT6H, 90s, 30m, 6h or 2d, got '" + text + "'");
  }
}
