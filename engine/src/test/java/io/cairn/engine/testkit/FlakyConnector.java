package io.cairn.engine.testkit;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
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
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A test connector ({@code flaky}) over the deterministic load generator that injects faults per
 * instance of the connector: the n-th poll (counted over every source it opened) delivers its
 * records and then throws, retriable or not; the n-th seek throws. Like a Kafka consumer, each
 * source throws {@link ConcurrentModificationException} when a second thread enters it while
 * another is inside — so a test sees any breach of the one-owner-thread rule.
 */
public final class FlakyConnector implements SourceConnector {
  public static final String NAME = "flaky";
  private final LoadGeneratorConnector generator = new LoadGeneratorConnector();
  private final Map<Integer, Boolean> pollFaults = new ConcurrentHashMap<>(); // poll number -> retriable
  private final Map<Integer, Boolean> seekFaults = new ConcurrentHashMap<>();
  private final AtomicInteger polls = new AtomicInteger();
  private final AtomicInteger seeks = new AtomicInteger();
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger concurrentAccesses = new AtomicInteger();

  /** The {@code n}-th poll (1-based, over all sources opened) delivers, then throws. */
  public FlakyConnector failPoll(int n, boolean retriable) {
    pollFaults.put(n, retriable);
    return this;
  }

  private volatile long badRecord = -1;
  private volatile boolean badRecordRetriable;

  /**
   * The record at generator offset {@code offset} fails every source that reaches it: the poll
   * that reaches it delivers the records before it and then throws an at-record error there,
   * with the same message every time (as a record that cannot be handled does).
   */
  public FlakyConnector failAtRecord(long offset, boolean retriable) {
    badRecordRetriable = retriable;
    badRecord = offset;
    return this;
  }

  /** The {@code n}-th seek (1-based) throws. */
  public FlakyConnector failSeek(int n, boolean retriable) {
    seekFaults.put(n, retriable);
    return this;
  }

  public int opened() {
    return opened.get();
  }

  public int polls() {
    return polls.get();
  }

  /** Times a second thread entered a source while another was inside it. */
  public int concurrentAccesses() {
    return concurrentAccesses.get();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public SourceDefinition validate(SourceDefinition d) {
    SourceDefinition v = generator.validate(new SourceDefinition(d.name(), LoadGeneratorConnector.NAME, d.options(), d.schema(),
        d.primaryKey(), d.envelope()));
    return new SourceDefinition(v.name(), NAME, v.options(), v.schema(), v.primaryKey(), v.envelope());
  }

  @Override
  public Source open(SourceDefinition d, Secrets secrets) {
    opened.incrementAndGet();
    return new Flaky(generator.open(new SourceDefinition(d.name(), LoadGeneratorConnector.NAME, d.options(), d.schema(),
        d.primaryKey(), d.envelope()), secrets));
  }

  private final class Flaky implements Source {
    private final Source delegate;
    private final AtomicReference<Thread> inside = new AtomicReference<>();

    Flaky(Source delegate) {
      this.delegate = delegate;
    }

    private void enter() {
      if (!inside.compareAndSet(null, Thread.currentThread())) {
        concurrentAccesses.incrementAndGet();
        throw new ConcurrentModificationException("flaky source is not safe for multi-threaded access");
      }
    }

    private void leave() {
      inside.set(null);
    }

    @Override
    public Schema schema() {
      return delegate.schema();
    }

    @Override
    public List<String> primaryKey() {
      return delegate.primaryKey();
    }

    @Override
    public void seek(SourceOffsets offsets) {
      enter();
      try {
        Boolean fault = seekFaults.remove(seeks.incrementAndGet());
        if (fault != null) {
          throw new SourceException("injected seek failure at " + offsets.values(), fault);
        }
        delegate.seek(offsets);
      } finally {
        leave();
      }
    }

    @Override
    public int poll(SourceOutput out, int maxRecords, Duration timeout) {
      enter();
      try {
        long bad = badRecord;
        int want = maxRecords;
        if (bad >= 0) {
          long pos = delegate.position().getLong("offset", 0);
          want = (int) Math.max(0, Math.min(maxRecords, bad - pos));
        }
        int n = want == 0 ? 0 : delegate.poll(out, want, timeout);
        if (bad >= 0 && delegate.position().getLong("offset", 0) == bad) {
          throw new SourceException("injected bad record at offset " + bad, null, badRecordRetriable, true);
        }
        Boolean fault = pollFaults.remove(polls.incrementAndGet());
        if (fault != null) {
          throw new SourceException("injected poll failure after delivering " + n + " records", fault);
        }
        return n;
      } finally {
        leave();
      }
    }

    @Override
    public SourceOffsets position() {
      return delegate.position();
    }

    @Override
    public boolean caughtUp() {
      enter();
      try {
        return delegate.caughtUp();
      } finally {
        leave();
      }
    }

    @Override
    public void setReadRateLimit(double recordsPerSecond) {
      enter();
      try {
        delegate.setReadRateLimit(recordsPerSecond);
      } finally {
        leave();
      }
    }

    @Override
    public LoadMeter meter() {
      return delegate.meter();
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
