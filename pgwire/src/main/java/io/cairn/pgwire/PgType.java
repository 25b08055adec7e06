package io.cairn.pgwire;

import io.cairn.engine.row.Type;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * The PostgreSQL types cairn values are sent as, with their text and binary encodings: BIGINT →
 * int8, DOUBLE → float8, TEXT and the NULL type → text, BOOLEAN → bool, TIMESTAMP (microseconds
 * since the Unix epoch, UTC) → timestamp (without time zone, the session's TimeZone is UTC), DATE
 * (days since 1970-01-01) → date, NUMERIC → numeric, INTERVAL → interval (PostgreSQL's output style;
 * binary: microseconds, days, months).
 */
enum PgType {
  INT8(20, 8, "int8", "bigint"),
  FLOAT8(701, 8, "float8", "double precision"),
  TEXT(25, -1, "text", "text"),
  BOOL(16, 1, "bool", "boolean"),
  TIMESTAMP(1114, 8, "timestamp", "timestamp without time zone"),
  DATE(1082, 4, "date", "date"),
  NUMERIC(1700, -1, "numeric", "numeric"),
  INTERVAL(1186, 16, "interval", "interval");

  /** Microseconds from the Unix epoch to the PostgreSQL epoch (2000-01-01). */
  private static final long PG_EPOCH_MICROS = 946_684_800_000_000L;
  /** Days from the Unix epoch to the PostgreSQL epoch (2000-01-01). */
  private static final long PG_EPOCH_DAYS = 10_957L;

  final int oid;
  final short length;
  /** {@code pg_type.typname}. */
  final String typname;
  /** What {@code format_type(oid, -1)} answers, as psql's {@code \d} shows it. */
  final String sqlName;

  PgType(int oid, int length, String typname, String sqlName) {
    this.oid = oid;
    this.length = (short) length;
    this.typname = typname;
    this.sqlName = sqlName;
  }

  static PgType of(Type t) {
    return switch (t) {
      case BIGINT -> INT8;
      case DOUBLE -> FLOAT8;
      case BOOLEAN -> BOOL;
      case TIMESTAMP -> TIMESTAMP;
      case DATE -> DATE;
      case NUMERIC -> NUMERIC;
      case INTERVAL -> INTERVAL;
      case TEXT, NULL -> TEXT;
    };
  }

  /** The type a value of unknown column type is sent as (TEXT for null). */
  static PgType ofValue(Object v) {
    if (v instanceof Long || v instanceof Integer) {
      return INT8;
    }
    if (v instanceof Double || v instanceof Float) {
      return FLOAT8;
    }
    if (v instanceof Boolean) {
      return BOOL;
    }
    if (v instanceof java.math.BigDecimal) {
      return NUMERIC;
    }
    if (v instanceof io.cairn.engine.row.Interval) {
      return INTERVAL;
    }
    return TEXT;
  }

  /** The text encoding of a non-null value. Doubles round-trip exactly ("NaN", "Infinity", "-Infinity" included). */
  String text(Object v) {
    if (v instanceof Long l && this == TIMESTAMP) {
      return timestamp(l);
    }
    if (v instanceof Long l && this == DATE) {
      return java.time.LocalDate.ofEpochDay(l).toString(); // ISO, as PostgreSQL's DateStyle ISO writes it (years 0–9999)
    }
    if (v instanceof Boolean b) {
      return b ? "t" : "f";
    }
    if (v instanceof java.math.BigDecimal n) {
      return n.toPlainString();
    }
    if (v instanceof Double d) {
      return d.isNaN() ? "NaN" : d.isInfinite() ? (d > 0 ? "Infinity" : "-Infinity") : Double.toString(d);
    }
    return String.valueOf(v);
  }

  /** The binary encoding of a non-null value; a value of another Java type than expected is sent as text bytes. */
  byte[] binary(Object v) {
    switch (this) {
      case INT8, TIMESTAMP -> {
        if (v instanceof Long l) {
          return ByteBuffer.allocate(8).putLong(this == TIMESTAMP ? l - PG_EPOCH_MICROS : l).array();
        }
      }
      case NUMERIC -> {
        if (v instanceof java.math.BigDecimal n) {
          return numericBinary(n);
        }
      }
      case INTERVAL -> {
        if (v instanceof io.cairn.engine.row.Interval i) { // PostgreSQL's interval_send: time, day, month
          return ByteBuffer.allocate(16).putLong(i.micros()).putInt(i.days()).putInt(i.months()).array();
        }
      }
      case DATE -> {
        if (v instanceof Long l) {
          return ByteBuffer.allocate(4).putInt(Math.toIntExact(l - PG_EPOCH_DAYS)).array();
        }
      }
      case FLOAT8 -> {
        if (v instanceof Double d) {
          return ByteBuffer.allocate(8).putDouble(d).array();
        }
      }
      case BOOL -> {
        if (v instanceof Boolean b) {
          return new byte[] {(byte) (b ? 1 : 0)};
        }
      }
      default -> {
        // text: UTF-8 bytes
      }
    }
    return text(v).getBytes(StandardCharsets.UTF_8);
  }

  /** "2024-01-02 03:04:05.123456" (trailing zeros of the fraction dropped, no fraction when zero). */
  static String timestamp(long micros) {
    long secs = Math.floorDiv(micros, 1_000_000L);
    int frac = (int) Math.floorMod(micros, 1_000_000L);
    LocalDateTime t = LocalDateTime.ofEpochSecond(secs, 0, ZoneOffset.UTC);
    StringBuilder sb = new StringBuilder(32);
    sb.append(String.format(java.util.Locale.ROOT, "%04d-%02d-%02d %02d:%02d:%02d", t.getYear(), t.getMonthValue(),
        t.getDayOfMonth(), t.getHour(), t.getMinute(), t.getSecond()));
    if (frac != 0) {
      String f = String.format(java.util.Locale.ROOT, "%06d", frac);
      int end = f.length();
      while (f.charAt(end - 1) == '0') {
        end--;
      }
      sb.append('.').append(f, 0, end);
    }
    return sb.toString();
  }

  /**
   * PostgreSQL's binary numeric: ndigits, weight, sign (0 or 0x4000), display scale, then the
   * base-10000 digits from the most significant, without leading or trailing zero digits; weight is
   * the power of 10000 of the first digit.
   */
  static byte[] numericBinary(java.math.BigDecimal v) {
    java.math.BigDecimal a = v.abs();
    int dscale = Math.max(0, a.scale());
    String plain = a.toPlainString();
    int point = plain.indexOf('.');
    String intPart = point < 0 ? plain : plain.substring(0, point);
    String frac = point < 0 ? "" : plain.substring(point + 1);
    intPart = intPart.replaceFirst("^0+", "");
    intPart = "0".repeat((4 - intPart.length() % 4) % 4) + intPart;
    frac = frac + "0".repeat((4 - frac.length() % 4) % 4);
    java.util.List<Short> digits = new java.util.ArrayList<>();
    for (int i = 0; i < intPart.length(); i += 4) {
      digits.add(Short.parseShort(intPart.substring(i, i + 4)));
    }
    int weight = digits.size() - 1;
    for (int i = 0; i < frac.length(); i += 4) {
      digits.add(Short.parseShort(frac.substring(i, i + 4)));
    }
    while (!digits.isEmpty() && digits.get(0) == 0) {
      digits.remove(0);
      weight--;
    }
    while (!digits.isEmpty() && digits.get(digits.size() - 1) == 0) {
      digits.remove(digits.size() - 1);
    }
    if (digits.isEmpty()) {
      weight = 0;
    }
    ByteBuffer b = ByteBuffer.allocate(8 + 2 * digits.size());
    b.putShort((short) digits.size()).putShort((short) weight).putShort((short) (v.signum() < 0 ? 0x4000 : 0)).putShort((short) dscale);
    digits.forEach(b::putShort);
    return b.array();
  }
}
