package io.cairn.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP port of 127.0.0.1 that no socket holds at the moment of the call, for a test server to bind.
 *
 * <p>The port is taken <em>below</em> the kernel's ephemeral range ({@code
 * /proc/sys/net/ipv4/ip_local_port_range}, 32768–60999 on Linux). A port the kernel hands out for
 * {@code bind(0)} is also one it hands out as the local end of any outgoing connection: between the
 * probe and the server's bind, a Kafka client or a JDBC connection in another test JVM took such a port
 * ("Address already in use" in a build running two test JVMs). Below the range only another probe can
 * take it; each JVM walks the band from its own starting point (derived from its pid), and every port
 * is probed before it is handed out. A server that fails to bind should still retry on a new port (as
 * {@code KafkaBroker.start()} and {@code S3ProxyServer} do).
 */
public final class FreePort {
  private static final int BAND_LOW = 20_000;
  private static final int BAND_HIGH = ephemeralLow(); // exclusive
  private static final AtomicInteger NEXT =
      new AtomicInteger((int) ((ProcessHandle.current().pid() * 7919L) % (BAND_HIGH - BAND_LOW)));

  private FreePort() {}

  /**
   * A port of 127.0.0.1 no socket holds now, outside the range of ports the kernel gives outgoing
   * connections.
   *
   * @throws UncheckedIOException if no port of the band can be bound
   */
  public static int onLoopback() {
    InetAddress loopback = loopback();
    int size = BAND_HIGH - BAND_LOW;
    for (int i = 0; i < size; i++) {
      int port = BAND_LOW + Math.floorMod(NEXT.getAndIncrement(), size);
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true);
        s.bind(new java.net.InetSocketAddress(loopback, port), 1);
        return port;
      } catch (IOException taken) {
        // held by someone: try the next one
      }
    }
    throw new UncheckedIOException(new IOException("No free port on 127.0.0.1 between " + BAND_LOW + " and " + BAND_HIGH));
  }

  private static InetAddress loopback() {
    try {
      return InetAddress.getByAddress(new byte[] {127, 0, 0, 1});
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The first port of the kernel's ephemeral range (32768 where it cannot be read). */
  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      int low = Integer.parseInt(range.split("\\s+")[0]);
      return low > BAND_LOW + 1_000 ? low : 32_768;
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }
}
