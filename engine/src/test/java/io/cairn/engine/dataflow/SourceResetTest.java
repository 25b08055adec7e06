package io.cairn.engine.dataflow;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Guards SourceOutput.reset(): a source that reads its table again from scratch leaves no stale rows. */
class SourceResetTest {
  static final Schema SCHEMA = Schema.of(Column.of("id", Type.BIGINT), Column.of("v", Type.BIGINT));

  /** A source whose polls are scripted: each poll runs the next step against the output. */
  static final class Scripted implements SourceConnector, Source {
    final Deque<Consumer<SourceOutput>> steps = new ArrayDeque<>();

    @Override
    public String name() {
      return "scripted-reset";
    }

    @Override
    public SourceDefinition validate(SourceDefinition d) {
      return d;
    }

    @Override
    public Source open(SourceDefinition d, Secrets s) {
      return this;
    }

    @Override
    public Schema schema() {
      return SCHEMA;
    }

    @Override
    public List<String> primaryKey() {
      return List.of("id");
    }

    @Override
    public void seek(SourceOffsets o) {}

    @Override
    public int poll(SourceOutput out, int max, Duration timeout) {
      Consumer<SourceOutput> step = steps.poll();
      if (step == null) {
        return 0;
      }
      step.accept(out);
      return 1;
    }

    @Override
    public SourceOffsets position() {
      return SourceOffsets.EMPTY;
    }

    @Override
    public boolean caughtUp() {
      return steps.isEmpty();
    }

    @Override
    public LoadMeter meter() {
      return Map::of;
    }

    @Override
    public void close() {}
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3})
  void resetRetractsEverythingAndLaterRecordsStartFromEmpty(int workers) {
    Scripted s = new Scripted();
    s.steps.add(out -> {
      for (long i = 0; i < 10; i++) {
        out.upsert(Row.of(i), Row.of(i, i * 10));
      }
    });
    // the table is read again from scratch: ids 3 and 7 were deleted meanwhile, 2 changed
    s.steps.add(out -> {
      out.upsert(Row.of(99L), Row.of(99L, 1L)); // offered before the reset in the same tick: dropped
      out.reset();
      for (long i = 0; i < 10; i++) {
        if (i != 3 && i != 7) {
          out.upsert(Row.of(i), Row.of(i, i == 2 ? 222L : i * 10));
        }
      }
    });
    try (Engine e = Engine.builder().workers(workers).connector(s).tickPolicy(new TickPolicy(1, Duration.ZERO)).build()) {
      e.createSource(1, new SourceDefinition("t", "scripted-reset", Map.of(), SCHEMA, List.of("id"), Envelope.UPSERT));
      e.createView(2, "total", new Plan.Reduce(new Plan.Get("t", SCHEMA), new int[0],
          List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.SUM, 1, Type.BIGINT)),
          Schema.of(Column.of("n", Type.BIGINT), Column.of("s", Type.BIGINT))));
      e.tick();
      assertThat(e.peek("t")).hasSize(10);
      e.tick();
      assertThat(e.peek("t")).hasSize(8).doesNotContain(Row.of(3L, 30L), Row.of(7L, 70L), Row.of(99L, 1L))
          .contains(Row.of(2L, 222L));
      assertThat(e.peek("total")).containsExactly(Row.of(8L, 450L - 30 - 70 - 20 + 222));
    }
  }
}
