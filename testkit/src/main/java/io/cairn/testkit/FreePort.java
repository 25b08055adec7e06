package io.cairn.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * A TCP port of 127.0.0.1 that no socket holds at the moment of the call, for a test server to bind.
 * The port is free only when probed: another process may take it before the server binds, so a
 * server that fails to bind should retry on a new port (as {@code KafkaBroker.start()} and {@code
 * S3ProxyServer} do).
 */
public final class FreePort {
  private FreePort() {}

  /**
   * A port the operating system just handed out on 127.0.0.1, the address every testkit server binds.
   *
   * @throws UncheckedIOException if no socket can be bound there
   */
  public static int onLoopback() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByAddress(new byte[] {127, 0, 0, 1}))) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot find a free port on 127.0.0.1: " + e.getMessage(), e);
    }
  }
}
