package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A decorator that injects faults into calls to another {@link ObjectStore}, configured per
 * instance (never static state): fail the n-th call or calls matching a predicate, truncate the
 * bytes a write sends or a read returns, add latency. Rules are checked in the order added; every
 * matching latency rule sleeps, the first matching failure rule throws before the delegate is
 * called.
 *
 * <pre>{@code
 * var store = FaultInjectingObjectStore.wrap(delegate)
 *     .failNthCall(3)                                          // the 3rd call of any kind
 *     .failWhen(c -> c.kind() == Kind.PUT_IF_ABSENT && c.key().startsWith("catalog/"))
 *     .truncateWrites(c -> c.key().endsWith(".parquet"), 1024)  // the source ends after 1 KiB
 *     .addLatency(c -> true, Duration.ofMillis(5));
 * }</pre>
 *
 * <p>It does not stream ({@link #supportsStreamingWrites()} is false, whatever the delegate):
 * every write goes through {@code put}, where all of its faults apply (truncation included).
 */
public final class FaultInjectingObjectStore implements ObjectStore {

  /** The kinds of calls. */
  public enum Kind { PUT, PUT_IF_ABSENT, GET, GET_RANGE, HEAD, LIST, DELETE }

  /**
   * One call seen by the decorator.
   *
   * @param number 1-based count of calls to this instance, in arrival order
   * @param key the key (the prefix for LIST, the first key for DELETE)
   */
  public record Call(long number, Kind kind, String key) {}

  /** The exception thrown by default for an injected failure. */
  public static final class InjectedFault extends ObjectStoreException {
    private static final long serialVersionUID = 1L;

    public InjectedFault(Call call) {
      super("Cannot " + call.kind() + " " + call.key() + ": injected fault at call " + call.number());
    }
  }

  private record FailRule(Predicate<Call> when, Function<Call, RuntimeException> error) {}

  private record TruncateRule(Predicate<Call> when, long maxBytes) {}

  private record LatencyRule(Predicate<Call> when, Duration delay) {}

  private final ObjectStore delegate;
  private final AtomicLong calls = new AtomicLong();
  private final AtomicLong injected = new AtomicLong();
  private final List<FailRule> failures = new CopyOnWriteArrayList<>();
  private final List<TruncateRule> truncations = new CopyOnWriteArrayList<>();
  private final List<LatencyRule> latencies = new CopyOnWriteArrayList<>();

  private FaultInjectingObjectStore(ObjectStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  public static FaultInjectingObjectStore wrap(ObjectStore delegate) {
    return new FaultInjectingObjectStore(delegate);
  }

  /** Fails the {@code n}-th call (1-based) to this instance, whatever its kind. */
  public FaultInjectingObjectStore failNthCall(long n) {
    return failWhen(c -> c.number() == n);
  }

  /** Fails the {@code n}-th call (1-based, counted among all calls) if it is of {@code kind}. */
  public FaultInjectingObjectStore failNthCall(long n, Kind kind) {
    return failWhen(c -> c.number() == n && c.kind() == kind);
  }

  /** Fails every call matching {@code when} with an {@link InjectedFault}. */
  public FaultInjectingObjectStore failWhen(Predicate<Call> when) {
    return failWhen(when, InjectedFault::new);
  }

  /** Fails every call matching {@code when} with the exception {@code error} makes. */
  public FaultInjectingObjectStore failWhen(Predicate<Call> when, Function<Call, RuntimeException> error) {
    failures.add(new FailRule(when, error));
    return this;
  }

  /**
   * For writes (PUT) matching {@code when}, the source the delegate reads ends after {@code
   * maxBytes} bytes (as if the producer died): the delegate must reject the write. For reads
   * (GET, GET_RANGE) matching, the returned stream ends early after {@code maxBytes}.
   */
  public FaultInjectingObjectStore truncateWrites(Predicate<Call> when, long maxBytes) {
    truncations.add(new TruncateRule(c -> c.kind() == Kind.PUT && when.test(c), maxBytes));
    return this;
  }

  /** Reads matching {@code when} end after {@code maxBytes} bytes without error. */
  public FaultInjectingObjectStore truncateReads(Predicate<Call> when, long maxBytes) {
    truncations.add(new TruncateRule(
        c -> (c.kind() == Kind.GET || c.kind() == Kind.GET_RANGE) && when.test(c), maxBytes));
    return this;
  }

  /** Sleeps {@code delay} before every call matching {@code when}. */
  public FaultInjectingObjectStore addLatency(Predicate<Call> when, Duration delay) {
    latencies.add(new LatencyRule(when, delay));
    return this;
  }

  /** Removes every rule; counters keep going. */
  public FaultInjectingObjectStore clearFaults() {
    failures.clear();
    truncations.clear();
    latencies.clear();
    return this;
  }

  /** Calls seen so far. */
  public long calls() {
    return calls.get();
  }

  /** Failures injected so far. */
  public long injectedFailures() {
    return injected.get();
  }

  public ObjectStore delegate() {
    return delegate;
  }

  private Call enter(Kind kind, String key) {
    Call call = new Call(calls.incrementAndGet(), kind, key);
    for (LatencyRule rule : latencies) {
      if (rule.when().test(call)) {
        try {
          Thread.sleep(rule.delay().toMillis(), rule.delay().toNanosPart() % 1_000_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ObjectStoreException("Cannot " + kind + " " + key + ": interrupted during injected latency", e);
        }
      }
    }
    for (FailRule rule : failures) {
      if (rule.when().test(call)) {
        injected.incrementAndGet();
        throw rule.error().apply(call);
      }
    }
    return call;
  }

  private long truncation(Call call) {
    for (TruncateRule rule : truncations) {
      if (rule.when().test(call)) {
        return rule.maxBytes();
      }
    }
    return -1;
  }

  @Override
  public void put(String key, byte[] bytes) {
    Call call = enter(Kind.PUT, key);
    long cut = truncation(call);
    if (cut >= 0 && cut < bytes.length) {
      delegate.put(key, new Truncated(new java.io.ByteArrayInputStream(bytes), cut), bytes.length);
    } else {
      delegate.put(key, bytes);
    }
  }

  @Override
  public void put(String key, InputStream in, long length) {
    Call call = enter(Kind.PUT, key);
    long cut = truncation(call);
    delegate.put(key, cut >= 0 ? new Truncated(in, cut) : in, length);
  }

  @Override
  public void put(String key, Path file) {
    Call call = enter(Kind.PUT, key);
    long cut = truncation(call);
    if (cut < 0) {
      delegate.put(key, file);
      return;
    }
    try (InputStream in = Files.newInputStream(file)) {
      delegate.put(key, new Truncated(in, cut), Files.size(file));
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + ": cannot read file " + file + ": " + e, e);
    }
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    enter(Kind.PUT_IF_ABSENT, key);
    delegate.putIfAbsent(key, bytes);
  }

  @Override
  public InputStream get(String key) {
    Call call = enter(Kind.GET, key);
    long cut = truncation(call);
    InputStream in = delegate.get(key);
    return cut >= 0 ? new Truncated(in, cut) : in;
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    Call call = enter(Kind.GET_RANGE, key);
    long cut = truncation(call);
    InputStream in = delegate.getRange(key, offset, length);
    return cut >= 0 ? new Truncated(in, cut) : in;
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    enter(Kind.HEAD, key);
    return delegate.head(key);
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    enter(Kind.LIST, prefix);
    return delegate.list(prefix);
  }

  @Override
  public void delete(Collection<String> keys) {
    enter(Kind.DELETE, keys.isEmpty() ? "" : keys.iterator().next());
    delegate.delete(keys);
  }

  @Override
  public String describe() {
    return "fault-injecting(" + delegate.describe() + ")";
  }

  @Override
  public void close() {
    delegate.close();
  }

  /** Ends after {@code limit} bytes. */
  private static final class Truncated extends FilterInputStream {
    private long remaining;

    Truncated(InputStream in, long limit) {
      super(in);
      this.remaining = limit;
    }

    @Override
    public int read() throws IOException {
      if (remaining <= 0) {
        return -1;
      }
      int b = super.read();
      if (b >= 0) {
        remaining--;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      if (remaining <= 0) {
        return -1;
      }
      int n = super.read(b, off, (int) Math.min(len, remaining));
      if (n > 0) {
        remaining -= n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long s = super.skip(Math.min(n, remaining));
      remaining -= s;
      return s;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(super.available(), remaining);
    }
  }
}
