package io.cairn.node;

import io.cairn.objectstore.FaultInjectingObjectStore;
import io.cairn.objectstore.ObjectStore;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A test hook for kill tests: when the system property {@code cairn.crash-at} is {@code
 * <point>:<n>}, the n-th time the node reaches {@code point} the JVM halts at once, like {@code
 * kill -9} (no shutdown hooks, nothing flushed). Points: {@code tick}, {@code store.put} (a batch
 * upload), {@code store.commit} (just before a manifest is written), {@code store.get} (reading
 * during recovery). Without the property it costs one comparison.
 */
public final class CrashPoints {
  private static final Logger LOG = LoggerFactory.getLogger(CrashPoints.class);
  private static final String POINT;
  private static final long AT;
  private static final AtomicLong COUNT = new AtomicLong();

  static {
    String spec = System.getProperty("cairn.crash-at", "");
    int colon = spec.indexOf(':');
    POINT = colon < 0 ? spec : spec.substring(0, colon);
    AT = colon < 0 ? 1 : Long.parseLong(spec.substring(colon + 1));
  }

  private CrashPoints() {}

  public static boolean enabled() {
    return !POINT.isEmpty();
  }

  /**
   * Wraps a store so that batch uploads hit {@code store.put}, manifest commits hit {@code
   * store.commit} (before the write) and reads hit {@code store.get}.
   */
  public static ObjectStore wrap(ObjectStore store) {
    return FaultInjectingObjectStore.wrap(store)
        .failWhen(
            call -> {
              switch (call.kind()) {
                case PUT -> hit("store.put");
                case PUT_IF_ABSENT -> {
                  if (call.key().contains("snapshots/")) {
                    hit("store.commit");
                  }
                }
                case GET, GET_RANGE -> hit("store.get");
                default -> { }
              }
              return false;
            });
  }

  /** Halts the JVM if this is the configured crash point's n-th hit. */
  public static void hit(String point) {
    if (POINT.isEmpty() || !POINT.equals(point)) {
      return;
    }
    if (COUNT.incrementAndGet() == AT) {
      LOG.warn("Crash point {}:{} reached: halting", point, AT);
      System.err.println("CRASH " + point + ":" + AT);
      System.err.flush();
      Runtime.getRuntime().halt(137);
    }
  }
}
