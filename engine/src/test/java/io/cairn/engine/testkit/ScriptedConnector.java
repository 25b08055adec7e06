package io.cairn.engine.testkit;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A test-only connector ({@code scripted}) that replays per-tick scripts of records. Each source
 * (by name) has a {@link Script}: its schema, primary key and a list of ticks, each a list of
 * {@link Rec}s. The test releases ticks with {@link #release(int)}: a poll delivers every record
 * of the released ticks not delivered yet, so with a {@code TickPolicy} of zero duration the
 * engine's tick {@code i} (1-based) sees exactly script tick {@code i - 1} when released one by
 * one. The offset ({@code offset}) is the number of records delivered, so a restored source
 * resumes exactly where the snapshot left it.
 */
public final class ScriptedConnector implements SourceConnector {
  public static final String NAME = "scripted";

  /** One record: an append of {@code row} with {@code diff}, or an upsert of {@code row} under {@code key} (null row deletes). */
  public record Rec(boolean upsert, Row key, Row row, long diff) {
    public static Rec append(Row row, long diff) {
      return new Rec(false, null, Objects.requireNonNull(row), diff);
    }

    public static Rec upsert(Row key, Row row) {
      return new Rec(true, Objects.requireNonNull(key), row, 0);
    }

    @Override
    public String toString() {
      return upsert ? (row == null ? "del" + key : "put" + row) : (diff > 0 ? "+" : "") + diff + row;
    }
  }

  /** The records of one source, per tick. */
  public record Script(Schema schema, List<String> primaryKey, List<List<Rec>> ticks) {
    public Script {
      ticks = ticks.stream().map(List::copyOf).toList();
      primaryKey = List.copyOf(primaryKey);
    }

    /** Number of records in ticks {@code [0, n)}. */
    long recordsBefore(int n) {
      long c = 0;
      for (int i = 0; i < Math.min(n, ticks.size()); i++) {
        c += ticks.get(i).size();
      }
      return c;
    }

    List<Rec> flat() {
      List<Rec> all = new ArrayList<>();
      ticks.forEach(all::addAll);
      return all;
    }
  }

  private final Map<String, Script> scripts = new HashMap<>();
  private volatile int released;

  public ScriptedConnector script(String source, Script script) {
    scripts.put(source, script);
    return this;
  }

  /** Makes the records of script ticks {@code [0, ticks)} available. */
  public void release(int ticks) {
    released = ticks;
  }

  /** A definition of source {@code name} read through this connector. */
  public static SourceDefinition definition(String name) {
    return new SourceDefinition(name, NAME, Map.of(), null, null, Envelope.NONE);
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public SourceDefinition validate(SourceDefinition d) {
    Script s = scripts.get(d.name());
    if (s == null) {
      throw new IllegalArgumentException("Cannot create source '" + d.name() + "': no script registered under that name");
    }
    return new SourceDefinition(
        d.name(), NAME, d.options(), s.schema(), s.primaryKey(), s.primaryKey().isEmpty() ? Envelope.NONE : Envelope.UPSERT);
  }

  @Override
  public Source open(SourceDefinition d, Secrets secrets) {
    return new Scripted(scripts.get(d.name()));
  }

  private final class Scripted implements Source {
    private final Script script;
    private final List<Rec> all;
    private long offset;
    private long polls;

    Scripted(Script script) {
      this.script = script;
      this.all = script.flat();
    }

    @Override
    public Schema schema() {
      return script.schema();
    }

    @Override
    public List<String> primaryKey() {
      return script.primaryKey();
    }

    @Override
    public void seek(SourceOffsets offsets) {
      offset = offsets.getLong("offset", 0);
    }

    @Override
    public int poll(SourceOutput out, int maxRecords, Duration timeout) {
      polls++;
      long end = Math.min(script.recordsBefore(released), offset + maxRecords);
      int n = 0;
      for (; offset < end; offset++, n++) {
        Rec r = all.get((int) offset);
        if (r.upsert()) {
          out.upsert(r.key(), r.row());
        } else {
          out.append(r.row(), r.diff());
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
      return offset >= script.recordsBefore(released);
    }

    @Override
    public LoadMeter meter() {
      return () -> Map.of(LoadMeter.RECORDS, offset, LoadMeter.REQUESTS, polls);
    }

    @Override
    public void close() {}
  }
}
