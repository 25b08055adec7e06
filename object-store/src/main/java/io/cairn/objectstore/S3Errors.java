package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.AccessDeniedException;
import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import java.util.Objects;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Maps the failures of one {@link S3ObjectStore}'s SDK calls to this module's exceptions, with
 * messages "Cannot &lt;op&gt; &lt;key&gt; in &lt;store&gt;: &lt;reason&gt;" naming the bucket,
 * prefix, endpoint and key. Shared by the store and its {@link S3MultipartUploader}. Stateless
 * apart from the store's name and configuration: thread-safe. Credentials never appear in a
 * message (the SDK never prints them; only the access key id is named).
 */
final class S3Errors {
  private final S3ObjectStoreConfig config;
  private final String name;

  S3Errors(S3ObjectStoreConfig config, String name) {
    this.config = Objects.requireNonNull(config, "config");
    this.name = Objects.requireNonNull(name, "name");
  }

  ObjectNotFoundException notFound(String op, String key) {
    return new ObjectNotFoundException("Cannot " + op + " " + key + " in " + name + ": no such object");
  }

  BucketNotFoundException bucketNotFound(String op, String key) {
    return new BucketNotFoundException("Cannot " + op + (key == null ? "" : " " + key) + " in " + name
        + ": bucket " + config.bucket() + " does not exist. cairn does not create buckets: create it first (e.g. `aws s3 mb s3://"
        + config.bucket() + "`, or the S3-compatible server's console), with versioning on if you can (it lets you restore a "
        + "deleted or edited object)");
  }

  /**
   * Maps an SDK failure to this module's exceptions. {@code op} reads like a verb phrase; {@code
   * key} may be null. SDK messages carry no credentials (the SDK never prints them).
   */
  ObjectStoreException translate(String op, String key, SdkException e) {
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
  ObjectStoreException unexpected(String op, String key, RuntimeException e) {
    return new ObjectStoreException("Cannot " + op + (key == null ? "" : " " + key) + " in " + name + ": " + e, e);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t + ")";
  }
}
