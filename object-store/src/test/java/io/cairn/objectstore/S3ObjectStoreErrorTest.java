package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.cairn.objectstore.exceptions.AccessDeniedException;
import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.InvalidKeyException;
import io.cairn.objectstore.exceptions.ObjectStoreConfigException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import io.cairn.objectstore.exceptions.StoreUnavailableException;
import io.cairn.testkit.s3.S3ProxyServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Bad input against a real S3 server: clear errors naming bucket/endpoint/key, no secret, no retry storm. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 3 s
class S3ObjectStoreErrorTest {
  private static S3ProxyServer server;
  private static String bucket;

  @BeforeAll
  static void startServer() {
    server = S3ProxyServer.shared();
    bucket = server.createBucket();
  }

  private static String fullText(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }

  @Test
  void missingBucketIsNamedForEveryOperation() {
    try (S3ObjectStore store = S3ProxyStores.newStore(server, "no-such-bucket-here", "p")) {
      List<ThrowingCallable> calls = List.of(
          () -> store.put("k", new byte[1]),
          () -> store.putIfAbsent("k", new byte[1]),
          () -> store.get("k"),
          () -> store.head("k"),
          () -> store.list(""),
          () -> store.put("big", TestData.stream(1, 17L << 20), 17L << 20));
      for (ThrowingCallable call : calls) {
        assertThatThrownBy(call).isInstanceOf(BucketNotFoundException.class)
            .hasMessageContaining("no-such-bucket-here")
            .hasMessageContaining(server.endpoint().toString());
      }
      assertThat(store.requestAttempts()).as("404s are not retried").isLessThanOrEqualTo(calls.size() + 1);
    }
  }

