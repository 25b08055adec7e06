package io.cairn.engine.row;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An INTERVAL value, as PostgreSQL keeps one: months, days and microseconds, each with its own
 * sign ({@code 1 mon -2 days +03:00:00} is a valid interval). Months and days are calendar units:
 * added to a TIMESTAMP, months move the date (the day clamped to the month's end), days move it by
 * whole days, microseconds by time.
 *
 * <p>Equality and order are PostgreSQL's: intervals compare by their span with a month of 30 days
 * and a day of 24 hours, so {@code '1 mon' = '30 days'} and the two are one group key and one
 * join key; {@link #hashCode} agrees. A value keeps the fields it was written with, so the one
 * shown for such a group is the first seen.
 *
 * <p>Text: {@link #toString} is PostgreSQL's output style ({@code 1 year 2 mons 3 days
 * 04:05:06.5}); {@link #parse} reads that style, the unit words PostgreSQL accepts ({@code 90
 * minutes}, {@code 1.5 days}, {@code 2 weeks ago}) and ISO 8601 durations ({@code
 * P1Y2M3DT4H5M6.5S}, as Debezium sends PostgreSQL intervals). {@code parse(toString())} gives back
 * the same three fields.
 */
public record Interval(int months, int days, long micros) implements Comparable<Interval> {
  public static final Interval ZERO = new Interval(0, 0, 0);
  static final long MICROS_PER_DAY = 86_400_000_000L;
  static final long MICROS_PER_HOUR = 3_600_000_000L;
  static final long MICROS_PER_MINUTE = 60_000_000L;
  static final long MICROS_PER_SECOND = 1_000_000L;
  /** Input longer than this is refused before any parsing. */
  static final int MAX_TEXT = 256;

  /** Whole days of the span ({@code months * 30 + days} plus the microseconds' whole days, floored). */
  private long spanDays() {
    return (long) months * 30 + days + Math.floorDiv(micros, MICROS_PER_DAY);
  }

  private long spanRest() {
    return Math.floorMod(micros, MICROS_PER_DAY);
  }

  @Override
  public int compareTo(Interval o) {
    int c = Long.compare(spanDays(), o.spanDays());
    return c != 0 ? c : Long.compare(spanRest(), o.spanRest());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Interval i && compareTo(i) == 0;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(spanDays() * 0x9E3779B97F4A7C15L + spanRest());
  }

  /** {@code this + o}, field by field. */
  public Interval plus(Interval o) {
    return new Interval(Math.addExact(months, o.months), Math.addExact(days, o.days), Math.addExact(micros, o.micros));
  }

  /** {@code this - o}, field by field. */
  public Interval minus(Interval o) {
    return plus(o.negate());
  }

  public Interval negate() {
    return new Interval(Math.negateExact(months), Math.negateExact(days), Math.negateExact(micros));
  }

  /** {@code this * n}, field by field. */
  public Interval times(long n) {
    return new Interval(Math.toIntExact(Math.multiplyExact((long) months, n)), Math.toIntExact(Math.multiplyExact((long) days, n)),
        Math.multiplyExact(micros, n));
  }

  /**
   * {@code this / n} as PostgreSQL divides an interval ({@code interval_div}): each field divided,
   * a month's fraction carried into days (30 a month) and a day's into time, rounded to the
   * microsecond.
   */
  public Interval dividedBy(long n) {
    if (n == 0) {
      throw new ArithmeticException("division by zero");
    }
    double f = n;
    int m = (int) (months / f);
    int d = (int) (days / f);
    double monthRemainderDays = Math.rint((months / f - m) * 30 * 1e6) / 1e6;
    double secRemainder = Math.rint((days / f - d + monthRemainderDays - (int) monthRemainderDays) * 86_400 * 1e6) / 1e6;
    if (Math.abs(secRemainder) >= 86_400) {
      d += (int) (secRemainder / 86_400);
      secRemainder -= (int) (secRemainder / 86_400) * 86_400.0;
    }
    d += (int) monthRemainderDays;
    return new Interval(m, d, Math.round(Math.rint(micros / f + secRemainder * 1e6)));
  }

