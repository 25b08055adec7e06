package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.source.LoadMeter;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.source.SourceOutput;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A SECRET is a reference in the catalog and the options, resolved only when the source opens. */
class SecretsTest {
  static final String VALUE = "hunter2-very-secret";

  /** A connector that needs a password and remembers what it was opened with. */
  static final class Vault implements SourceConnector {
    volatile String opened;

    @Override
    public String name() {
      return "vault";
    }

    @Override
    public SourceDefinition validate(SourceDefinition d) {
      String pw = d.requireOption("password");
      if (Secrets.referenceName(pw).isEmpty()) {
        throw new IllegalArgumentException("Cannot create source '" + d.name() + "': option 'password' must be a SECRET reference");
      }
      return new SourceDefinition(d.name(), d.connector(), d.options(), Schema.parse("k BIGINT"), List.of(), d.envelope());
    }

    @Override
    public Source open(SourceDefinition d, Secrets secrets) {
      opened = secrets.resolveOption(d.requireOption("password"));
      return new Source() {
        @Override
        public Schema schema() {
          return Schema.parse("k BIGINT");
        }

        @Override
        public List<String> primaryKey() {
          return List.of();
        }

        @Override
        public void seek(SourceOffsets offsets) {}

        @Override
        public int poll(SourceOutput out, int maxRecords, Duration timeout) {
          return 0;
        }

        @Override
        public SourceOffsets position() {
          return SourceOffsets.EMPTY;
        }

        @Override
        public boolean caughtUp() {
          return true;
        }

        @Override
        public LoadMeter meter() {
          return Map::of;
        }

        @Override
        public void close() {}
      };
    }
  }

  @Test
  void secretStaysAReference() {
    Vault vault = new Vault();
    Secrets secrets = ref -> {
      if (ref.equals("VAULT_PW")) {
        return VALUE;
      }
      throw new IllegalArgumentException("Cannot resolve secret: environment variable '" + ref + "' is not set");
    };
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    try (Engine e = Engine.builder().workers(1).tickPolicy(SqlFixture.POLICY).secrets(secrets).connector(vault).build()) {
      SqlSession s = SqlFixture.session(e, log);
      s.execute("CREATE SOURCE v FROM VAULT (host = 'h', password = SECRET 'VAULT_PW')");
      assertThat(vault.opened).isEqualTo(VALUE);
      assertThat(log.read(0).get(0).sql()).isEqualTo("CREATE SOURCE v FROM VAULT (host = 'h', password = SECRET 'VAULT_PW')")
          .doesNotContain(VALUE);
      assertThat(s.execute("SHOW SOURCES").render()).doesNotContain(VALUE);

      // an unset secret: the error names the variable, nothing is appended
      assertThatThrownBy(() -> s.execute("CREATE SOURCE w FROM VAULT (password = SECRET 'NOT_SET_ANYWHERE')"))
          .isInstanceOf(SqlException.class)
          .hasMessageContaining("NOT_SET_ANYWHERE")
          .hasMessageStartingWith("Cannot");
      assertThat(log.end()).isEqualTo(1);
      assertThat(e.dataflow("w")).isEmpty();

      // a value where a reference belongs is refused without echoing it
      assertThatThrownBy(() -> s.execute("CREATE SOURCE w FROM VAULT (password = SECRET 'p@ss word!')"))
          .isInstanceOf(SqlException.class)
          .hasMessageContaining("SECRET takes the name of an environment variable")
          .message().doesNotContain("p@ss word!");
      assertThatThrownBy(() -> s.execute("CREATE SOURCE w FROM VAULT (password = 'plain')"))
          .hasMessageContaining("must be a SECRET reference");
    }
    // replay resolves the secret again when the source opens
    Vault vault2 = new Vault();
    try (Engine e = Engine.builder().workers(1).secrets(ref -> VALUE).connector(vault2).build()) {
      SqlFixture.session(e, log).replayAll();
      assertThat(vault2.opened).isEqualTo(VALUE);
    }
  }
}
