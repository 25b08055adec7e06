package io.cairn.server;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.sql.Result;
import io.cairn.engine.sql.StatementBudget;
import io.cairn.node.Frontend;
import io.cairn.node.NodeApi;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigException;
import io.cairn.node.config.ConfigLoader;
import io.cairn.pgwire.CatalogRelation;
import io.cairn.pgwire.PgWireServer;
import java.time.Duration;
import java.util.List;

/**
 * The PostgreSQL wire protocol as a node's {@link Frontend}: a {@link PgWireServer} whose backend
 * is the node's {@link NodeApi} (one statement per request, within the session's budget). On when
 * {@code pgwire.port} is not 0. A listener off the loopback address needs {@value
 * ConfigLoader#PGWIRE_PASSWORD_ENV} (SCRAM-SHA-256; there is no TLS), checked before the node
 * does any work.
 */
public final class PgWireFrontend implements Frontend.Provider {
  @Override
  public String name() {
    return "pgwire";
  }

  @Override
  public boolean enabled(CairnConfig config) {
    return config.pgwirePort() > 0;
  }

  @Override
  public void check(CairnConfig config) {
    password(config);
  }

  /**
   * The pgwire password ({@code CAIRN_PGWIRE_PASSWORD}, null when unset).
   *
   * @throws ConfigException when the listener is off loopback and there is none
   */
  static String password(CairnConfig config) {
    String pw = System.getenv(ConfigLoader.PGWIRE_PASSWORD_ENV);
    pw = pw == null || pw.isEmpty() ? null : pw;
    if (config.pgwirePort() == 0 || pw != null) {
      return pw;
    }
    boolean loopback;
    try {
      loopback = java.net.InetAddress.getByName(config.pgwireHost()).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      throw new ConfigException("Bad configuration key 'pgwire.host': unknown host '" + config.pgwireHost() + "'");
    }
    if (!loopback) {
      throw new ConfigException("Bad configuration key 'pgwire.host': " + config.pgwireHost()
          + " is not a loopback address, so clients must authenticate: set " + ConfigLoader.PGWIRE_PASSWORD_ENV
          + " (checked by SCRAM-SHA-256; there is no TLS), or bind 127.0.0.1, or disable the listener with pgwire.port: 0");
    }
    return null;
  }

  @Override
  public Frontend start(CairnConfig config, NodeApi api) {
    PgWireServer server = PgWireServer.start(
        PgWireServer.Settings.of(config.pgwireHost(), config.pgwirePort(), config.pgwireMaxConnections(), password(config)),
        new PgWireServer.Backend() {
          @Override
          public List<Result> execute(String statement) {
            return execute(statement, StatementBudget.of(api.statementTimeout()));
          }

          @Override
          public List<Result> execute(String statement, StatementBudget budget) {
            return api.execute(List.of(statement), budget);
          }

          @Override
          public Duration statementTimeout() {
            return api.statementTimeout();
          }

          @Override
          public io.cairn.engine.sql.Subscribe.Running subscribe(io.cairn.engine.sql.Subscribe statement) {
            return api.subscribe(statement);
          }

          @Override
          public long catalogPosition() {
            return api.catalogPosition();
          }

          @Override
          public List<CatalogRelation> relations() {
            return api.dataflows().stream()
                .map(d -> new CatalogRelation(d.id(), d.name(), d.kind() == Dataflow.Kind.VIEW, d.schema()))
                .toList();
          }
        });
    return new Frontend() {
      @Override
      public String name() {
        return "pgwire";
      }

      @Override
      public int port() {
        return server.port();
      }

      @Override
      public void close() {
        server.close();
      }
    };
  }
}