  /**
   * The interval between two TIMESTAMPs ({@code a - b}, microseconds since the epoch), as
   * PostgreSQL gives it: whole days and the time left, no months.
   */
  public static Interval between(long a, long b) {
    long d = Math.subtractExact(a, b);
    return new Interval(0, Math.toIntExact(d / MICROS_PER_DAY), d % MICROS_PER_DAY);
  }

  /** TIMESTAMP {@code t} (microseconds since the epoch, UTC) moved by this interval: months, then days, then time. */
  public long addTo(long t) {
    return shift(t, months, Math.addExact(Math.multiplyExact((long) days, MICROS_PER_DAY), micros));
  }

  /**
   * TIMESTAMP {@code t} moved by {@code months} calendar months (the day of month clamped to the
   * month's end, as PostgreSQL does), then by {@code micros} microseconds.
   */
  public static long shift(long t, long months, long micros) {
    if (months != 0) {
      java.time.LocalDateTime d = java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(t, MICROS_PER_SECOND),
          (int) Math.floorMod(t, MICROS_PER_SECOND) * 1000, java.time.ZoneOffset.UTC).plusMonths(months);
      t = d.toEpochSecond(java.time.ZoneOffset.UTC) * MICROS_PER_SECOND + d.getNano() / 1000;
    }
    return Math.addExact(t, micros);
  }

  /**
   * {@code EXTRACT(field FROM interval)} as PostgreSQL: year and month from the months, day from
   * the days, hour, minute and second from the time (hours not wrapped at 24); epoch is the whole
   * span in seconds with a year of 365.25 days and a month of 30.
   */
  public Object extract(String field) {
    return switch (field) {
      case "year" -> (long) (months / 12);
      case "quarter" -> (long) ((months % 12) / 3 + 1);
      case "month" -> (long) (months % 12);
      case "day" -> (long) days;
      case "hour" -> micros / MICROS_PER_HOUR;
      case "minute" -> (micros % MICROS_PER_HOUR) / MICROS_PER_MINUTE;
      case "second" -> (micros % MICROS_PER_MINUTE) / 1e6;
      case "epoch" -> (31_557_600.0 * (months / 12) + 2_592_000.0 * (months % 12) + 86_400.0 * days) + micros / 1e6;
      default -> throw new IllegalArgumentException("Cannot EXTRACT " + field + " from an INTERVAL (year, quarter, month, day, hour,"
          + " minute, second and epoch can be)");
    };
  }

  /**
   * The three fields as text, exactly: {@code 14 months 3 days 14706500000 microseconds}. A
   * snapshot stores an INTERVAL so ({@link #parse} reads it back, and DuckDB's {@code CAST(x AS
   * INTERVAL)} too; Parquet's own INTERVAL type has milliseconds and no sign).
   */
  public String storageText() {
    return months + " months " + days + " days " + micros + " microseconds";
  }

  /** PostgreSQL's output ({@code IntervalStyle = postgres}): {@code 1 year 2 mons -3 days +04:05:06.5}, {@code 00:00:00} for nothing. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    boolean[] state = {true, false}; // nothing written yet; the last part written was negative
    part(sb, months / 12, "year", state);
    part(sb, months % 12, "mon", state);
    part(sb, days, "day", state);
    if (state[0] || micros != 0) {
      boolean minus = micros < 0;
      long t = Math.abs(micros);
      if (!state[0]) {
        sb.append(' ');
      }
      sb.append(minus ? "-" : state[1] ? "+" : "");
      long h = t / MICROS_PER_HOUR;
      long m = (t % MICROS_PER_HOUR) / MICROS_PER_MINUTE;
      long s = (t % MICROS_PER_MINUTE) / MICROS_PER_SECOND;
      long f = t % MICROS_PER_SECOND;
      sb.append(h < 10 ? "0" : "").append(h).append(':').append(m < 10 ? "0" : "").append(m).append(':').append(s < 10 ? "0" : "").append(s);
      if (f != 0) {
        String frac = String.format(Locale.ROOT, "%06d", f);
        int end = frac.length();
        while (frac.charAt(end - 1) == '0') {
          end--;
        }
        sb.append('.').append(frac, 0, end);
      }
    }
    return sb.toString();
  }

  private static void part(StringBuilder sb, int value, String unit, boolean[] state) {
    if (value == 0) {
      return;
    }
    if (!state[0]) {
      sb.append(' ');
    }
    if (state[1] && value > 0) {
      sb.append('+');
    }
    sb.append(value).append(' ').append(unit).append(value != 1 ? "s" : "");
    state[0] = false;
    state[1] = value < 0;
  }

  private static final Pattern ISO = Pattern.compile(
      "([-+])?P(?:([-+]?\\d+(?:\\.\\d+)?)Y)?(?:([-+]?\\d+(?:\\.\\d+)?)M)?(?:([-+]?\\d+(?:\\.\\d+)?)W)?(?:([-+]?\\d+(?:\\.\\d+)?)D)?"
          + "(?:T(?:([-+]?\\d+(?:\\.\\d+)?)H)?(?:([-+]?\\d+(?:\\.\\d+)?)M)?(?:([-+]?\\d+(?:\\.\\d*)?|[-+]?\\.\\d+)S)?)?",
      Pattern.CASE_INSENSITIVE);
  private static final Pattern TIME = Pattern.compile("([-+])?(\\d+):(\\d{1,2})(?::(\\d{1,2})(?:\\.(\\d{1,6})\\d*)?)?");
  private static final Pattern NUMBER = Pattern.compile("[-+]?(\\d+(\\.\\d*)?|\\.\\d+)");

  /**
   * The interval {@code text} writes, in PostgreSQL's style or ISO 8601 (see the class comment).
   *
   * @throws IllegalArgumentException naming what is wrong
   */
  public static Interval parse(String text) {
    if (text.length() > MAX_TEXT) {
      throw new IllegalArgumentException("invalid INTERVAL: longer than " + MAX_TEXT + " characters");
    }
    String s = text.strip();
    if (s.isEmpty()) {
      throw new IllegalArgumentException("invalid INTERVAL: empty");
    }
    try {
      Matcher iso = ISO.matcher(s);
      if (iso.matches()) {
        boolean anyPart = false;
        for (int g = 2; g <= 8; g++) {
          anyPart |= iso.group(g) != null;
        }
        if (!anyPart) {
          throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "': an ISO 8601 duration needs a part (P1D, PT5M)");
        }
        Acc a = new Acc();
        a.add(iso.group(2), 12 * 30 * MICROS_PER_DAY, "year");
        a.add(iso.group(3), 30 * MICROS_PER_DAY, "month");
        a.add(iso.group(4), 7 * MICROS_PER_DAY, "week");
        a.add(iso.group(5), MICROS_PER_DAY, "day");
        a.add(iso.group(6), MICROS_PER_HOUR, "hour");
        a.add(iso.group(7), MICROS_PER_MINUTE, "minute");
        a.add(iso.group(8), MICROS_PER_SECOND, "second");
        Interval v = a.build();
        return "-".equals(iso.group(1)) ? v.negate() : v;
      }
      return parseWords(s, text);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "': out of range");
    }
  }

  private static Interval parseWords(String s, String text) {
    String[] tokens = s.toLowerCase(Locale.ROOT).replace("@", " ").trim().split("\\s+");
    Acc a = new Acc();
    boolean ago = false;
    boolean any = false;
    for (int i = 0; i < tokens.length; i++) {
      String t = tokens[i];
      if (t.isEmpty()) {
        continue;
      }
      if (t.equals("ago") && i == tokens.length - 1 && any) {
        ago = true;
        continue;
      }
      Matcher time = TIME.matcher(t);
      if (time.matches()) {
        long us = Long.parseLong(time.group(2)) * MICROS_PER_HOUR + Long.parseLong(time.group(3)) * MICROS_PER_MINUTE
            + (time.group(4) == null ? 0 : Long.parseLong(time.group(4)) * MICROS_PER_SECOND)
            + (time.group(5) == null ? 0 : Long.parseLong((time.group(5) + "00000").substring(0, 6)));
        a.micros = Math.addExact(a.micros, "-".equals(time.group(1)) ? -us : us);
        any = true;
        continue;
      }
      String number = t;
      String unit;
      int split = 0;
      while (split < t.length() && (Character.isDigit(t.charAt(split)) || "+-.".indexOf(t.charAt(split)) >= 0)) {
        split++;
      }
      if (split < t.length() && split > 0) { // 3days, 10h
        number = t.substring(0, split);
        unit = t.substring(split);
      } else if (i + 1 < tokens.length) {
        unit = tokens[++i];
      } else if (NUMBER.matcher(t).matches()) {
        unit = "second"; // a bare number is seconds, as in PostgreSQL
      } else {
        throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "': '" + t + "' is not a number with a unit");
      }
      if (!NUMBER.matcher(number).matches()) {
        throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "': '" + number + "' is not a number");
      }
      long unitMicros = switch (unit) {
        case "y", "yr", "yrs", "year", "years" -> 12 * 30 * MICROS_PER_DAY;
        case "mon", "mons", "month", "months" -> 30 * MICROS_PER_DAY;
        case "w", "week", "weeks" -> 7 * MICROS_PER_DAY;
        case "d", "day", "days" -> MICROS_PER_DAY;
        case "h", "hr", "hrs", "hour", "hours" -> MICROS_PER_HOUR;
        case "m", "min", "mins", "minute", "minutes" -> MICROS_PER_MINUTE;
        case "s", "sec", "secs", "second", "seconds" -> MICROS_PER_SECOND;
        case "ms", "msec", "msecs", "millisecond", "milliseconds" -> 1000;
        case "us", "usec", "usecs", "microsecond", "microseconds" -> 1;
        default -> throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "': unknown unit '" + unit
            + "' (years, months, weeks, days, hours, minutes, seconds, milliseconds, microseconds)");
      };
      a.add(number, unitMicros, unit);
      any = true;
    }
    if (!any) {
      throw new IllegalArgumentException("invalid INTERVAL '" + clip(text) + "'");
    }
    Interval v = a.build();
    return ago ? v.negate() : v;
  }

  /**
   * Sums parts into months, days and microseconds as PostgreSQL does: years and months into
   * months, weeks and days into days, the rest into time; a fraction of a year becomes months, of
   * a month days (30 a month), of a week or day time (24 hours a day).
   */
  private static final class Acc {
    long months;
    long days;
    long micros;

    void add(String number, long unitMicros, String unit) {
      if (number == null) {
        return;
      }
      java.math.BigDecimal n = new java.math.BigDecimal(number.startsWith("+") ? number.substring(1) : number);
      if (unitMicros == 12 * 30 * MICROS_PER_DAY) { // years: whole months, a fraction rounded to months
        months = Math.addExact(months, n.multiply(java.math.BigDecimal.valueOf(12)).setScale(0, java.math.RoundingMode.HALF_UP).longValueExact());
      } else if (unitMicros == 30 * MICROS_PER_DAY) { // months: whole months, the fraction in days of 30, then time
        java.math.BigDecimal whole = new java.math.BigDecimal(n.toBigInteger());
        months = Math.addExact(months, whole.longValueExact());
        fractionOfDays(n.subtract(whole).multiply(java.math.BigDecimal.valueOf(30)));
      } else if (unitMicros >= MICROS_PER_DAY && unitMicros % MICROS_PER_DAY == 0) { // weeks, days
        fractionOfDays(n.multiply(java.math.BigDecimal.valueOf(unitMicros / MICROS_PER_DAY)));
      } else {
        micros = Math.addExact(micros, n.multiply(java.math.BigDecimal.valueOf(unitMicros)).setScale(0, java.math.RoundingMode.HALF_EVEN)
            .longValueExact());
      }
    }

    private void fractionOfDays(java.math.BigDecimal d) {
      java.math.BigDecimal whole = new java.math.BigDecimal(d.toBigInteger());
      days = Math.addExact(days, whole.longValueExact());
      micros = Math.addExact(micros, d.subtract(whole).multiply(java.math.BigDecimal.valueOf(MICROS_PER_DAY))
          .setScale(0, java.math.RoundingMode.HALF_EVEN).longValueExact());
    }

    Interval build() {
      return new Interval(Math.toIntExact(months), Math.toIntExact(days), micros);
    }
  }

  private static String clip(String s) {
    return s.length() <= 60 ? s : s.substring(0, 60) + "…";
  }
}
