package io.cairn.objectstore;

import io.cairn.objectstore.S3ObjectStoreConfig.ChecksumMode;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
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
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadRequest;
import software.amazon.awssdk.services.s3.model.ServerSideEncryption;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * The multipart uploads of one {@link S3ObjectStore}: the S3 protocol (initiate, upload part,
 * complete, abort), the upload of an object of known length in parts, and the part pipeline its
 * streaming writes ({@link S3StreamingWrite}) share.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Owns the executor parts upload on ({@code multipartParallelism} daemon threads named
 *       {@code cairn-s3-upload-<pool>-<n>}) and the store-wide permits and buffer gauges of the
 *       streaming writes. It uses, and does not own, the store's {@link S3Client} (thread-safe)
 *       and error translation ({@link S3Errors}); the store closes this uploader before the
 *       client.
 *   <li>Threading: every method may be called from any thread; the state shared between calls is
 *       the executor, two semaphores and two atomic counters, so there is no lock and no lock
 *       order. A caller's thread reads the parts; the executor only sends them.
 *   <li>{@link #put(String, String, InputStream, long)}: the part size is
 *       {@code partSizeBytes}, grown so the object needs at most 10,000 parts (S3's limit). Up to
 *       {@code multipartParallelism} parts of one upload are in memory or in flight at once (a
 *       semaphore per upload bounds the memory). Any failure waits for the parts in flight, then
 *       aborts the upload, so no object becomes visible and no parts are left behind.
 *   <li>Streaming writes: a part in flight or held back, across all streaming writes of the store,
 *       holds one of {@code multipartParallelism} permits ({@link #acquirePart}, {@link
 *       #tryHoldPart}); a part held back also holds one of {@code multipartParallelism - 1}
 *       held-part permits, so at least one permit is always free or in an upload that ends on its
 *       own (see {@link S3StreamingWrite}).
 *   <li>Abort first waits for the parts already submitted: an abort racing an upload of a part
 *       could leave that part behind. A failed abort is logged (WARN) and not thrown: the failure
 *       being handled is the one the caller sees.
 *   <li>Messages are the store's: they name the store and the caller's key, never credentials.
 *       Logs go to the {@link S3ObjectStore} logger, which owns these uploads' messages.
 * </ul>
 */
final class S3MultipartUploader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(S3ObjectStore.class);
  private static final long MAX_PARTS = 10_000;
  private static final AtomicInteger POOLS = new AtomicInteger();

  private final S3ObjectStoreConfig config;
  private final S3Client s3;
  private final String name;
  private final S3Errors errors;
  private final ExecutorService uploads;
  private final Semaphore streamingParts;
  /** Of {@link #streamingParts}, how many may be held back by writes that may still go in one PUT: one fewer, see {@link S3StreamingWrite}. */
  private final Semaphore heldParts;
  /** Bytes streaming writes hold in part buffers now, and the most they ever held (see {@link #streamingBufferPeakBytes}). */
  private final AtomicLong streamingBuffered = new AtomicLong();
  private final AtomicLong streamingBufferPeak = new AtomicLong();

  /** Uploads with {@code s3} (owned by the caller) for the store named {@code name}; starts the part executor. */
  S3MultipartUploader(S3ObjectStoreConfig config, S3Client s3, String name, S3Errors errors) {
    this.config = Objects.requireNonNull(config, "config");
    this.s3 = Objects.requireNonNull(s3, "s3");
    this.name = Objects.requireNonNull(name, "name");
    this.errors = Objects.requireNonNull(errors, "errors");
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

  S3ObjectStoreConfig config() {
    return config;
  }

  String name() {
    return name;
  }

  S3Errors errors() {
    return errors;
  }

  // ---- the protocol

  /**
   * Initiates a multipart upload of {@code full} (the bucket key of the caller's {@code key}) and
   * returns its upload id. Throws the store's exception for {@code put key} on failure.
   */
  String create(String key, String full) {
    CreateMultipartUploadRequest.Builder create = CreateMultipartUploadRequest.builder()
        .bucket(config.bucket()).key(full);
    if (config.checksumMode() == ChecksumMode.WHEN_SUPPORTED) {
      create.checksumAlgorithm(ChecksumAlgorithm.CRC32);
    }
    encryption(create);
    try {
      return s3.createMultipartUpload(create.build()).uploadId();
    } catch (SdkException e) {
      throw errors.translate("put", key, e);
    } catch (RuntimeException e) {
      throw errors.unexpected("put", key, e);
    }
  }

  private void encryption(CreateMultipartUploadRequest.Builder req) {
    switch (config.serverSideEncryption()) {
      case S3 -> req.serverSideEncryption(ServerSideEncryption.AES256);
      case KMS -> req.serverSideEncryption(ServerSideEncryption.AWS_KMS).ssekmsKeyId(config.kmsKeyId());
      case NONE -> { }
    }
  }

  private CompletedPart uploadPart(String full, String uploadId, int number, byte[] part, boolean crc) {
    return uploadPart(full, uploadId, number, part.length, StoreSupport.base64Md5(part, 0, part.length),
        RequestBody.fromBytes(part), crc);
  }

  /**
   * Uploads part {@code number} ({@code length} bytes of {@code body}, whose base64 MD5 is {@code
   * md5}) on the caller's thread; with {@code crc} the SDK adds a CRC32 the server checks. Throws
   * the SDK's exception untranslated.
   */
  CompletedPart uploadPart(String full, String uploadId, int number, long length, String md5, RequestBody body,
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

  /** Completes the upload with {@code parts} (in part order): the object becomes visible. Throws the SDK's exception untranslated. */
  void complete(String full, String uploadId, List<CompletedPart> parts) {
    s3.completeMultipartUpload(b -> b.bucket(config.bucket()).key(full).uploadId(uploadId)
        .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
  }

  /** Waits for parts in flight (an abort racing them could leave parts behind), then aborts. Never throws. */
  void abort(String key, String full, String uploadId, List<Future<CompletedPart>> futures) {
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

  /** Runs {@code part} on the part executor. */
  <T> Future<T> submit(Callable<T> part) {
    return uploads.submit(part);
  }

  // ---- an object of known length

  /**
   * Uploads the {@code length} bytes of {@code in} as {@code full} in a multipart upload (see the
   * class comment); the object is visible when this returns. On any failure the upload is aborted
   * and the store's exception for {@code put key} thrown.
   */
  void put(String key, String full, InputStream in, long length) {
    boolean crc = config.checksumMode() == ChecksumMode.WHEN_SUPPORTED;
    String uploadId = create(key, full);
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
      complete(full, uploadId, parts);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      abort(key, full, uploadId, futures);
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": interrupted", e);
    } catch (ExecutionException e) {
      abort(key, full, uploadId, futures);
      Throwable cause = e.getCause();
      if (cause instanceof SdkException sdk) {
        throw errors.translate("put", key, sdk);
      }
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": part upload failed: " + cause, cause);
    } catch (SdkException e) {
      abort(key, full, uploadId, futures);
      throw errors.translate("put", key, e);
    } catch (ObjectStoreException e) {
      abort(key, full, uploadId, futures);
      throw e;
    } catch (RuntimeException e) {
      abort(key, full, uploadId, futures);
      throw errors.unexpected("put", key, e);
    } catch (Error e) {
      abort(key, full, uploadId, futures);
      throw e;
    }
  }

  // ---- the part permits and buffers of streaming writes

  /** Waits for a permit for a part to upload; released by {@link #releasePart}. */
  void acquirePart() throws InterruptedException {
    streamingParts.acquire();
  }

  /** Returns the permit of a part whose upload ended (or never started). */
  void releasePart() {
    streamingParts.release();
  }

  /**
   * Takes, without waiting, the two permits of a part held back (a held-part permit and a part
   * permit); false, holding neither, if either is taken.
   */
  boolean tryHoldPart() {
    if (!heldParts.tryAcquire()) {
      return false;
    }
    if (!streamingParts.tryAcquire()) {
      heldParts.release();
      return false;
    }
    return true;
  }

  /** A held part starts uploading: it returns its held-part permit and keeps its part permit. */
  void uploadHeldPart() {
    heldParts.release();
  }

  /** Returns both permits of a held part that will not be uploaded in parts. */
  void releaseHeldPart() {
    streamingParts.release();
    heldParts.release();
  }

  /** Counts {@code bytes} newly allocated for part buffers. */
  void buffersAllocated(long bytes) {
    long now = streamingBuffered.addAndGet(bytes);
    streamingBufferPeak.accumulateAndGet(now, Math::max);
  }

  /** Counts {@code bytes} of part buffers no longer needed. */
  void buffersReleased(long bytes) {
    streamingBuffered.addAndGet(-bytes);
  }

  /** See {@link S3ObjectStore#streamingBufferPeakBytes()}. */
  long streamingBufferPeakBytes() {
    return streamingBufferPeak.get();
  }

  /** See {@link S3ObjectStore#streamingBufferedBytes()}. */
  long streamingBufferedBytes() {
    return streamingBuffered.get();
  }

  /** Stops the part executor (interrupting parts in flight) and waits up to 10 s for it. */
  @Override
  public void close() {
    uploads.shutdownNow();
    try {
      uploads.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
