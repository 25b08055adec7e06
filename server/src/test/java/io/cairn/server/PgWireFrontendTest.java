package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.node.Node;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigException;
import io.cairn.node.config.ConfigLoader;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The pgwire frontend's configuration: checked before a node does any work. */
class PgWireFrontendTest {
  @Test
  void aListenerOffLoopbackNeedsAPasswordBeforeAnyRecoveryWork() {
    org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("CAIRN_PGWIRE_PASSWORD") == null);
    CairnConfig open = ConfigLoader.load(null,
        Map.of("CAIRN_PGWIRE_HOST", "0.0.0.0", "CAIRN_PGWIRE_PASSWORD", "pw", "CAIRN_STORE_URI", "memory:pgwire-test"));
    assertThat(open.pgwireHost()).isEqualTo("0.0.0.0");
    // the serving node refuses, before any recovery work (the password is read from its environment)
    assertThatThrownBy(() -> Node.recover(open, Node.Options.defaults()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("pgwire.host").hasMessageContaining("CAIRN_PGWIRE_PASSWORD");
    CairnConfig defaults = ConfigLoader.load(null, Map.of());
    assertThat(defaults.pgwirePort()).isEqualTo(6875);
    assertThat(defaults.pgwireHost()).isEqualTo("127.0.0.1");
    assertThat(defaults.pgwireMaxConnections()).isEqualTo(64);
  }
}
