package io.cairn.benchmarks.engine;

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
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * An endless, deterministic stream of {@code (k BIGINT, v BIGINT)} rows for benchmarks: the
 * record at offset {@code i} has key {@code (i × 2654435761) mod keys} — a scattered permutation
 * of {@code [0, keys)} in every pass of {@code keys} records — and value {@code i}. Append-only
 * (envelope NONE) or keyed by {@code k} (UPSERT: each record replaces the key's previous row).
 * Options: {@code keys}; {@code chunk}, the most records one poll delivers (so several sources
 * share a tick); {@code constant-value} (true: {@code v} is always 0, so an append-only stream
 * consolidates to one row per key); {@code limit}, the offset at which the stream ends (it then
 * reports itself caught up; default: never).
 */
public final class KeyStreamConnector implements SourceConnector {
  public static final String NAME = "key-stream";
  public static final Schema SCHEMA = Schema.of(Column.of("k", Type.BIGINT), Column.of("v", Type.BIGINT));
  private static final long SCATTER = 2654435761L; // odd and not a multiple of 5: a permutation modulo 10^n

  @Override
  public String name() {
    return NAME;
  }

  /** Reads are a pure function of the offsets: any number of processes may read at once. */
  @Override
  public boolean sharedReads() {
    return true;
  }

  /** A definition of source {@code name} with {@code keys} keys. */
  public static SourceDefinition definition(String name, long keys, long chunk, boolean upsert, boolean constantValue) {
    return new SourceDefinition(
        name, NAME, Map.of("keys", Long.toString(keys), "chunk", Long.toString(chunk), "constant-value", Boolean.toString(constantValue)),
        SCHEMA, upsert ? List.of("k") : List.of(),
        upsert ? Envelope.UPSERT : Envelope.NONE);
  }

  @Override
  public SourceDefinition validate(SourceDefinition d) {
    long keys = Long.parseLong(d.requireOption("keys"));
    if (keys <= 0) {
      throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option 'keys' must be > 0, got " + keys);
    }
    Long.parseLong(d.option("chunk", "1000000"));
    Long.parseLong(d.option("limit", Long.toString(Long.MAX_VALUE)));
    return d;
  }

  @Override
  public Source open(SourceDefinition d, Secrets secrets) {
    long keys = Long.parseLong(d.requireOption("keys"));
    long chunk = Long.parseLong(d.option("chunk", "1000000"));
    boolean upsert = d.envelope() != Envelope.NONE;
    boolean constant = Boolean.parseBoolean(d.option("constant-value", "false"));
    long limit = Long.parseLong(d.option("limit", Long.toString(Long.MAX_VALUE)));
    return new Source() {
      long offset;

      @Override
      public Schema schema() {
        return SCHEMA;
      }

      @Override
      public List<String> primaryKey() {
        return upsert ? List.of("k") : List.of();
      }

      @Override
      public void seek(SourceOffsets offsets) {
        offset = offsets.getLong("offset", 0);
      }

      @Override
      public int poll(SourceOutput out, int maxRecords, Duration timeout) {
        int n = (int) Math.min(Math.min(maxRecords, chunk), limit - offset);
        for (int i = 0; i < n; i++, offset++) {
          long k = Math.floorMod(offset * SCATTER, keys);
          Row row = Row.of(k, constant ? 0L : offset);
          if (upsert) {
            out.upsert(null, row);
          } else {
            out.append(row, 1);
          }
        }
        return n;
      }

      @Override
      public SourceOffsets position() {
        return SourceOffsets.of("offset", Long.toString(offset));
      }

      @Override
      public boolean caughtUp() {
        return offset >= limit;
      }

      @Override
      public LoadMeter meter() {
        return () -> Map.of(LoadMeter.RECORDS, offset);
      }

      @Override
      public void close() {}
    };
  }
}