  @Test
  void wrongCredentialsAreRejectedOnceWithoutTheSecretInTheError() {
    String secret = "wrong-secret-" + System.nanoTime();
    S3ObjectStoreConfig config = S3ProxyStores.configFor(server, bucket).credentials(server.accessKeyId(), secret).build();
    assertThat(config.toString()).doesNotContain(secret).contains("****");
    try (S3ObjectStore store = new S3ObjectStore(config)) {
      for (ThrowingCallable call : List.<ThrowingCallable>of(
          () -> store.put("k", new byte[1]), () -> store.get("k"), () -> store.list(""))) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(call);
        assertThat(t).isInstanceOf(AccessDeniedException.class)
            .hasMessageContaining(bucket).hasMessageContaining(server.endpoint().toString());
        assertThat(fullText(t)).doesNotContain(secret).doesNotContain(server.secretAccessKey());
      }
      assertThat(store.requestAttempts()).as("auth failures are not retried").isEqualTo(3);
    }
    try (S3ObjectStore store = new S3ObjectStore(
        S3ProxyStores.configFor(server, bucket).credentials("nobody", server.secretAccessKey()).build())) {
      assertThatThrownBy(() -> store.head("k")).isInstanceOf(AccessDeniedException.class)
          .satisfies(t -> assertThat(fullText(t)).doesNotContain(server.secretAccessKey()));
    }
  }

  @Test
  void unreachableEndpointFailsAfterBoundedAttempts() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    URI endpoint = URI.create("http://127.0.0.1:" + port);
    S3ObjectStoreConfig config = S3ObjectStoreConfig.builder("some-bucket").endpoint(endpoint).pathStyleAccess(true)
        .credentials("id", "top-secret-value").maxAttempts(3).baseRetryDelay(Duration.ofMillis(20))
        .connectTimeout(Duration.ofSeconds(1)).build();
    try (S3ObjectStore store = new S3ObjectStore(config)) {
      long start = System.nanoTime();
      Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> store.put("some/key", new byte[10]));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(t).isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("some-bucket").hasMessageContaining(endpoint.toString())
          .hasMessageContaining("some/key");
      assertThat(fullText(t)).doesNotContain("top-secret-value");
      assertThat(store.requestAttempts()).isEqualTo(3);
      assertThat(took).isLessThan(Duration.ofSeconds(10));
    }
  }

  /** Issue 30: a list error read "Cannot list prefix 'p' of in s3://..." and a delete error "... in in ...". */
  @Test
  @org.junit.jupiter.api.Timeout(60)
  void listAndDeleteErrorsNameTheBucketInReadableMessages() throws Exception {
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    http.createContext("/", exchange -> {
      byte[] body = "<?xml version=\"1.0\"?><Error><Code>InternalError</Code><Message>down</Message></Error>"
          .getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/xml");
      exchange.sendResponseHeaders(500, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    http.start();
    try {
      URI endpoint = URI.create("http://127.0.0.1:" + http.getAddress().getPort());
      S3ObjectStoreConfig config = S3ObjectStoreConfig.builder("named-bucket").prefix("pre").endpoint(endpoint)
          .pathStyleAccess(true).credentials("id", "secret").maxAttempts(1).build();
      try (S3ObjectStore store = new S3ObjectStore(config)) {
        Throwable list = org.assertj.core.api.Assertions.catchThrowable(() -> store.list("catalog/"));
        assertThat(list).isInstanceOf(StoreUnavailableException.class)
            .hasMessageStartingWith("Cannot list prefix 'catalog/' of bucket named-bucket in s3://named-bucket/pre at " + endpoint);
        Throwable delete = org.assertj.core.api.Assertions.catchThrowable(() -> store.delete(List.of("a", "b")));
        assertThat(delete).isInstanceOf(StoreUnavailableException.class)
            .hasMessageStartingWith("Cannot delete 2 keys (first a) in s3://named-bucket/pre at " + endpoint);
        for (Throwable t : List.of(list, delete)) {
          assertThat(t.getMessage()).doesNotContain(" of in ").doesNotContain(" in in ");
        }
      }
    } finally {
      http.stop(0);
    }
  }

  @Test
  void serverErrorsAreRetriedWithBackoffThenReported() throws Exception {
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    AtomicInteger requests = new AtomicInteger();
    http.createContext("/", exchange -> {
      requests.incrementAndGet();
      byte[] body = ("<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate."
          + "</Message></Error>").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/xml");
      exchange.sendResponseHeaders(503, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    http.start();
    try {
      URI endpoint = URI.create("http://127.0.0.1:" + http.getAddress().getPort());
      S3ObjectStoreConfig config = S3ObjectStoreConfig.builder("throttled").endpoint(endpoint).pathStyleAccess(true)
          .credentials("id", "secret").maxAttempts(4).baseRetryDelay(Duration.ofMillis(10))
          .maxRetryDelay(Duration.ofMillis(200)).build();
      try (S3ObjectStore store = new S3ObjectStore(config)) {
        assertThatThrownBy(() -> store.put("hot/key", new byte[10]))
            .isInstanceOf(StoreUnavailableException.class)
            .hasMessageContaining("throttled").hasMessageContaining("hot/key").hasMessageContaining("503");
        assertThat(requests.get()).isEqualTo(4);
      }
    } finally {
      http.stop(0);
    }
  }

  @Test
  void invalidKeysSendNothing() {
    try (S3ObjectStore store = S3ProxyStores.newStore(server, bucket, "p")) {
      assertThatThrownBy(() -> store.put("../etc/passwd", new byte[1]))
          .isInstanceOf(InvalidKeyException.class).hasMessageContaining("../etc/passwd");
      assertThat(store.requestAttempts()).isZero();
    }
  }

  @Test
  void badConfigurationNamesTheProperty() {
    assertThatThrownBy(() -> S3ObjectStoreConfig.builder("bkt").partSizeBytes(1024).build())
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("s3.multipart.part-size-bytes");
    assertThatThrownBy(() -> S3ObjectStoreConfig.builder("Bad_Bucket!").build())
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("Bad_Bucket!");
    assertThatThrownBy(() -> ObjectStores.open("s3://bkt/p?secret-access-key=hunter2"))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageNotContaining("hunter2");
    assertThatThrownBy(() -> ObjectStores.open("s3://id:hunter2@b/p"))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageNotContaining("hunter2");
    assertThatThrownBy(() -> ObjectStores.open("s3://bkt/p?checksum-mode=sometimes"))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("s3.checksum-mode");
    assertThatThrownBy(() -> ObjectStores.open("s3://bkt/p", Map.of("s3.part-size", "5")))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("s3.part-size");
    assertThatThrownBy(() -> ObjectStores.open("ftp://host/x"))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("ftp");
    assertThatThrownBy(() -> ObjectStores.open("file:///definitely/not/a/dir/" + System.nanoTime()))
        .isInstanceOf(ObjectStoreException.class).hasMessageContaining("/definitely/not/a/dir/");
  }

  @Test
  void uriFormOpensEachBackend(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    try (ObjectStore s3 = ObjectStores.open(server.uri(bucket, "via-uri"), Map.of(
        S3ObjectStoreConfig.Keys.ACCESS_KEY_ID, server.accessKeyId(),
        S3ObjectStoreConfig.Keys.SECRET_ACCESS_KEY, server.secretAccessKey()))) {
      assertThat(s3).isInstanceOf(S3ObjectStore.class);
      S3ObjectStoreConfig c = ((S3ObjectStore) s3).config();
      assertThat(c.prefix()).isEqualTo("via-uri");
      assertThat(c.pathStyleAccess()).isTrue();
      s3.put("x", new byte[] {42});
      assertThat(server.client().getObjectAsBytes(b -> b.bucket(bucket).key("via-uri/x")).asByteArray())
          .containsExactly(42);
    }
    S3ObjectStoreConfig tuned = ObjectStores.s3Config(URI.create(
        "s3://bkt/a/b?endpoint=https://r2.example.com&checksum-mode=when-required&multipart.part-size-bytes=6291456"
            + "&sse=kms&sse.kms-key-id=alias/k&region=auto"), Map.of());
    assertThat(tuned.checksumMode()).isEqualTo(S3ObjectStoreConfig.ChecksumMode.WHEN_REQUIRED);
    assertThat(tuned.partSizeBytes()).isEqualTo(6L << 20);
    assertThat(tuned.serverSideEncryption()).isEqualTo(S3ObjectStoreConfig.ServerSideEncryption.KMS);
    assertThat(tuned.kmsKeyId()).isEqualTo("alias/k");
    assertThat(tuned.prefix()).isEqualTo("a/b");
    assertThat(tuned.region()).isEqualTo("auto");
    try (ObjectStore local = ObjectStores.open(dir.toUri().toString())) {
      assertThat(local).isInstanceOf(LocalObjectStore.class);
      local.put("k", new byte[] {1});
      assertThat(dir.resolve("k")).exists();
    }
    try (ObjectStore mem = ObjectStores.open("memory:")) {
      assertThat(mem).isInstanceOf(InMemoryObjectStore.class);
    }
  }

  @Test
  void checksumModeWhenRequiredRoundTripsSinglePutsAndParts() throws Exception {
    S3ObjectStoreConfig config = S3ProxyStores.configFor(server, bucket).prefix("when-required")
        .checksumMode(S3ObjectStoreConfig.ChecksumMode.WHEN_REQUIRED)
        .multipartThresholdBytes(5L << 20).partSizeBytes(5L << 20).multipartParallelism(2).build();
    try (S3ObjectStore store = new S3ObjectStore(config)) {
      store.put("small", TestData.bytes(11, 1000));
      long size = (12L << 20) + 7;
      store.put("parts", TestData.stream(12, size), size);
      assertThat(store.readAllBytes("small")).isEqualTo(TestData.bytes(11, 1000));
      try (var in = store.get("parts")) {
        assertThat(TestData.sha256(in)).isEqualTo(TestData.sha256(12, size));
      }
      store.putIfAbsent("once", new byte[] {1});
      assertThatThrownBy(() -> store.putIfAbsent("once", new byte[] {2}))
          .isInstanceOf(io.cairn.objectstore.exceptions.ObjectAlreadyExistsException.class);
      store.delete(List.of("small", "parts", "once"));
      assertThat(store.list("")).isEmpty();
    }
  }
}
