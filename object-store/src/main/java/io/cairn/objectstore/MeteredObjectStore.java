package io.cairn.objectstore;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A decorator that counts calls by kind, bytes written and read, and estimates what the same calls
 * would cost on S3 at public request and transfer prices ({@link CostModel}). Calls are counted
 * whether they succeed or fail (S3 bills most failed requests too). The estimate counts S3
 * requests, not calls: a multipart upload is {@code parts + 2} requests, a listing one request
 * per 1,000 keys; storage is not included.
 */
public final class MeteredObjectStore implements ObjectStore {

  /** Kinds of calls counted. */
  public enum Kind { PUT, PUT_IF_ABSENT, GET, GET_RANGE, HEAD, LIST, DELETE }

  /**
   * Prices in USD.
   *
   * @param putClassPer1000 PUT, COPY, POST and LIST requests, per 1,000
   * @param getClassPer1000 GET, HEAD and other requests, per 1,000
   * @param transferOutPerGiB data read out of the store (to the internet), per GiB
   * @param multipartThresholdBytes objects from this size are counted as multipart uploads
   * @param partSizeBytes part size of those uploads
   */
  public record CostModel(double putClassPer1000, double getClassPer1000, double transferOutPerGiB,
      long multipartThresholdBytes, long partSizeBytes) {
    /** S3 Standard, us-east-1 public prices (PUT $0.005/1k, GET $0.0004/1k, egress $0.09/GB); cairn's multipart defaults. */
    public static final CostModel S3_STANDARD_US_EAST_1 = new CostModel(0.005, 0.0004, 0.09,
        S3ObjectStoreConfig.DEFAULT_MULTIPART_THRESHOLD, S3ObjectStoreConfig.DEFAULT_PART_SIZE);

    public CostModel {
      if (putClassPer1000 < 0 || getClassPer1000 < 0 || transferOutPerGiB < 0 || partSizeBytes <= 0
          || multipartThresholdBytes <= 0) {
        throw new IllegalArgumentException("Invalid cost model: prices must be >= 0 and sizes > 0");
      }
    }
  }

  /**
   * A snapshot of the counters.
   *
   * @param calls calls by kind
   * @param putClassRequests estimated S3 PUT/COPY/POST/LIST requests
   * @param getClassRequests estimated S3 GET/HEAD requests
   * @param bytesIn bytes written to the store
   * @param bytesOut bytes read from the store (as consumed from returned streams)
   * @param estimatedCostUsd requests and transfer out at the cost model's prices
   */
  public record Metrics(Map<Kind, Long> calls, long putClassRequests, long getClassRequests, long bytesIn,
      long bytesOut, double estimatedCostUsd) {
    public long calls(Kind kind) {
      return calls.getOrDefault(kind, 0L);
    }
  }

  private final ObjectStore delegate;
  private final CostModel costs;
  private final AtomicLongArray calls = new AtomicLongArray(Kind.values().length);
  private final AtomicLong putClass = new AtomicLong();
  private final AtomicLong getClass = new AtomicLong();
  private final AtomicLong bytesIn = new AtomicLong();
  private final AtomicLong bytesOut = new AtomicLong();

  public MeteredObjectStore(ObjectStore delegate) {
    this(delegate, CostModel.S3_STANDARD_US_EAST_1);
  }

  public MeteredObjectStore(ObjectStore delegate, CostModel costs) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.costs = Objects.requireNonNull(costs, "costs");
  }

  public Metrics metrics() {
    Map<Kind, Long> byKind = new EnumMap<>(Kind.class);
    for (Kind k : Kind.values()) {
      byKind.put(k, calls.get(k.ordinal()));
    }
    long put = putClass.get();
    long get = getClass.get();
    long out = bytesOut.get();
    double cost = put / 1000.0 * costs.putClassPer1000() + get / 1000.0 * costs.getClassPer1000()
        + out / (double) (1L << 30) * costs.transferOutPerGiB();
    return new Metrics(Map.copyOf(byKind), put, get, bytesIn.get(), out, cost);
  }

  private void countWrite(Kind kind, long size) {
    calls.incrementAndGet(kind.ordinal());
    if (size >= costs.multipartThresholdBytes()) {
      putClass.addAndGet(2 + (size + costs.partSizeBytes() - 1) / costs.partSizeBytes());
    } else {
      putClass.incrementAndGet();
    }
  }

  @Override
  public void put(String key, byte[] bytes) {
    countWrite(Kind.PUT, bytes.length);
    delegate.put(key, bytes);
    bytesIn.addAndGet(bytes.length);
  }

  @Override
  public void put(String key, InputStream in, long length) {
    countWrite(Kind.PUT, length);
    delegate.put(key, in, length);
    bytesIn.addAndGet(length);
  }

  @Override
  public void put(String key, Path file) {
    long size;
    try {
      size = Files.size(file);
    } catch (IOException e) {
      size = 0;
    }
    countWrite(Kind.PUT, size);
    delegate.put(key, file);
    bytesIn.addAndGet(size);
  }

  @Override
  public boolean supportsStreamingWrites() {
    return delegate.supportsStreamingWrites();
  }

  /** Counted as one PUT of the committed size (with the parts it implies), like {@link #put(String, Path)}. */
  @Override
  public ObjectWrite openWrite(String key) {
    ObjectWrite w = delegate.openWrite(key);
    return new ObjectWrite() {
      @Override
      public void write(int b) throws IOException {
        w.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        w.write(b, off, len);
      }

      @Override
      public void commit() {
        countWrite(Kind.PUT, w.size());
        w.commit();
        bytesIn.addAndGet(w.size());
      }

      @Override
      public long size() {
        return w.size();
      }

      @Override
      public void close() {
        w.close();
      }
    };
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    countWrite(Kind.PUT_IF_ABSENT, bytes.length);
    delegate.putIfAbsent(key, bytes);
    bytesIn.addAndGet(bytes.length);
  }

  @Override
  public InputStream get(String key) {
    calls.incrementAndGet(Kind.GET.ordinal());
    getClass.incrementAndGet();
    return new Counting(delegate.get(key));
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    calls.incrementAndGet(Kind.GET_RANGE.ordinal());
    getClass.incrementAndGet();
    return new Counting(delegate.getRange(key, offset, length));
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    calls.incrementAndGet(Kind.HEAD.ordinal());
    getClass.incrementAndGet();
    return delegate.head(key);
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    calls.incrementAndGet(Kind.LIST.ordinal());
    List<ObjectInfo> result;
    try {
      result = delegate.list(prefix);
    } catch (RuntimeException e) {
      putClass.incrementAndGet();
      throw e;
    }
    putClass.addAndGet(Math.max(1, (result.size() + 999) / 1000));
    return result;
  }

  @Override
  public void delete(Collection<String> keys) {
    // S3 does not bill DELETE requests
    calls.incrementAndGet(Kind.DELETE.ordinal());
    delegate.delete(keys);
  }

  @Override
  public String describe() {
    return "metered(" + delegate.describe() + ")";
  }

  @Override
  public void close() {
    delegate.close();
  }

  private final class Counting extends FilterInputStream {
    Counting(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) {
        bytesOut.incrementAndGet();
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      if (n > 0) {
        bytesOut.addAndGet(n);
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      return super.skip(n);
    }
  }
}
