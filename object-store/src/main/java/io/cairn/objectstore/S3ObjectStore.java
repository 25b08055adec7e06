package io.cairn.objectstore;

import io.cairn.objectstore.S3ObjectStoreConfig.ChecksumMode;
import io.cairn.objectstore.exceptions.AccessDeniedException;
import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.client.config.ClientOverrideConfiguration;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.retries.api.BackoffStrategy;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * An {@link ObjectStore} on S3 or an S3-compatible server, through the AWS SDK for Java v2
 * synchronous client. The only class in cairn that talks to the SDK.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Keys map to {@code <prefix>/<key>} in the bucket.
 *   <li>Objects below {@link S3ObjectStoreConfig#multipartThresholdBytes()} go in one PUT whose
 *       body is in memory (so the SDK can retry it); larger ones in a multipart upload: the caller's
 *       thread reads parts, up to {@code multipartParallelism} parts upload at once on the store's
 *       executor (a semaphore bounds the memory). Any failure waits for the parts in flight, then
 *       aborts the upload, so no object becomes visible and no parts are left behind.
 *   <li>{@link #openWrite} streams an object of unknown length: the producer's bytes fill a part
 *       in 256 KiB chunks. An object that ends within the multipart threshold rounded up to whole
 *       parts ({@code ceil(multipartThresholdBytes / partSizeBytes)} parts: 2, so 16 MiB, with the
 *       defaults) goes in one PUT at commit, as {@link #put(String, InputStream, long)} sends an
 *       object below the threshold: its full parts are held back until then, each taking a permit
 *       of the semaphore below as if it were in flight (without waiting: if none is free, or the
 *       object outgrows the threshold, the multipart upload starts). A larger object goes in a
 *       multipart upload: the held parts are uploaded first, then each full part on the executor
 *       while the next fills. Parts in flight or held across all streaming writes of this store
 *       are bounded by {@code multipartParallelism} (a store-wide semaphore), so their memory is at
 *       most {@code (multipartParallelism + open writes) * partSizeBytes}. Held parts take at most
 *       {@code multipartParallelism - 1} of its permits, so at least one is always free or in an
 *       upload that finishes on its own: a write waiting for a permit never waits on a writer that
 *       holds parts back (which may itself wait on its producer). The part size doubles
 *       every 1,000 parts (S3 allows 10,000), so an object of unknown length is not capped at
 *       10,000 parts. Commit waits for the parts and completes the upload; a failure, or a close
 *       without commit, waits for the parts in flight and aborts the upload.
 *   <li>Every PUT and part carries a Content-MD5 the server checks; with
 *       {@link ChecksumMode#WHEN_SUPPORTED} the SDK also adds CRC32 checksums and validates
 *       whole-object reads.
 *   <li>{@link #putIfAbsent} is a PUT with {@code If-None-Match: *}: 412 means another writer
 *       won; 409 (a concurrent conditional write in progress) is retried.
 *   <li>Retries are the SDK's standard strategy (exponential backoff with full jitter, throttling
 *       backoff, a retry-quota circuit breaker) bounded by {@code maxAttempts}; 4xx other than
 *       throttling are never retried.
 *   <li>Error messages name the bucket, prefix, endpoint and key; credentials never appear in
 *       them or in logs.
 * </ul>
 */
public final class S3ObjectStore implements ObjectStore {
  private static final Logger LOG = LoggerFactory.getLogger(S3ObjectStore.class);
  private static final int DELETE_BATCH = 1000;
  private static final long MAX_PARTS = 10_000;
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final S3ObjectStoreConfig config;
  private final S3Client s3;
  private final String name;
  private final String keyBase;
  private final ExecutorService uploads;
  private final Semaphore streamingParts;
  /** Of {@link #streamingParts}, how many may be held back by writes that may still go in one PUT: one fewer, see {@link S3Write}. */
  private final Semaphore heldParts;
  /** Bytes streaming writes hold in part buffers now, and the most they ever held (see {@link #streamingBufferPeakBytes}). */
  private final AtomicLong streamingBuffered = new AtomicLong();
  private final AtomicLong streamingBufferPeak = new AtomicLong();
  private final AtomicLong attempts = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean bucketVerified;

  public S3ObjectStore(S3ObjectStoreConfig config) {
    this(config, List.of());
  }

  /** With extra SDK interceptors; for fault-injection tests of this module. */
  S3ObjectStore(S3ObjectStoreConfig config, List<ExecutionInterceptor> interceptors) {
    this.config = Objects.requireNonNull(config, "config");
    this.name = config.describe();
    this.keyBase = config.prefix().isEmpty() ? "" : config.prefix() + "/";
    ClientOverrideConfiguration.Builder override = ClientOverrideConfiguration.builder()
        .retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
            .maxAttempts(config.maxAttempts())
            .backoffStrategy(BackoffStrategy.exponentialDelay(config.baseRetryDelay(), config.maxRetryDelay()))
            .throttlingBackoffStrategy(
                BackoffStrategy.exponentialDelay(config.baseRetryDelay().multipliedBy(5), config.maxRetryDelay()))
            .build())
        .apiCallAttemptTimeout(config.attemptTimeout())
        .apiCallTimeout(config.apiCallTimeout())
        .addExecutionInterceptor(new ExecutionInterceptor() {
          @Override
          public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            attempts.incrementAndGet();
          }
        });
    interceptors.forEach(override::addExecutionInterceptor);
    AwsCredentialsProvider credentials = config.credentials() == null
        ? DefaultCredentialsProvider.builder().build()
        : StaticCredentialsProvider.create(AwsBasicCredentials.create(
            config.credentials().accessKeyId(), config.credentials().secretAccessKey()));
    boolean whenSupported = config.checksumMode() == ChecksumMode.WHEN_SUPPORTED;
    var builder = S3Client.builder()
        .region(Region.of(config.region()))
        .credentialsProvider(credentials)
        .forcePathStyle(config.pathStyleAccess())
        .requestChecksumCalculation(whenSupported
            ? RequestChecksumCalculation.WHEN_SUPPORTED : RequestChecksumCalculation.WHEN_REQUIRED)
        .responseChecksumValidation(whenSupported
            ? ResponseChecksumValidation.WHEN_SUPPORTED : ResponseChecksumValidation.WHEN_REQUIRED)
        .httpClientBuilder(Apache5HttpClient.builder()
            .maxConnections(config.maxConnections())
            .connectionTimeout(config.connectTimeout())
            .socketTimeout(config.attemptTimeout()))
        .overrideConfiguration(override.build());
    if (config.endpoint() != null) {
      builder.endpointOverride(config.endpoint());
    }
    this.s3 = builder.build();
    int pool = POOLS.incrementAndGet();
    AtomicInteger threads = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, "cairn-s3-upload-" + pool + "-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    this.uploads = Executors.newFixedThreadPool(config.multipartParallelism(), factory);
    this.streamingParts = new Semaphore(config.multipartParallelism());
    this.heldParts = new Semaphore(config.multipartParallelism() - 1);
  }

  public S3ObjectStoreConfig config() {
    return config;
  }

  /** HTTP attempts sent so far (first tries and retries), for tests and metering. */
  public long requestAttempts() {
    return attempts.get();
  }

  private String fullKey(String key) {
    return keyBase + ObjectKeys.validate(key);
  }

  // ---- writes

  @Override
  public void put(String key, byte[] bytes) {
    putSingle(key, fullKey(key), bytes, false);
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    String full = fullKey(key);
    for (int conflict = 0; ; conflict++) {
      try {
        putSingle(key, full, bytes, true);
        return;
      } catch (ConcurrentWriteConflict e) {
        if (conflict >= config.maxAttempts()) {
          throw new StoreUnavailableException(
              "Cannot create " + key + " in " + name + ": conflicting concurrent writes kept failing (409)", e.getCause());
        }
        sleepQuietly(config.baseRetryDelay().toMillis() * (1L << Math.min(conflict, 6)));
      }
    }
  }

  /** 409 ConditionalRequestConflict: retried by {@link #putIfAbsent}. */
  private static final class ConcurrentWriteConflict extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ConcurrentWriteConflict(Throwable cause) {
      super(cause);
    }
  }

  private void putSingle(String key, String full, byte[] bytes, boolean ifAbsent) {
    putSingle(key, full, bytes.length, base64Md5(bytes, 0, bytes.length), RequestBody.fromBytes(bytes), ifAbsent);
  }

  private void putSingle(String key, String full, long length, String md5, RequestBody body, boolean ifAbsent) {
    PutObjectRequest.Builder req = PutObjectRequest.builder()
        .bucket(config.bucket())
        .key(full)
        .contentLength(length)
        .contentMD5(md5);
    if (ifAbsent) {
      req.ifNoneMatch("*");
    }
    encryption(req);
    try {
      s3.putObject(req.build(), body);
    } catch (S3Exception e) {
      if (ifAbsent && e.statusCode() == 412) {
        throw new ObjectAlreadyExistsException("Cannot create " + key + " in " + name + ": object already exists");
      }
      if (ifAbsent && e.statusCode() == 409) {
        throw new ConcurrentWriteConflict(e);
      }
      throw translate(ifAbsent ? "create" : "put", key, e);
    } catch (SdkException e) {
      throw translate(ifAbsent ? "create" : "put", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unexpected(ifAbsent ? "create" : "put", key, e);
    }
  }

  private void encryption(PutObjectRequest.Builder req) {
    switch (config.serverSideEncryption()) {
      case S3 -> req.serverSideEncryption(ServerSideEncryption.AES256);
      case KMS -> req.serverSideEncryption(ServerSideEncryption.AWS_KMS).ssekmsKeyId(config.kmsKeyId());
      case NONE -> { }
    }
  }

  private void encryption(CreateMultipartUploadRequest.Builder req) {
    switch (config.serverSideEncryption()) {
      case S3 -> req.serverSideEncryption(ServerSideEncryption.AES256);
      case KMS -> req.serverSideEncryption(ServerSideEncryption.AWS_KMS).ssekmsKeyId(config.kmsKeyId());
      case NONE -> { }
    }
  }

  @Override
  public void put(String key, InputStream in, long length) {
    String full = fullKey(key);
    StoreSupport.checkLength(key, length);
    if (length < config.multipartThresholdBytes()) {
      putSingle(key, full, StoreSupport.readExactly(name, key, in, (int) length), false);
    } else {
      putMultipart(key, full, in, length);
    }
  }

  @Override
  public void put(String key, Path file) {
    String full = fullKey(key);
    long size;
    try {
      size = Files.size(file);
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": cannot read file " + file + ": " + e, e);
    }
    try (InputStream in = Files.newInputStream(file)) {
      if (size < config.multipartThresholdBytes()) {
        putSingle(key, full, StoreSupport.readExactly(name, key, in, (int) size), false);
      } else {
        putMultipart(key, full, in, size);
      }
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": cannot read file " + file + ": " + e, e);
    }
  }

  private String createMultipart(String key, String full) {
    CreateMultipartUploadRequest.Builder create = CreateMultipartUploadRequest.builder()
        .bucket(config.bucket()).key(full);
    if (config.checksumMode() == ChecksumMode.WHEN_SUPPORTED) {
      create.checksumAlgorithm(ChecksumAlgorithm.CRC32);
    }
    encryption(create);
    try {
      return s3.createMultipartUpload(create.build()).uploadId();
    } catch (SdkException e) {
      throw translate("put", key, e);
    } catch (RuntimeException e) {
      throw unexpected("put", key, e);
    }
  }

  private void putMultipart(String key, String full, InputStream in, long length) {
    boolean crc = config.checksumMode() == ChecksumMode.WHEN_SUPPORTED;
    String uploadId = createMultipart(key, full);
    // S3 allows at most 10,000 parts: grow the part size for very large objects
    long partSize = Math.max(config.partSizeBytes(), (length + MAX_PARTS - 1) / MAX_PARTS);
    int partCount = (int) ((length + partSize - 1) / partSize);
    LOG.debug("Uploading {} ({} bytes) to {} in {} parts, upload {}", key, length, name, partCount, uploadId);
    Semaphore permits = new Semaphore(config.multipartParallelism());
    List<Future<CompletedPart>> futures = new ArrayList<>(partCount);
    AtomicBoolean failed = new AtomicBoolean();
    try {
      long offset = 0;
      for (int partNumber = 1; partNumber <= partCount; partNumber++) {
        permits.acquire();
        if (failed.get()) {
          permits.release();
          break;
        }
        int n = (int) Math.min(partSize, length - offset);
        byte[] part;
        try {
          part = StoreSupport.readExactly(name, key, in, n);
        } catch (RuntimeException e) {
          permits.release();
          throw e;
        }
        offset += n;
        int number = partNumber;
        futures.add(uploads.submit(() -> {
          try {
            return uploadPart(full, uploadId, number, part, crc);
          } catch (RuntimeException e) {
            failed.set(true);
            throw e;
          } finally {
            permits.release();
          }
        }));
      }
      List<CompletedPart> parts = new ArrayList<>(partCount);
      for (Future<CompletedPart> f : futures) {
        parts.add(f.get());
      }
      s3.completeMultipartUpload(b -> b.bucket(config.bucket()).key(full).uploadId(uploadId)
          .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abort(key, full, uploadId, futures);
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": interrupted", e);
    } catch (ExecutionException e) {
      abort(key, full, uploadId, futures);
      Throwable cause = e.getCause();
      if (cause instanceof SdkException sdk) {
        throw translate("put", key, sdk);
      }
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": part upload failed: " + cause, cause);
    } catch (SdkException e) {
      abort(key, full, uploadId, futures);
      throw translate("put", key, e);
    } catch (ObjectStoreException e) {
      abort(key, full, uploadId, futures);
      throw e;
    } catch (RuntimeException e) {
      abort(key, full, uploadId, futures);
      throw unexpected("put", key, e);
    } catch (Error e) {
      abort(key, full, uploadId, futures);
      throw e;
    }
  }

  private CompletedPart uploadPart(String full, String uploadId, int number, byte[] part, boolean crc) {
    return uploadPart(full, uploadId, number, part.length, base64Md5(part, 0, part.length), RequestBody.fromBytes(part), crc);
  }

  private CompletedPart uploadPart(String full, String uploadId, int number, long length, String md5, RequestBody body,
      boolean crc) {
    UploadPartRequest.Builder req = UploadPartRequest.builder()
        .bucket(config.bucket()).key(full).uploadId(uploadId).partNumber(number)
        .contentLength(length)
        .contentMD5(md5);
    if (crc) {
      req.checksumAlgorithm(ChecksumAlgorithm.CRC32);
    }
    UploadPartResponse response = s3.uploadPart(req.build(), body);
    CompletedPart.Builder done = CompletedPart.builder().partNumber(number).eTag(response.eTag());
    if (crc && response.checksumCRC32() != null) {
      done.checksumCRC32(response.checksumCRC32());
    }
    return done.build();
  }

  /** Waits for parts in flight (an abort racing them could leave parts behind), then aborts. */
  private void abort(String key, String full, String uploadId, List<Future<CompletedPart>> futures) {
    for (Future<CompletedPart> f : futures) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (ExecutionException | RuntimeException ignored) {
        // the failure being handled
      }
    }
    try {
      s3.abortMultipartUpload(b -> b.bucket(config.bucket()).key(full).uploadId(uploadId));
      LOG.debug("Aborted multipart upload {} of {} in {}", uploadId, key, name);
    } catch (SdkException e) {
      LOG.warn("Could not abort multipart upload {} of {} in {}; parts may remain until a lifecycle rule removes them",
          uploadId, key, name, e);
    }
  }

  // ---- streaming writes

  private static final int CHUNK = 256 << 10;
  private static final int PARTS_PER_SIZE = 1000;
  private static final long MAX_PART_SIZE = 5L << 30;

  @Override
  public boolean supportsStreamingWrites() {
    return true;
  }

  @Override
  public ObjectWrite openWrite(String key) {
    return new S3Write(key, fullKey(key));
  }

  /**
   * The most bytes the part buffers of this store's streaming writes ({@link #openWrite}) held at
   * once since it was opened: the memory a streaming upload costs, which the design bounds by
   * (writes open + {@code multipartParallelism}) × part size. For tests and metrics.
   */
  public long streamingBufferPeakBytes() {
    return streamingBufferPeak.get();
  }

  /** The bytes the part buffers of streaming writes hold now (0 once every write committed or closed). */
  public long streamingBufferedBytes() {
    return streamingBuffered.get();
  }

  /** Bytes held as 256 KiB chunks (no copy on growth); re-readable for retries; counted in the store's gauge until released. */
  private final class Chunks {
    private final List<byte[]> chunks = new ArrayList<>();
    private long size;
    private boolean released;

    void write(byte[] b, int off, int len) {
      while (len > 0) {
        int at = (int) (size % CHUNK);
        if (at == 0) {
          chunks.add(new byte[CHUNK]);
          long now = streamingBuffered.addAndGet(CHUNK);
          streamingBufferPeak.accumulateAndGet(now, Math::max);
        }
        int n = Math.min(len, CHUNK - at);
        System.arraycopy(b, off, chunks.get(chunks.size() - 1), at, n);
        off += n;
        len -= n;
        size += n;
      }
    }

    long size() {
      return size;
    }

    /** The buffers are no longer needed (uploaded, or the write was given up). */
    void release() {
      if (!released) {
        released = true;
        streamingBuffered.addAndGet(-(long) chunks.size() * CHUNK);
      }
    }

    private int length(int i) {
      return i < chunks.size() - 1 ? CHUNK : (int) (size - (long) (chunks.size() - 1) * CHUNK);
    }

    String md5() {
      return md5(List.of(this));
    }

    RequestBody body() {
      return body(List.of(this), size);
    }

    /** The base64 MD5 of the bytes of {@code parts} one after the other. */
    static String md5(List<Chunks> parts) {
      var md5 = StoreSupport.md5();
      for (Chunks p : parts) {
        for (int i = 0; i < p.chunks.size(); i++) {
          md5.update(p.chunks.get(i), 0, p.length(i));
        }
      }
      return Base64.getEncoder().encodeToString(md5.digest());
    }

    /** The bytes of {@code parts} one after the other ({@code size} of them), re-readable for retries. */
    static RequestBody body(List<Chunks> parts, long size) {
      return RequestBody.fromContentProvider(() -> {
        List<InputStream> streams = new ArrayList<>();
        for (Chunks p : parts) {
          for (int i = 0; i < p.chunks.size(); i++) {
            streams.add(new java.io.ByteArrayInputStream(p.chunks.get(i), 0, p.length(i)));
          }
        }
        return new java.io.SequenceInputStream(java.util.Collections.enumeration(streams));
      }, size, "application/octet-stream");
    }
  }

  /** See the class comment: one part fills while earlier ones upload. */
  private final class S3Write extends ObjectWrite {
    private final String key;
    private final String full;
    private final boolean crc = config.checksumMode() == ChecksumMode.WHEN_SUPPORTED;
    private final List<Future<CompletedPart>> futures = new ArrayList<>();
    private final java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
    /** Full parts held back while the object may still go in one PUT; each holds a permit of streamingParts and of heldParts. */
    private final List<Chunks> held = new ArrayList<>();
    private Chunks current = new Chunks();
    private String uploadId;
    private long size;
    private boolean done;

    S3Write(String key, String full) {
      this.key = key;
      this.full = full;
    }

    private long partLimit() {
      int grown = Math.min(futures.size() / PARTS_PER_SIZE, 10);
      return Math.min(MAX_PART_SIZE, config.partSizeBytes() << grown);
    }

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      Objects.checkFromIndexSize(off, len, b.length);
      if (done) {
        throw new IOException("Cannot write " + key + " in " + name + ": the write is finished");
      }
      while (len > 0) {
        if (current.size() >= partLimit()) {
          if (!holdPart()) {
            sendPart();
          }
        }
        int n = (int) Math.min(len, partLimit() - current.size());
        current.write(b, off, n);
        off += n;
        len -= n;
        size += n;
      }
    }

    /**
     * Holds the full current part back instead of uploading it, if the object may still go in one
     * PUT (no upload started, fewer than {@code ceil(threshold / part size) - 1} parts held) and
     * permits are free without waiting; false otherwise.
     */
    private boolean holdPart() {
      long partsInOnePut = (config.multipartThresholdBytes() + config.partSizeBytes() - 1) / config.partSizeBytes();
      if (uploadId != null || held.size() + 1 >= partsInOnePut) {
        return false;
      }
      if (!heldParts.tryAcquire()) {
        return false;
      }
      if (!streamingParts.tryAcquire()) {
        heldParts.release();
        return false;
      }
      held.add(current);
      current = new Chunks();
      return true;
    }

    /** Releases the parts held back and their permits (sent in one PUT, or the write was given up). */
    private void releaseHeld() {
      for (Chunks part : held) {
        part.release();
        streamingParts.release();
        heldParts.release();
      }
      held.clear();
    }

    private void sendPart() throws IOException {
      Throwable failed = failure.get();
      if (failed != null) {
        throw new IOException("Cannot put " + key + " in " + name + ": a part upload failed: " + failed, failed);
      }
      if (uploadId == null) {
        uploadId = createMultipart(key, full);
        LOG.debug("Streaming {} to {} in a multipart upload, upload {}", key, name, uploadId);
        // the parts held back go first, with the permits they hold
        while (!held.isEmpty()) {
          Chunks part = held.remove(0);
          heldParts.release();
          submitPart(part);
        }
      }
      try {
        streamingParts.acquire();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("Cannot put " + key + " in " + name + ": interrupted");
      }
      Chunks part = current;
      current = new Chunks();
      submitPart(part);
    }

    /** Uploads {@code part} as the next part on the executor; it holds a permit of streamingParts, released when the upload ends. */
    private void submitPart(Chunks part) {
      int number = futures.size() + 1;
      String id = uploadId;
      try {
        futures.add(uploads.submit(() -> {
          try {
            return uploadPart(full, id, number, part.size(), part.md5(), part.body(), crc);
          } catch (RuntimeException | Error e) {
            failure.compareAndSet(null, e);
            throw e;
          } finally {
            part.release();
            streamingParts.release();
          }
        }));
      } catch (RuntimeException e) {
        part.release();
        streamingParts.release();
        throw e;
      }
    }

    @Override
    public long size() {
      return size;
    }

    @Override
    public void commit() {
      if (done) {
        throw new IllegalStateException("Cannot commit " + key + " in " + name + ": the write is already finished");
      }
      if (uploadId == null) {
        done = true;
        List<Chunks> parts = new ArrayList<>(held);
        parts.add(current);
        Chunks body = current;
        current = null;
        try {
          putSingle(key, full, size, Chunks.md5(parts), Chunks.body(parts, size), false);
        } finally {
          body.release();
          releaseHeld();
        }
        return;
      }
      try {
        sendPart();
        List<CompletedPart> parts = new ArrayList<>(futures.size());
        for (Future<CompletedPart> f : futures) {
          parts.add(f.get());
        }
        s3.completeMultipartUpload(b -> b.bucket(config.bucket()).key(full).uploadId(uploadId)
            .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
        done = true;
        current = null;
      } catch (InterruptedException | java.io.InterruptedIOException e) {
        Thread.currentThread().interrupt();
        close();
        throw new ObjectStoreException("Cannot put " + key + " in " + name + ": interrupted", e);
      } catch (ExecutionException e) {
        close();
        Throwable cause = e.getCause();
        if (cause instanceof SdkException sdk) {
          throw translate("put", key, sdk);
        }
        if (cause instanceof ObjectStoreException ose) {
          throw ose;
        }
        throw new ObjectStoreException("Cannot put " + key + " in " + name + ": part upload failed: " + cause, cause);
      } catch (IOException e) {
        close();
        throw new ObjectStoreException(e.getMessage(), e.getCause() == null ? e : e.getCause());
      } catch (SdkException e) {
        close();
        throw translate("put", key, e);
      } catch (ObjectStoreException e) {
        close();
        throw e;
      } catch (RuntimeException e) {
        close();
        throw unexpected("put", key, e);
      }
    }

    @Override
    public void close() {
      if (done) {
        return;
      }
      done = true;
      if (current != null) {
        current.release();
      }
      current = null;
      releaseHeld();
      if (uploadId != null) {
        abort(key, full, uploadId, futures);
      }
    }
  }

  // ---- reads

  @Override
  public InputStream get(String key) {
    String full = fullKey(key);
    GetObjectRequest.Builder req = GetObjectRequest.builder().bucket(config.bucket()).key(full);
    if (config.checksumMode() == ChecksumMode.WHEN_SUPPORTED) {
      req.checksumMode(software.amazon.awssdk.services.s3.model.ChecksumMode.ENABLED);
    }
    try {
      return new AbortingStream(s3.getObject(req.build()), key, name);
    } catch (SdkException e) {
      throw translate("read", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unexpected("read", key, e);
    }
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    StoreSupport.checkRange(key, offset, length);
    String full = fullKey(key);
    if (length == 0) {
      long size = head(key).orElseThrow(() -> notFound("read", key)).size();
      if (offset > size) {
        throw StoreSupport.rangeBeyondEnd(name, key, offset, size);
      }
      return InputStream.nullInputStream();
    }
    long last = offset + length - 1 < 0 ? Long.MAX_VALUE : offset + length - 1;
    try {
      return new AbortingStream(s3.getObject(b -> b.bucket(config.bucket()).key(full)
          .range("bytes=" + offset + "-" + last)), key, name);
    } catch (S3Exception e) {
      if (e.statusCode() == 416) {
        long size = head(key).orElseThrow(() -> notFound("read", key)).size();
        if (offset == size) {
          return InputStream.nullInputStream();
        }
        throw StoreSupport.rangeBeyondEnd(name, key, offset, size);
      }
      throw translate("read", key, e);
    } catch (SdkException e) {
      throw translate("read", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unexpected("read", key, e);
    }
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    String full = fullKey(key);
    try {
      HeadObjectResponse r = s3.headObject(b -> b.bucket(config.bucket()).key(full));
      return Optional.of(new ObjectInfo(key, r.contentLength(), stripQuotes(r.eTag()),
          r.lastModified() == null ? Instant.EPOCH : r.lastModified()));
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        // a HEAD 404 has no body: tell a missing key from a missing bucket once per store
        verifyBucket("head", key);
        return Optional.empty();
      }
      throw translate("head", key, e);
    } catch (SdkException e) {
      throw translate("head", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw unexpected("head", key, e);
    }
  }

  private void verifyBucket(String op, String key) {
    if (bucketVerified) {
      return;
    }
    try {
      s3.headBucket(b -> b.bucket(config.bucket()));
      bucketVerified = true;
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        throw bucketNotFound(op, key);
      }
      throw translate(op, key, e);
    } catch (SdkException e) {
      throw translate(op, key, e);
    }
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    ObjectKeys.validatePrefix(prefix);
    List<ObjectInfo> result = new ArrayList<>();
    try {
      for (var page : s3.listObjectsV2Paginator(b -> b.bucket(config.bucket()).prefix(keyBase + prefix))) {
        for (S3Object o : page.contents()) {
          if (!o.key().startsWith(keyBase)) {
            continue;
          }
          result.add(new ObjectInfo(o.key().substring(keyBase.length()), o.size() == null ? 0 : o.size(),
              stripQuotes(o.eTag()), o.lastModified() == null ? Instant.EPOCH : o.lastModified()));
        }
      }
    } catch (SdkException e) {
      throw translate("list prefix '" + prefix + "' of bucket " + config.bucket(), null, e);
    } catch (RuntimeException e) {
      throw unexpected("list prefix '" + prefix + "' of bucket " + config.bucket(), null, e);
    }
    result.sort((a, b) -> ObjectKeys.ORDER.compare(a.key(), b.key()));
    return result;
  }

  @Override
  public void delete(Collection<String> keys) {
    List<String> fullKeys = keys.stream().map(this::fullKey).toList();
    List<String> failed = new ArrayList<>();
    String firstError = null;
    for (int from = 0; from < fullKeys.size(); from += DELETE_BATCH) {
      List<ObjectIdentifier> batch = fullKeys.subList(from, Math.min(fullKeys.size(), from + DELETE_BATCH)).stream()
          .map(k -> ObjectIdentifier.builder().key(k).build()).toList();
      try {
        DeleteObjectsResponse r = s3.deleteObjects(b -> b.bucket(config.bucket())
            .delete(Delete.builder().objects(batch).quiet(true).build()));
        for (S3Error err : r.errors()) {
          if ("NoSuchKey".equals(err.code())) {
            continue;
          }
          failed.add(err.key().substring(keyBase.length()));
          firstError = firstError == null ? err.code() + ": " + err.message() : firstError;
        }
      } catch (SdkException e) {
        throw translate("delete " + batch.size() + " keys (first " + keys.iterator().next() + ")", null, e);
      }
    }
    if (!failed.isEmpty()) {
      throw new ObjectStoreException("Cannot delete " + failed + " in " + name + ": " + firstError);
    }
  }

  // ---- errors

  private ObjectNotFoundException notFound(String op, String key) {
    return new ObjectNotFoundException("Cannot " + op + " " + key + " in " + name + ": no such object");
  }

  private BucketNotFoundException bucketNotFound(String op, String key) {
    return new BucketNotFoundException("Cannot " + op + (key == null ? "" : " " + key) + " in " + name
        + ": bucket " + config.bucket() + " does not exist. cairn does not create buckets: create it first (e.g. `aws s3 mb s3://"
        + config.bucket() + "`, or the S3-compatible server's console), with versioning on if you can (it lets you restore a "
        + "deleted or edited object)");
  }

  /**
   * Maps an SDK failure to this module's exceptions. {@code op} reads like a verb phrase; {@code
   * key} may be null. SDK messages carry no credentials (the SDK never prints them).
   */
  private ObjectStoreException translate(String op, String key, SdkException e) {
    String what = op + (key == null ? "" : " " + key) + " in " + name;
    if (e instanceof S3Exception s3e) {
      String code = s3e.awsErrorDetails() == null ? null : s3e.awsErrorDetails().errorCode();
      String detail = s3e.awsErrorDetails() == null ? null : s3e.awsErrorDetails().errorMessage();
      int status = s3e.statusCode();
      String reason = "HTTP " + status + (code == null ? "" : " " + code) + (detail == null ? "" : " (" + detail + ")");
      if ("NoSuchBucket".equals(code)) {
        return bucketNotFound(op, key);
      }
      if ("NoSuchKey".equals(code) || (status == 404 && key != null && code == null)) {
        return notFound(op, key);
      }
      if (status == 404) {
        return new ObjectNotFoundException("Cannot " + what + ": " + reason, e);
      }
      if (status == 403 || status == 401 || "InvalidAccessKeyId".equals(code)
          || "SignatureDoesNotMatch".equals(code)) {
        return new AccessDeniedException("Cannot " + what + ": credentials rejected or access denied: " + reason
            + (config.credentials() == null ? " (credentials from the default provider chain)"
                : " (access key id " + config.credentials().accessKeyId() + ")"), e);
      }
      if (status == 503 || status >= 500 || status == 429 || "SlowDown".equals(code)) {
        return new StoreUnavailableException("Cannot " + what + ": server kept failing after "
            + config.maxAttempts() + " attempts: " + reason, e);
      }
      return new ObjectStoreException("Cannot " + what + ": " + reason, e);
    }
    if (e instanceof SdkClientException) {
      return new StoreUnavailableException("Cannot " + what + ": endpoint "
          + (config.endpoint() != null ? config.endpoint() : "of region " + config.region())
          + " unreachable or timing out (up to " + config.maxAttempts() + " attempts): " + rootMessage(e), e);
    }
    return new ObjectStoreException("Cannot " + what + ": " + e.getMessage(), e);
  }

  /** A failure that is not an SDK exception (e.g. thrown by an interceptor). */
  private ObjectStoreException unexpected(String op, String key, RuntimeException e) {
    return new ObjectStoreException("Cannot " + op + (key == null ? "" : " " + key) + " in " + name + ": " + e, e);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
  }

  private static String stripQuotes(String etag) {
    if (etag == null) {
      return "";
    }
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"") ? etag.substring(1, etag.length() - 1) : etag;
  }

  private static String base64Md5(byte[] bytes, int off, int len) {
    var md5 = StoreSupport.md5();
    md5.update(bytes, off, len);
    return Base64.getEncoder().encodeToString(md5.digest());
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(Math.min(millis, 5_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ObjectStoreException("Interrupted while retrying a conditional write", e);
    }
  }

  @Override
  public String describe() {
    return name;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      uploads.shutdownNow();
      try {
        uploads.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      s3.close();
    }
  }

  /**
   * Aborts the HTTP connection if closed before the end, instead of draining a large body; turns
   * the SDK's unchecked read failures into {@link IOException}s naming the key.
   */
  private static final class AbortingStream extends FilterInputStream {
    private final ResponseInputStream<GetObjectResponse> response;
    private final String key;
    private final String store;
    private boolean eof;

    AbortingStream(ResponseInputStream<GetObjectResponse> response, String key, String store) {
      super(response);
      this.response = response;
      this.key = key;
      this.store = store;
    }

    @Override
    public int read() throws IOException {
      try {
        int b = super.read();
        eof |= b < 0;
        return b;
      } catch (SdkException e) {
        throw new IOException("Cannot read " + key + " in " + store + ": " + e.getMessage(), e);
      }
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      try {
        int n = super.read(b, off, len);
        eof |= n < 0;
        return n;
      } catch (SdkException e) {
        // e.g. a checksum mismatch detected by the SDK at the end of the body
        throw new IOException("Cannot read " + key + " in " + store + ": " + e.getMessage(), e);
      }
    }

    @Override
    public void close() throws IOException {
      if (!eof) {
        response.abort();
      }
      super.close();
    }
  }
}
