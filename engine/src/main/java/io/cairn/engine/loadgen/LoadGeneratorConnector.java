package io.cairn.engine.loadgen;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The built-in {@code load-generator} source: a deterministic stream of changes to a table
 * {@code (id BIGINT PRIMARY KEY, category BIGINT, amount BIGINT)}. The record at offset {@code i}
 * is a pure function of ({@code seed}, {@code i}), so the source replays exactly from any offset.
 *
 * <p>Options: {@code keys} (key space, default 1000), {@code categories} (default 10), {@code
 * seed} (default 42), {@code delete-percent} (default 10), {@code limit} (total records, default
 * unbounded), {@code rate} (records per second, default 0 = as fast as read), {@code append}
 * (default false: the table is keyed by {@code id} and records upsert/delete; true: an append-only
 * stream of the generated rows, deletes skipped, no primary key).
 */
public final class LoadGeneratorConnector implements SourceConnector {
  public static final String NAME = "load-generator";
  public static final Schema SCHEMA =
      Schema.of(Column.of("id", Type.BIGINT), Column.of("category", Type.BIGINT), Column.of("amount", Type.BIGINT));

  @Override
  public String name() {
    return NAME;
  }

  /** Reads are a pure function of the offsets: any number of processes may read at once. */
  @Override
  public boolean sharedReads() {
    return true;
  }

  /**
   * 500,000 records/s: the engine alone replayed 0.89–1.12M upserts/s into a per-key COUNT/SUM view
   * when warm (benchmarks/RESULTS.md, {@code CatchUpRatio}); halved for a restart's cold JVM.
   */
  @Override
  public java.util.OptionalDouble typicalReplayRate() {
    return java.util.OptionalDouble.of(500_000);
  }

  @Override
  public SourceDefinition validate(SourceDefinition d) {
    Settings.of(d);
    if (!d.schema().columns().isEmpty() && !d.schema().equals(SCHEMA)) {
      throw new IllegalArgumentException(
          "Cannot create source '" + d.name() + "': the load generator's schema is fixed (" + SCHEMA + ")");
    }
    boolean append = Boolean.parseBoolean(d.option("append", "false"));
    List<String> pk = append ? List.of() : List.of("id");
    return new SourceDefinition(d.name(), d.connector(), d.options(), SCHEMA, pk, append ? Envelope.NONE : Envelope.UPSERT);
  }

  @Override
  public Source open(SourceDefinition d, Secrets secrets) {
    SourceDefinition v = validate(d);
    return new Generator(Settings.of(v), v.envelope() != Envelope.NONE, Clock.systemUTC());
  }

  /** Validated options. */
  public record Settings(long keys, long categories, long seed, int deletePercent, long limit, double rate) {
    static Settings of(SourceDefinition d) {
      long keys = positive(d, "keys", "1000");
      long categories = positive(d, "categories", "10");
      long seed = number(d, "seed", "42");
      long del = number(d, "delete-percent", "10");
      if (del < 0 || del > 100) {
        throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option 'delete-percent' must be in [0, 100], got " + del);
      }
      long limit = number(d, "limit", "-1");
      double rate;
      try {
        rate = Double.parseDouble(d.option("rate", "0"));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option 'rate' is not a number: '" + d.option("rate", "") + "'");
      }
      return new Settings(keys, categories, seed, (int) del, limit, rate);
    }

    private static long positive(SourceDefinition d, String key, String def) {
      long v = number(d, key, def);
      if (v <= 0) {
        throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option '" + key + "' must be > 0, got " + v);
      }
      return v;
    }

    private static long number(SourceDefinition d, String key, String def) {
      String s = d.option(key, def);
      try {
        return Long.parseLong(s.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option '" + key + "' is not an integer: '" + s + "'");
      }
    }
  }

  /** One generated record: an upsert of {@code row} or, when {@code row} is null, a delete of {@code id}. */
  public record Record(long id, Row row) {}

  /** The record at {@code offset}: a pure function of the settings' seed and the offset. */
  public static Record recordAt(Settings s, long offset) {
    long h = mix(s.seed() * 0x9E3779B97F4A7C15L + offset);
    long id = Math.floorMod(h, s.keys());
    long h2 = mix(h);
    if (Math.floorMod(h2, 100) < s.deletePercent()) {
      return new Record(id, null);
    }
    long category = Math.floorMod(h2 >>> 8, s.categories());
    long amount = Math.floorMod(h2 >>> 24, 1000);
    return new Record(id, Row.of(id, category, amount));
  }

  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  static final class Generator implements Source {
    private final Settings s;
    private final boolean upsert;
    private final Clock clock;
    private final AtomicLong records = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private long offset;
    private long startOffset;
    private long startMillis;
    private double rateLimit;
    private long limitOffset;
    private long limitMillis;
    private long headAtLastPoll = Long.MAX_VALUE;

    Generator(Settings s, boolean upsert, Clock clock) {
      this.s = s;
      this.upsert = upsert;
      this.clock = clock;
    }

    @Override
    public Schema schema() {
      return SCHEMA;
    }

    @Override
    public List<String> primaryKey() {
      return upsert ? List.of("id") : List.of();
    }

    @Override
    public void seek(SourceOffsets offsets) {
      offset = offsets.getLong("offset", 0);
      startOffset = offset;
      startMillis = clock.millis();
    }

    private long head() {
      long h = s.limit() < 0 ? Long.MAX_VALUE : s.limit();
      if (s.rate() > 0) {
        long produced = startOffset + (long) ((clock.millis() - startMillis) / 1000.0 * s.rate());
        h = Math.min(h, produced);
      }
      return h;
    }

    @Override
    public int poll(SourceOutput out, int maxRecords, Duration timeout) {
      requests.incrementAndGet();
      long head = head();
      headAtLastPoll = head;
      long end = Math.min(head, offset + maxRecords);
      if (rateLimit > 0) {
        long allowed = limitOffset + (long) ((clock.millis() - limitMillis) / 1000.0 * rateLimit) + 1;
        end = Math.min(end, Math.max(offset, allowed));
      }
      if (end <= offset) {
        if (!timeout.isZero()) {
          try {
            Thread.sleep(Math.min(timeout.toMillis(), 5));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return 0;
      }
      int n = 0;
      for (; offset < end; offset++, n++) {
        Record r = recordAt(s, offset);
        if (upsert) {
          out.upsert(Row.of(r.id()), r.row());
        } else if (r.row() != null) {
          out.append(r.row(), 1);
        }
      }
      records.addAndGet(n);
      return n;
    }

    @Override
    public SourceOffsets position() {
      return SourceOffsets.of("offset", Long.toString(offset));
    }

    /** Caught up when the last poll delivered everything generated by then (the head keeps moving under a rate). */
    @Override
    public boolean caughtUp() {
      return offset >= headAtLastPoll;
    }

    @Override
    public void setReadRateLimit(double recordsPerSecond) {
      this.rateLimit = recordsPerSecond;
      this.limitOffset = offset;
      this.limitMillis = clock.millis();
    }

    @Override
    public LoadMeter meter() {
      return () -> Map.of(LoadMeter.RECORDS, records.get(), LoadMeter.BYTES, records.get() * 24, LoadMeter.REQUESTS, requests.get());
    }

    @Override
    public void close() {}
  }
}
