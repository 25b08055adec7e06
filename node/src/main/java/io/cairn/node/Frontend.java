package io.cairn.node;

import io.cairn.node.config.CairnConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A way into a node from outside: a listener (the HTTP endpoint, the PostgreSQL wire protocol)
 * that a server module provides and a {@link Node} starts and stops. The node names no
 * listener: it finds their {@link Provider}s with {@link ServiceLoader} ({@code
 * META-INF/services/io.cairn.node.Frontend$Provider}), as the engine finds source connectors. With
 * no provider on the class path (an embedded node, the benchmarks' nodes) a node serves nothing
 * over the network.
 *
 * <p>Lifecycle: {@link Provider#check} runs before a node does any work (a configuration error
 * stops the start with nothing written); a provider that {@linkplain Provider#startsEarly starts
 * early} is started before recovery with an API that answers "starting" and then hands every call
 * to the node; the others are started by {@link Node#serve()}; {@link Node#close()} closes all.
 */
public interface Frontend extends AutoCloseable {
  /** The provider's name ("http", "pgwire"). */
  String name();

  /** The port actually bound. */
  int port();

  /** Stops listening and frees the threads; idempotent. */
  @Override
  void close();

  /** Makes one kind of frontend. Implementations are stateless. */
  interface Provider {
    /** The frontend's name, as {@link Frontend#name()}. */
    String name();

    /**
     * Refuses a configuration this frontend cannot serve, before the node does any work.
     *
     * @throws io.cairn.node.config.ConfigException naming the key
     */
    default void check(CairnConfig config) {}

    /** Whether {@code config} turns this frontend on (a port of 0 turns it off). */
    boolean enabled(CairnConfig config);

    /** Whether it listens from the start of recovery, answering status and health while the node recovers. */
    default boolean startsEarly() {
      return false;
    }

    /** Starts listening for {@code api}. */
    Frontend start(CairnConfig config, NodeApi api);
  }

  /** The providers on the class path, in a stable order (by name). */
  static List<Provider> providers() {
    List<Provider> out = new ArrayList<>();
    ServiceLoader.load(Provider.class, Frontend.class.getClassLoader()).forEach(out::add);
    out.sort(java.util.Comparator.comparing(Provider::name));
    return out;
  }
}
