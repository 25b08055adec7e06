package io.cairn.server.http;

import io.cairn.node.Frontend;
import io.cairn.node.NodeApi;
import io.cairn.node.config.CairnConfig;

/**
 * The HTTP endpoint ({@link HttpEndpoint}) as a node's {@link Frontend}: on when {@code
 * http.port} is not 0, and started early, so that status, metrics and health answer from the first
 * second of a start, while the node recovers.
 */
public final class HttpFrontend implements Frontend.Provider {
  @Override
  public String name() {
    return "http";
  }

  @Override
  public boolean enabled(CairnConfig config) {
    return config.httpPort() > 0;
  }

  @Override
  public boolean startsEarly() {
    return true;
  }

  @Override
  public Frontend start(CairnConfig config, NodeApi api) {
    return new HttpEndpoint(config.httpHost(), config.httpPort(), limits(config), api);
  }

  /** The HTTP endpoint's bounds from the configuration. */
  static HttpEndpoint.Limits limits(CairnConfig config) {
    CairnConfig.Limits l = config.limits();
    return new HttpEndpoint.Limits(config.httpMaxBodyBytes(), l.httpMaxConnections(), l.httpRequestTimeout(), l.httpIdleTimeout(),
        l.httpSqlThreads(), l.httpSqlQueue());
  }
}
