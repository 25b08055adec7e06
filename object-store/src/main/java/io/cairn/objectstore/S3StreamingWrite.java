package io.cairn.objectstore;

import io.cairn.objectstore.S3ObjectStoreConfig.ChecksumMode;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.SequenceInputStream;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * A streaming write of one object of unknown length to S3 ({@link S3ObjectStore#openWrite}): one
 * part fills while earlier ones upload.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Owns the part buffers of this write (256 KiB chunks, counted in the store's buffer gauge
 *       until released) and, once it starts, its multipart upload; the upload protocol, the part
 *       executor and the store-wide part permits belong to the store's {@link
 *       S3MultipartUploader}.
 *   <li>Threading: one producer thread calls {@code write}, {@code commit} and {@code close} (the
 *       {@link ObjectWrite} contract); part uploads run on the uploader's executor and report a
 *       failure only through {@link #failure}, which the producer reads.
 *   <li>An object that ends within the multipart threshold rounded up to whole parts
 *       ({@code ceil(multipartThresholdBytes / partSizeBytes)} parts: 2, so 16 MiB, with the
 *       defaults) goes in one PUT at commit, as {@link S3ObjectStore#put(String, InputStream, long)}
 *       sends an object below the threshold: its full parts are held back until then, each taking
 *       a part permit as if it were in flight (without waiting: if none is free, or the object
 *       outgrows the threshold, the multipart upload starts). A larger object goes in a multipart
 *       upload: the held parts are uploaded first, then each full part on the executor while the
 *       next fills.
 *   <li>Parts in flight or held across all streaming writes of the store are bounded by {@code
 *       multipartParallelism} (a store-wide semaphore), so their memory is at most {@code
 *       (multipartParallelism + open writes) * partSizeBytes}. Held parts take at most {@code
 *       multipartParallelism - 1} of its permits, so at least one is always free or in an upload
 *       that finishes on its own: a write waiting for a permit never waits on a writer that holds
 *       parts back (which may itself wait on its producer).
 *   <li>The part size doubles every 1,000 parts (S3 allows 10,000), so an object of unknown length
 *       is not capped at 10,000 parts.
 *   <li>Commit waits for the parts and completes the upload; a failure, or a close without commit,
 *       releases the buffers and permits held, waits for the parts in flight and aborts the upload:
 *       nothing becomes visible and no parts are left behind.
 * </ul>
 */
final class S3StreamingWrite extends ObjectWrite {
  private static final Logger LOG = LoggerFactory.getLogger(S3ObjectStore.class);
  private static final int CHUNK = 256 << 10;
  private static final int PARTS_PER_SIZE = 1000;
  private static final long MAX_PART_SIZE = 5L << 30;

  /** The store's single PUT of an object whose bytes are all in memory. */
  @FunctionalInterface
  interface OnePut {
    /** Puts {@code length} bytes of {@code body}, whose base64 MD5 is {@code md5}, as the object. */
    void put(long length, String md5, RequestBody body);
  }

  private final S3MultipartUploader uploader;
  private final S3ObjectStoreConfig config;
  private final String name;
  private final S3Errors errors;
  private final OnePut onePut;
  private final String key;
  private final String full;
  private final boolean crc;
  private final List<Future<CompletedPart>> futures = new ArrayList<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  /** Full parts held back while the object may still go in one PUT; each holds a part permit and a held-part permit. */
  private final List<Chunks> held = new ArrayList<>();
  private Chunks current;
  private String uploadId;
  private long size;
  private boolean done;

  /** A write of the caller's {@code key}, bucket key {@code full}; an object that fits goes in {@code onePut}. */
  S3StreamingWrite(S3MultipartUploader uploader, String key, String full, OnePut onePut) {
    this.uploader = Objects.requireNonNull(uploader, "uploader");
    this.config = uploader.config();
    this.name = uploader.name();
    this.errors = uploader.errors();
    this.onePut = Objects.requireNonNull(onePut, "onePut");
    this.key = key;
    this.full = full;
    this.crc = config.checksumMode() == ChecksumMode.WHEN_SUPPORTED;
    this.current = new Chunks(uploader);
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
    if (!uploader.tryHoldPart()) {
      return false;
    }
    held.add(current);
    current = new Chunks(uploader);
    return true;
  }

  /** Releases the parts held back and their permits (sent in one PUT, or the write was given up). */
  private void releaseHeld() {
    for (Chunks part : held) {
      part.release();
      uploader.releaseHeldPart();
    }
    held.clear();
  }

  private void sendPart() throws IOException {
    Throwable failed = failure.get();
    if (failed != null) {
      throw new IOException("Cannot put " + key + " in " + name + ": a part upload failed: " + failed, failed);
    }
    if (uploadId == null) {
      uploadId = uploader.create(key, full);
      LOG.debug("Streaming {} to {} in a multipart upload, upload {}", key, name, uploadId);
      // the parts held back go first, with the permits they hold
      while (!held.isEmpty()) {
        Chunks part = held.remove(0);
        uploader.uploadHeldPart();
        submitPart(part);
      }
    }
    try {
      uploader.acquirePart();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Cannot put " + key + " in " + name + ": interrupted");
    }
    Chunks part = current;
    current = new Chunks(uploader);
    submitPart(part);
  }

  /** Uploads {@code part} as the next part on the executor; it holds a part permit, released when the upload ends. */
  private void submitPart(Chunks part) {
    int number = futures.size() + 1;
    String id = uploadId;
    try {
      futures.add(uploader.submit(() -> {
        try {
          return uploader.uploadPart(full, id, number, part.size(), part.md5(), part.body(), crc);
        } catch (RuntimeException | Error e) {
          failure.compareAndSet(null, e);
          throw e;
        } finally {
          part.release();
          uploader.releasePart();
        }
      }));
    } catch (RuntimeException e) {
      part.release();
      uploader.releasePart();
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
        onePut.put(size, Chunks.md5(parts), Chunks.body(parts, size));
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
      uploader.complete(full, uploadId, parts);
      done = true;
      current = null;
    } catch (InterruptedException | InterruptedIOException e) {
      Thread.currentThread().interrupt();
      close();
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": interrupted", e);
    } catch (ExecutionException e) {
      close();
      Throwable cause = e.getCause();
      if (cause instanceof SdkException sdk) {
        throw errors.translate("put", key, sdk);
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
      throw errors.translate("put", key, e);
    } catch (ObjectStoreException e) {
      close();
      throw e;
    } catch (RuntimeException e) {
      close();
      throw errors.unexpected("put", key, e);
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
      uploader.abort(key, full, uploadId, futures);
    }
  }

  /** Bytes held as 256 KiB chunks (no copy on growth); re-readable for retries; counted in the store's gauge until released. */
  private static final class Chunks {
    private final S3MultipartUploader gauge;
    private final List<byte[]> chunks = new ArrayList<>();
    private long size;
    private boolean released;

    Chunks(S3MultipartUploader gauge) {
      this.gauge = gauge;
    }

    void write(byte[] b, int off, int len) {
      while (len > 0) {
        int at = (int) (size % CHUNK);
        if (at == 0) {
          chunks.add(new byte[CHUNK]);
          gauge.buffersAllocated(CHUNK);
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
        gauge.buffersReleased((long) chunks.size() * CHUNK);
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
            streams.add(new ByteArrayInputStream(p.chunks.get(i), 0, p.length(i)));
          }
        }
        return new SequenceInputStream(Collections.enumeration(streams));
      }, size, "application/octet-stream");
    }
  }
}
