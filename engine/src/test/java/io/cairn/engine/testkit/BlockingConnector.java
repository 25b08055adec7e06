package io.cairn.engine.testkit;

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
 * A test connector ({@code blocking}; {@code CREATE SOURCE x FROM BLOCKING ()} where the service
 * loader finds it) whose polls block for a minute unless woken up ({@link Source#wakeup}), as a
 * Kafka call does with its broker gone. Once woken, every poll of every source it opened throws a
 * retriable "woken up" at once. Never caught up.
 */
public final class BlockingConnector implements SourceConnector {
  private final CountDownLatch inPoll = new CountDownLatch(1);
  private final CountDownLatch woken = new CountDownLatch(1);

  /** Whether a poll was entered within {@code seconds}. */
  public boolean awaitInPoll(long seconds) throws InterruptedException {
    return inPoll.await(seconds, TimeUnit.SECONDS);
  }

  /** Whether a source of this connector was woken up. */
  public boolean woken() {
    return woken.getCount() == 0;
  }

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
        inPoll.countDown();
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
