package io.cairn.recovery;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceException;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A test connector ({@code CREATE SOURCE x FROM BLOCKING ()}, found through the service loader)
 * whose polls block for a minute unless woken up, as a Kafka call does with its broker gone.
 */
public final class BlockingConnector implements SourceConnector {
  @Override
  public String name() {
    return "blocking";
  }

  @Override
  public SourceDefinition validate(SourceDefinition d) {
    return new SourceDefinition(d.name(), d.connector(), d.options(), Schema.parse("k BIGINT"), List.of(), d.envelope());
  }

  @Override
  public Source open(SourceDefinition d, Secrets secrets) {
    CountDownLatch woken = new CountDownLatch(1);
    return new Source() {
      @Override
      public Schema schema() {
        return Schema.parse("k BIGINT");
      }

      @Override
      public List<String> primaryKey() {
        return List.of();
      }

      @Override
      public void seek(SourceOffsets offsets) {}

      @Override
      public int poll(SourceOutput out, int maxRecords, Duration timeout) {
        try {
          if (woken.await(60, TimeUnit.SECONDS)) {
            throw new SourceException("woken up", true);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return 0;
      }

      @Override
      public SourceOffsets position() {
        return SourceOffsets.EMPTY;
      }

      @Override
      public boolean caughtUp() {
        return false;
      }

      @Override
      public LoadMeter meter() {
        return Map::of;
      }

      @Override
      public void wakeup() {
        woken.countDown();
      }

      @Override
      public void close() {}
    };
  }
}
