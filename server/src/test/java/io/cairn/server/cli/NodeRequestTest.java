package io.cairn.server.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.node.config.ConfigLoader;
import io.cairn.node.config.CairnConfig;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's request to a node tells "nothing listening" from "listening but not answering" from "answered with an error". */
class NodeRequestTest {
  @TempDir Path dir;

  private CairnConfig config(int port) throws Exception {
    Path yaml = dir.resolve("cairn-" + port + ".yaml");
    Files.writeString(yaml, "store:\n  uri: \"file:" + dir.resolve("store") + "\"\nhttp:\n  port: " + port + "\n");
    return ConfigLoader.load(yaml, Map.of());
  }

  @Test
  void nothingListeningIsCannotReach() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    CairnConfig cfg = config(port);
    assertThatThrownBy(() -> CairnCommand.http(cfg, Duration.ofSeconds(2), "GET", "/status", null))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Cannot reach the node at http://127.0.0.1:" + port + "/status");
  }

  @Test
  void aNodeThatAcceptsButDoesNotAnswerIsNoAnswerWithinTheTimeout() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CairnConfig cfg = config(s.getLocalPort());
      assertThatThrownBy(() -> CairnCommand.http(cfg, Duration.ofSeconds(1), "POST", "/sql", "SELECT 1"))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("No answer from the node")
          .hasMessageContaining("within 1 s");
    }
  }

  @Test
  void anErrorAnswerIsItsBody() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread server = new Thread(() -> {
        try (Socket c = s.accept()) {
          byte[] buf = new byte[8192];
          c.getInputStream().read(buf); // the request (small)
          byte[] body = "Cannot run: unknown view 'nowhere'\n".getBytes(StandardCharsets.UTF_8);
          c.getOutputStream().write(("HTTP/1.1 400 Bad Request\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
          c.getOutputStream().write(body);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      server.start();
      CairnConfig cfg = config(s.getLocalPort());
      assertThatThrownBy(() -> CairnCommand.http(cfg, Duration.ofSeconds(5), "POST", "/sql", "SELECT * FROM nowhere"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("Cannot run: unknown view 'nowhere'");
      server.join(5000);
      assertThat(server.isAlive()).isFalse();
    }
  }
}
