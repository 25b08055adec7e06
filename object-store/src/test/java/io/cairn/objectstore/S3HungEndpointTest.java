package io.cairn.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An S3 endpoint that accepts connections and never answers (the network to S3 stalls): every
 * call fails within the configured bound instead of hanging (it took 200+ s with 2-minute attempt
 * timeouts).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 6 s
class S3HungEndpointTest {
  @Test
  void defaultsBoundACallToAboutThirtySeconds() {
    S3ObjectStoreConfig c = S3ObjectStoreConfig.builder("bucket").build();
    assertThat(c.attemptTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.apiCallTimeout()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aSilentEndpointFailsWithinTheBound() throws Exception {
    List<Socket> held = new CopyOnWriteArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor = new Thread(() -> {
        try {
          while (true) {
            held.add(silent.accept()); // accept, read nothing, answer nothing
          }
        } catch (Exception closed) {
          // test over
        }
      });
      acceptor.setDaemon(true);
      acceptor.start();
      S3ObjectStoreConfig config = S3ObjectStoreConfig.builder("bucket")
          .endpoint(URI.create("http://127.0.0.1:" + silent.getLocalPort()))
          .pathStyleAccess(true)
          .credentials("id", "secret")
          .attemptTimeout(Duration.ofMillis(700))
          .apiCallTimeout(Duration.ofSeconds(2))
          .build();
      try (S3ObjectStore store = new S3ObjectStore(config)) {
        for (Runnable call : List.<Runnable>of(() -> store.list("x"), () -> store.head("k"), () -> store.putIfAbsent("k", new byte[1]))) {
          long t0 = System.nanoTime();
          assertThatThrownBy(call::run).hasMessageContaining("127.0.0.1");
          double seconds = (System.nanoTime() - t0) / 1e9;
          assertThat(seconds).as("seconds until the call failed").isLessThan(4.0);
        }
      }
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }
}
