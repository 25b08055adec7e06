package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.ObjectStoreConfigException;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Configuration of an {@link S3ObjectStore}. Build with {@link #builder(String)} or from dotted
 * kebab-case properties with {@link #fromProperties(String, Map)} (keys in {@link Keys}).
 * Validated eagerly; messages name the offending key. {@link #toString()} never shows the secret.
 *
 * @param bucket the bucket (must exist)
 * @param prefix key prefix inside the bucket, without leading or trailing '/'; "" for none
 * @param endpoint endpoint override for S3-compatible servers (MinIO, R2, Ceph, s3proxy), or
 *     null for AWS
 * @param region signing region; S3-compatible servers usually accept "us-east-1"
 * @param pathStyleAccess address the bucket in the path ({@code http://host/bucket/key}) instead
 *     of the host name; most S3-compatible servers need it
 * @param credentials a static key pair, or null for the SDK's default provider chain
 *     (environment, system properties, profile, container and instance roles)
 * @param checksumMode when the SDK adds and validates flexible (CRC) checksums: WHEN_SUPPORTED
 *     (AWS default) or WHEN_REQUIRED (for servers that reject trailer checksums). Independently,
 *     every upload carries a Content-MD5 the server verifies.
 * @param multipartThresholdBytes objects of at least this size are uploaded in parts; a streaming
 *     write ({@code S3ObjectStore.openWrite}) of unknown length goes in one PUT if it ends within
 *     this size rounded up to whole parts
 * @param partSizeBytes size of each part (5 MiB, S3's minimum, to 1 GiB); grown automatically
 *     when an object would need more than 10,000 parts
 * @param multipartParallelism parts uploaded at once per object; also bounds the memory of one
 *     upload to {@code multipartParallelism * partSizeBytes}
 * @param serverSideEncryption NONE, S3 (SSE-S3, AES256) or KMS (SSE-KMS)
 * @param kmsKeyId the KMS key for SSE-KMS, or null for the account's default key
 * @param maxAttempts attempts per request, including the first (retries use exponential backoff
 *     with full jitter for throttling, 5xx, I/O errors and timeouts)
 * @param baseRetryDelay base delay of the backoff
 * @param maxRetryDelay cap of one backoff delay
 * @param connectTimeout TCP connect timeout
 * @param attemptTimeout timeout of one HTTP attempt (default 10 s; also the socket read timeout)
 * @param maxConnections HTTP connection pool size
 * @param apiCallTimeout bound on one call with all its retries (default 30 s): an endpoint that
 *     accepts connections and never answers fails within it. Raise both for very slow links (one
 *     part of a multipart upload must fit in one attempt)
 */
public record S3ObjectStoreConfig(
    String bucket,
    String prefix,
    URI endpoint,
    String region,
    boolean pathStyleAccess,
    Credentials credentials,
    ChecksumMode checksumMode,
    long multipartThresholdBytes,
    long partSizeBytes,
    int multipartParallelism,
    ServerSideEncryption serverSideEncryption,
    String kmsKeyId,
    int maxAttempts,
    Duration baseRetryDelay,
    Duration maxRetryDelay,
    Duration connectTimeout,
    Duration attemptTimeout,
    int maxConnections,
    Duration apiCallTimeout) {

  public static final long MIN_PART_SIZE = 5L << 20;
  public static final long DEFAULT_MULTIPART_THRESHOLD = 16L << 20;
  public static final long DEFAULT_PART_SIZE = 8L << 20;
  public static final int DEFAULT_PARALLELISM = 4;
  public static final int DEFAULT_MAX_ATTEMPTS = 4;
  public static final String DEFAULT_REGION = "us-east-1";

  /** When flexible checksums are computed and validated. */
  public enum ChecksumMode { WHEN_SUPPORTED, WHEN_REQUIRED }

  /** Server-side encryption of written objects. */
  public enum ServerSideEncryption { NONE, S3, KMS }

  /** A static access key pair. {@link #toString()} hides the secret. */
  public record Credentials(String accessKeyId, String secretAccessKey) {
    public Credentials {
      if (accessKeyId == null || accessKeyId.isBlank()) {
        throw new ObjectStoreConfigException("Invalid S3 credentials: " + Keys.ACCESS_KEY_ID + " is empty");
      }
      if (secretAccessKey == null || secretAccessKey.isEmpty()) {
        throw new ObjectStoreConfigException("Invalid S3 credentials: " + Keys.SECRET_ACCESS_KEY + " is empty");
      }
    }

    @Override
    public String toString() {
      return "Credentials[accessKeyId=" + accessKeyId + ", secretAccessKey=****]";
    }
  }

  /** Property keys accepted by {@link #fromProperties} and as URI query parameters. */
  public static final class Keys {
    public static final String ENDPOINT = "s3.endpoint";
    public static final String REGION = "s3.region";
    public static final String PATH_STYLE = "s3.path-style-access";
    public static final String ACCESS_KEY_ID = "s3.access-key-id";
    public static final String SECRET_ACCESS_KEY = "s3.secret-access-key";
    public static final String CHECKSUM_MODE = "s3.checksum-mode";
    public static final String MULTIPART_THRESHOLD = "s3.multipart.threshold-bytes";
    public static final String PART_SIZE = "s3.multipart.part-size-bytes";
    public static final String PARALLELISM = "s3.multipart.parallelism";
    public static final String SSE = "s3.sse";
    public static final String SSE_KMS_KEY_ID = "s3.sse.kms-key-id";
    public static final String MAX_ATTEMPTS = "s3.retry.max-attempts";
    public static final String BASE_RETRY_DELAY_MS = "s3.retry.base-delay-ms";
    public static final String MAX_RETRY_DELAY_MS = "s3.retry.max-delay-ms";
    public static final String CONNECT_TIMEOUT_MS = "s3.connect-timeout-ms";
    public static final String ATTEMPT_TIMEOUT_MS = "s3.attempt-timeout-ms";
    public static final String MAX_CONNECTIONS = "s3.max-connections";
    public static final String API_CALL_TIMEOUT_MS = "s3.api-call-timeout-ms";

    static final Set<String> ALL = Set.of(ENDPOINT, REGION, PATH_STYLE, ACCESS_KEY_ID, SECRET_ACCESS_KEY,
        CHECKSUM_MODE, MULTIPART_THRESHOLD, PART_SIZE, PARALLELISM, SSE, SSE_KMS_KEY_ID, MAX_ATTEMPTS,
        BASE_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS, CONNECT_TIMEOUT_MS, ATTEMPT_TIMEOUT_MS, MAX_CONNECTIONS, API_CALL_TIMEOUT_MS);

    private Keys() {}
  }

  public S3ObjectStoreConfig {
    if (bucket == null || !bucket.matches("[a-z0-9][a-z0-9.\\-_]{2,254}")) {
      throw new ObjectStoreConfigException("Invalid S3 bucket name '" + bucket
          + "': expected 3-255 characters of lower-case letters, digits, '.', '-' or '_'");
    }
    prefix = prefix == null ? "" : prefix;
    if (prefix.startsWith("/") || prefix.endsWith("/") || prefix.contains("//")) {
      throw new ObjectStoreConfigException(
          "Invalid key prefix '" + prefix + "' for bucket " + bucket + ": no leading, trailing or double '/'");
    }
    if (!prefix.isEmpty()) {
      ObjectKeys.validate(prefix);
    }
    if (endpoint != null) {
      if (endpoint.getUserInfo() != null) {
        throw new ObjectStoreConfigException("Invalid " + Keys.ENDPOINT + " for bucket " + bucket
            + ": the endpoint must not carry credentials; use " + Keys.ACCESS_KEY_ID + "/" + Keys.SECRET_ACCESS_KEY);
      }
      String scheme = endpoint.getScheme();
      if (scheme == null || !(scheme.equals("http") || scheme.equals("https")) || endpoint.getHost() == null) {
        throw new ObjectStoreConfigException(
            "Invalid " + Keys.ENDPOINT + " '" + endpoint + "': expected http(s)://host[:port]");
      }
    }
    region = region == null || region.isBlank() ? DEFAULT_REGION : region;
    checksumMode = checksumMode == null ? ChecksumMode.WHEN_SUPPORTED : checksumMode;
    serverSideEncryption = serverSideEncryption == null ? ServerSideEncryption.NONE : serverSideEncryption;
    if (partSizeBytes < MIN_PART_SIZE || partSizeBytes > (1L << 30)) {
      throw new ObjectStoreConfigException("Invalid " + Keys.PART_SIZE + " " + partSizeBytes
          + ": must be between 5 MiB (" + MIN_PART_SIZE + ") and 1 GiB (parts are buffered in memory)");
    }
    if (multipartThresholdBytes < partSizeBytes) {
      throw new ObjectStoreConfigException("Invalid " + Keys.MULTIPART_THRESHOLD + " " + multipartThresholdBytes
          + ": must be at least " + Keys.PART_SIZE + " (" + partSizeBytes + ")");
    }
    requirePositive(Keys.PARALLELISM, multipartParallelism);
    requirePositive(Keys.MAX_ATTEMPTS, maxAttempts);
    requirePositive(Keys.MAX_CONNECTIONS, maxConnections);
    baseRetryDelay = requirePositive(Keys.BASE_RETRY_DELAY_MS, baseRetryDelay, Duration.ofMillis(100));
    maxRetryDelay = requirePositive(Keys.MAX_RETRY_DELAY_MS, maxRetryDelay, Duration.ofSeconds(5));
    connectTimeout = requirePositive(Keys.CONNECT_TIMEOUT_MS, connectTimeout, Duration.ofSeconds(5));
    attemptTimeout = requirePositive(Keys.ATTEMPT_TIMEOUT_MS, attemptTimeout, Duration.ofSeconds(10));
    apiCallTimeout = requirePositive(Keys.API_CALL_TIMEOUT_MS, apiCallTimeout, Duration.ofSeconds(30));
    if (apiCallTimeout.compareTo(attemptTimeout) < 0) {
      throw new ObjectStoreConfigException("Invalid " + Keys.API_CALL_TIMEOUT_MS + " " + apiCallTimeout.toMillis()
          + ": must be at least " + Keys.ATTEMPT_TIMEOUT_MS + " (" + attemptTimeout.toMillis() + ")");
    }
    if (serverSideEncryption != ServerSideEncryption.KMS && kmsKeyId != null) {
      throw new ObjectStoreConfigException(
          "Invalid " + Keys.SSE_KMS_KEY_ID + ": set only with " + Keys.SSE + "=kms, not " + serverSideEncryption);
    }
  }

  private static void requirePositive(String key, int value) {
    if (value < 1) {
      throw new ObjectStoreConfigException("Invalid " + key + " " + value + ": must be at least 1");
    }
  }

  private static Duration requirePositive(String key, Duration value, Duration dflt) {
    if (value == null) {
      return dflt;
    }
    if (value.isNegative() || value.isZero()) {
      throw new ObjectStoreConfigException("Invalid " + key + " " + value.toMillis() + ": must be positive");
    }
    return value;
  }

  public static Builder builder(String bucket) {
    return new Builder(bucket);
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    Builder b = new Builder(bucket);
    b.prefix = prefix;
    b.endpoint = endpoint;
    b.region = region;
    b.pathStyleAccess = pathStyleAccess;
    b.credentials = credentials;
    b.checksumMode = checksumMode;
    b.multipartThresholdBytes = multipartThresholdBytes;
    b.partSizeBytes = partSizeBytes;
    b.multipartParallelism = multipartParallelism;
    b.serverSideEncryption = serverSideEncryption;
    b.kmsKeyId = kmsKeyId;
    b.maxAttempts = maxAttempts;
    b.baseRetryDelay = baseRetryDelay;
    b.maxRetryDelay = maxRetryDelay;
    b.connectTimeout = connectTimeout;
    b.attemptTimeout = attemptTimeout;
    b.maxConnections = maxConnections;
    b.apiCallTimeout = apiCallTimeout;
    return b;
  }

  /**
   * Builds a configuration from properties (keys in {@link Keys}); unknown "s3." keys are
   * rejected so typos do not pass silently.
   */
  public static S3ObjectStoreConfig fromProperties(String bucket, String prefix, Map<String, String> props) {
    Builder b = builder(bucket).prefix(prefix);
    applyProperties(b, props);
    return b.build();
  }

  static void applyProperties(Builder b, Map<String, String> props) {
    for (String key : props.keySet()) {
      if (key.startsWith("s3.") && !Keys.ALL.contains(key)) {
        throw new ObjectStoreConfigException("Unknown S3 store property '" + key + "'; known: " + new java.util.TreeSet<>(Keys.ALL));
      }
    }
    String v;
    if ((v = props.get(Keys.ENDPOINT)) != null) {
      try {
        b.endpoint(URI.create(v));
      } catch (IllegalArgumentException e) {
        throw new ObjectStoreConfigException("Invalid " + Keys.ENDPOINT + " '" + v + "': " + e.getMessage());
      }
    }
    if ((v = props.get(Keys.REGION)) != null) {
      b.region(v);
    }
    if ((v = props.get(Keys.PATH_STYLE)) != null) {
      b.pathStyleAccess(parseBoolean(Keys.PATH_STYLE, v));
    }
    String id = props.get(Keys.ACCESS_KEY_ID);
    String secret = props.get(Keys.SECRET_ACCESS_KEY);
    if (id != null || secret != null) {
      b.credentials(new Credentials(id, secret));
    }
    if ((v = props.get(Keys.CHECKSUM_MODE)) != null) {
      b.checksumMode(parseEnum(Keys.CHECKSUM_MODE, v, ChecksumMode.class));
    }
    if ((v = props.get(Keys.MULTIPART_THRESHOLD)) != null) {
      b.multipartThresholdBytes(parseLong(Keys.MULTIPART_THRESHOLD, v));
    }
    if ((v = props.get(Keys.PART_SIZE)) != null) {
      b.partSizeBytes(parseLong(Keys.PART_SIZE, v));
    }
    if ((v = props.get(Keys.PARALLELISM)) != null) {
      b.multipartParallelism((int) parseLong(Keys.PARALLELISM, v));
    }
    if ((v = props.get(Keys.SSE)) != null) {
      b.serverSideEncryption(parseEnum(Keys.SSE, v, ServerSideEncryption.class));
    }
    if ((v = props.get(Keys.SSE_KMS_KEY_ID)) != null) {
      b.kmsKeyId(v);
    }
    if ((v = props.get(Keys.MAX_ATTEMPTS)) != null) {
      b.maxAttempts((int) parseLong(Keys.MAX_ATTEMPTS, v));
    }
    if ((v = props.get(Keys.BASE_RETRY_DELAY_MS)) != null) {
      b.baseRetryDelay(Duration.ofMillis(parseLong(Keys.BASE_RETRY_DELAY_MS, v)));
    }
    if ((v = props.get(Keys.MAX_RETRY_DELAY_MS)) != null) {
      b.maxRetryDelay(Duration.ofMillis(parseLong(Keys.MAX_RETRY_DELAY_MS, v)));
    }
    if ((v = props.get(Keys.CONNECT_TIMEOUT_MS)) != null) {
      b.connectTimeout(Duration.ofMillis(parseLong(Keys.CONNECT_TIMEOUT_MS, v)));
    }
    if ((v = props.get(Keys.ATTEMPT_TIMEOUT_MS)) != null) {
      b.attemptTimeout(Duration.ofMillis(parseLong(Keys.ATTEMPT_TIMEOUT_MS, v)));
    }
    if ((v = props.get(Keys.API_CALL_TIMEOUT_MS)) != null) {
      b.apiCallTimeout(Duration.ofMillis(parseLong(Keys.API_CALL_TIMEOUT_MS, v)));
    }
    if ((v = props.get(Keys.MAX_CONNECTIONS)) != null) {
      b.maxConnections((int) parseLong(Keys.MAX_CONNECTIONS, v));
    }
  }

  private static boolean parseBoolean(String key, String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new ObjectStoreConfigException("Invalid " + key + " '" + v + "': expected true or false");
    };
  }

  private static long parseLong(String key, String v) {
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new ObjectStoreConfigException("Invalid " + key + " '" + v + "': expected an integer");
    }
  }

  private static <E extends Enum<E>> E parseEnum(String key, String v, Class<E> type) {
    try {
      return Enum.valueOf(type, v.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw new ObjectStoreConfigException("Invalid " + key + " '" + v + "': expected one of "
          + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT).replace('_', '-'));
    }
  }

  /** "s3://bucket/prefix" plus the endpoint, for messages. */
  public String describe() {
    return "s3://" + bucket + (prefix.isEmpty() ? "" : "/" + prefix)
        + (endpoint != null ? " at " + endpoint : " in " + region);
  }

  @Override
  public String toString() {
    return "S3ObjectStoreConfig[" + describe() + ", pathStyle=" + pathStyleAccess + ", credentials="
        + (credentials == null ? "default-chain" : credentials) + ", checksumMode=" + checksumMode
        + ", multipartThreshold=" + multipartThresholdBytes + ", partSize=" + partSizeBytes
        + ", parallelism=" + multipartParallelism + ", sse=" + serverSideEncryption
        + ", maxAttempts=" + maxAttempts + "]";
  }

  /** Mutable builder with the defaults named in {@link S3ObjectStoreConfig}. */
  public static final class Builder {
    private final String bucket;
    private String prefix = "";
    private URI endpoint;
    private String region = DEFAULT_REGION;
    private boolean pathStyleAccess;
    private Credentials credentials;
    private ChecksumMode checksumMode = ChecksumMode.WHEN_SUPPORTED;
    private long multipartThresholdBytes = DEFAULT_MULTIPART_THRESHOLD;
    private long partSizeBytes = DEFAULT_PART_SIZE;
    private int multipartParallelism = DEFAULT_PARALLELISM;
    private ServerSideEncryption serverSideEncryption = ServerSideEncryption.NONE;
    private String kmsKeyId;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration baseRetryDelay;
    private Duration maxRetryDelay;
    private Duration connectTimeout;
    private Duration attemptTimeout;
    private int maxConnections = 64;
    private Duration apiCallTimeout;

    private Builder(String bucket) {
      this.bucket = bucket;
    }

    public Builder prefix(String v) { this.prefix = v; return this; }
    public Builder endpoint(URI v) { this.endpoint = v; return this; }
    public Builder region(String v) { this.region = v; return this; }
    public Builder pathStyleAccess(boolean v) { this.pathStyleAccess = v; return this; }
    public Builder credentials(Credentials v) { this.credentials = v; return this; }
    public Builder credentials(String accessKeyId, String secretAccessKey) {
      this.credentials = new Credentials(accessKeyId, secretAccessKey);
      return this;
    }
    public Builder checksumMode(ChecksumMode v) { this.checksumMode = Objects.requireNonNull(v); return this; }
    public Builder multipartThresholdBytes(long v) { this.multipartThresholdBytes = v; return this; }
    public Builder partSizeBytes(long v) { this.partSizeBytes = v; return this; }
    public Builder multipartParallelism(int v) { this.multipartParallelism = v; return this; }
    public Builder serverSideEncryption(ServerSideEncryption v) { this.serverSideEncryption = v; return this; }
    public Builder kmsKeyId(String v) { this.kmsKeyId = v; return this; }
    public Builder maxAttempts(int v) { this.maxAttempts = v; return this; }
    public Builder baseRetryDelay(Duration v) { this.baseRetryDelay = v; return this; }
    public Builder maxRetryDelay(Duration v) { this.maxRetryDelay = v; return this; }
    public Builder connectTimeout(Duration v) { this.connectTimeout = v; return this; }
    public Builder attemptTimeout(Duration v) { this.attemptTimeout = v; return this; }
    public Builder maxConnections(int v) { this.maxConnections = v; return this; }
    public Builder apiCallTimeout(Duration v) { this.apiCallTimeout = v; return this; }

    public S3ObjectStoreConfig build() {
      return new S3ObjectStoreConfig(bucket, prefix, endpoint, region, pathStyleAccess, credentials,
          checksumMode, multipartThresholdBytes, partSizeBytes, multipartParallelism, serverSideEncryption,
          kmsKeyId, maxAttempts, baseRetryDelay, maxRetryDelay, connectTimeout, attemptTimeout, maxConnections, apiCallTimeout);
    }
  }
}
