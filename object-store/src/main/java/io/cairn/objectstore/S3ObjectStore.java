package io.cairn.objectstore;

import io.cairn.objectstore.S3ObjectStoreConfig.ChecksumMode;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
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

/**
 * An {@link ObjectStore} on S3 or an S3-compatible server, through the AWS SDK for Java v2
 * synchronous client. With {@link S3MultipartUploader}, {@link S3StreamingWrite} and {@link
 * S3Errors}, the only product code in cairn that talks to the SDK (the testkit's S3 server also
 * uses it).
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Owns the SDK client (its HTTP connection pool, retry strategy and time bounds) and the
 *       store contract: keys map to {@code <prefix>/<key>} in the bucket; reads, listing, deletes,
 *       single PUTs and conditional writes are here. Multipart uploads and streaming writes are
 *       delegated to the store's {@link S3MultipartUploader} (which owns the part executor) and
 *       one {@link S3StreamingWrite} per {@link #openWrite}; {@link #close()} closes the uploader,
 *       then the client.
 *   <li>Threading: every method may be called from any thread at once (the SDK client is
 *       thread-safe; the store's own state is final fields, atomics and a volatile flag); there is
 *       no lock. An {@link ObjectWrite} it returns is for one producer thread.
 *   <li>Objects below {@link S3ObjectStoreConfig#multipartThresholdBytes()} go in one PUT whose
 *       body is in memory (so the SDK can retry it); larger ones in a multipart upload whose
 *       failure aborts it, so no object becomes visible and no parts are left behind (see {@link
 *       S3MultipartUploader}). A streaming write of unknown length goes in one PUT if it ends
 *       within the threshold rounded up to whole parts, else in a multipart upload, with bounded
 *       part memory across the store's writes (see {@link S3StreamingWrite}).
 *   <li>Every PUT and part carries a Content-MD5 the server checks; with
 *       {@link ChecksumMode#WHEN_SUPPORTED} the SDK also adds CRC32 checksums and validates
 *       whole-object reads.
 *   <li>{@link #putIfAbsent} is a PUT with {@code If-None-Match: *}: 412 means another writer
 *       won; 409 (a concurrent conditional write in progress) is retried.
 *   <li>Retries are the SDK's standard strategy (exponential backoff with full jitter, throttling
 *       backoff, a retry-quota circuit breaker) bounded by {@code maxAttempts}; each attempt is
 *       bounded by {@code attemptTimeout} and each call with its retries by {@code
 *       apiCallTimeout}; 4xx other than throttling are never retried.
 *   <li>Error messages name the bucket, prefix, endpoint and key ({@link S3Errors}); credentials
 *       never appear in them or in logs.
 * </ul>
 */
public final class S3ObjectStore implements ObjectStore {
  private static final int DELETE_BATCH = 1000;

  private final S3ObjectStoreConfig config;
  private final S3Client s3;
  private final String name;
  private final String keyBase;
  private final S3Errors errors;
  /** The multipart uploads and streaming writes of this store; closed before {@link #s3}. */
  private final S3MultipartUploader multipart;
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
    this.errors = new S3Errors(config, name);
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
    this.multipart = new S3MultipartUploader(config, s3, name, errors);
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
    putSingle(key, full, bytes.length, StoreSupport.base64Md5(bytes, 0, bytes.length), RequestBody.fromBytes(bytes), ifAbsent);
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
      throw errors.translate(ifAbsent ? "create" : "put", key, e);
    } catch (SdkException e) {
      throw errors.translate(ifAbsent ? "create" : "put", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw errors.unexpected(ifAbsent ? "create" : "put", key, e);
    }
  }

  private void encryption(PutObjectRequest.Builder req) {
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
      multipart.put(key, full, in, length);
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
        multipart.put(key, full, in, size);
      }
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": cannot read file " + file + ": " + e, e);
    }
  }

  // ---- streaming writes

  @Override
  public boolean supportsStreamingWrites() {
    return true;
  }

  /** A {@link S3StreamingWrite}: one PUT at commit if the object ends within the multipart threshold, else a multipart upload. */
  @Override
  public ObjectWrite openWrite(String key) {
    String full = fullKey(key);
    return new S3StreamingWrite(multipart, key, full, (length, md5, body) -> putSingle(key, full, length, md5, body, false));
  }

  /**
   * The most bytes the part buffers of this store's streaming writes ({@link #openWrite}) held at
   * once since it was opened: the memory a streaming upload costs, which the design bounds by
   * (writes open + {@code multipartParallelism}) × part size. For tests and metrics.
   */
  public long streamingBufferPeakBytes() {
    return multipart.streamingBufferPeakBytes();
  }

  /** The bytes the part buffers of streaming writes hold now (0 once every write committed or closed). */
  public long streamingBufferedBytes() {
    return multipart.streamingBufferedBytes();
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
      throw errors.translate("read", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw errors.unexpected("read", key, e);
    }
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    StoreSupport.checkRange(key, offset, length);
    String full = fullKey(key);
    if (length == 0) {
      long size = head(key).orElseThrow(() -> errors.notFound("read", key)).size();
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
        long size = head(key).orElseThrow(() -> errors.notFound("read", key)).size();
        if (offset == size) {
          return InputStream.nullInputStream();
        }
        throw StoreSupport.rangeBeyondEnd(name, key, offset, size);
      }
      throw errors.translate("read", key, e);
    } catch (SdkException e) {
      throw errors.translate("read", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw errors.unexpected("read", key, e);
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
      throw errors.translate("head", key, e);
    } catch (SdkException e) {
      throw errors.translate("head", key, e);
    } catch (ObjectStoreException e) {
      throw e;
    } catch (RuntimeException e) {
      throw errors.unexpected("head", key, e);
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
        throw errors.bucketNotFound(op, key);
      }
      throw errors.translate(op, key, e);
    } catch (SdkException e) {
      throw errors.translate(op, key, e);
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
      throw errors.translate("list prefix '" + prefix + "' of bucket " + config.bucket(), null, e);
    } catch (RuntimeException e) {
      throw errors.unexpected("list prefix '" + prefix + "' of bucket " + config.bucket(), null, e);
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
        throw errors.translate("delete " + batch.size() + " keys (first " + keys.iterator().next() + ")", null, e);
      }
    }
    if (!failed.isEmpty()) {
      throw new ObjectStoreException("Cannot delete " + failed + " in " + name + ": " + firstError);
    }
  }

  private static String stripQuotes(String etag) {
    if (etag == null) {
      return "";
    }
    return etag.length() >= 2 && etag.startsWith("\"") && etag.endsWith("\"") ? etag.substring(1, etag.length() - 1) : etag;
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
      multipart.close();
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