package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Schema;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What CREATE SOURCE hands a connector: the definition the Kafka and Postgres connectors will validate. */
class CreateSourceSyntaxTest {

  /** Records the definition it is asked to validate, then refuses it (so nothing is opened). */
  static final class Recorder implements SourceConnector {
    final String name;
    SourceDefinition seen;

    Recorder(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public SourceDefinition validate(SourceDefinition d) {
      seen = d;
      throw new IllegalArgumentException("Cannot create source '" + d.name() + "': recorded");
    }

    @Override
    public Source open(SourceDefinition d, Secrets secrets) {
      throw new AssertionError("not opened");
    }
  }

  static SourceDefinition definition(String connector, String sql) {
    Recorder r = new Recorder(connector);
    try (Engine e = Engine.builder().workers(1).connector(r).build()) {
      SqlSession s = SqlFixture.session(e);
      assertThatThrownBy(() -> s.execute(sql)).isInstanceOf(SqlException.class).hasMessageContaining("recorded");
      assertThat(s.position()).isZero();
    }
    return r.seen;
  }

  @Test
  void kafkaUpsertWithColumnsAndSecret() {
    SourceDefinition d = definition("kafka", """
        CREATE SOURCE Orders FROM KAFKA (
          brokers = '127.0.0.1:9092', topic = 'orders',
          "properties.security.protocol" = 'PLAINTEXT', password = SECRET 'KAFKA_PASSWORD',
          poll-ms = 50, start = -1)
        FORMAT JSON ENVELOPE UPSERT (id BIGINT, customer BIGINT, amount DOUBLE PRECISION, note VARCHAR(20), PRIMARY KEY (id));
        """);
    assertThat(d.name()).isEqualTo("orders");
    assertThat(d.connector()).isEqualTo("kafka");
    assertThat(d.options()).isEqualTo(Map.of("brokers", "127.0.0.1:9092", "topic", "orders",
        "properties.security.protocol", "PLAINTEXT", "password", "SECRET 'KAFKA_PASSWORD'", "poll-ms", "50", "start", "-1",
        "format", "json"));
    assertThat(Secrets.referenceName(d.options().get("password"))).contains("KAFKA_PASSWORD");
    assertThat(d.schema()).isEqualTo(Schema.parse("id BIGINT, customer BIGINT, amount DOUBLE, note TEXT"));
    assertThat(d.primaryKey()).containsExactly("id");
    assertThat(d.envelope()).isEqualTo(Envelope.UPSERT);
  }

  @Test
  void postgresDebeziumWithInlinePrimaryKey() {
    SourceDefinition d = definition("postgres",
        "CREATE SOURCE customers FROM POSTGRES (host = 'localhost', port = 5432, database = 'shop', user = 'cairn', "
            + "password = SECRET 'PGPASSWORD', table = 'public.customers') ENVELOPE DEBEZIUM "
            + "(id BIGINT PRIMARY KEY, name TEXT NOT NULL, vip BOOLEAN, since TIMESTAMP)");
    assertThat(d.connector()).isEqualTo("postgres");
    assertThat(d.options()).containsEntry("table", "public.customers").containsEntry("password", "SECRET 'PGPASSWORD'")
        .containsEntry("port", "5432");
    assertThat(d.schema()).isEqualTo(Schema.parse("id BIGINT, name TEXT, vip BOOLEAN, since TIMESTAMP"));
    assertThat(d.primaryKey()).containsExactly("id");
    assertThat(d.envelope()).isEqualTo(Envelope.DEBEZIUM);
  }

  @Test
  void loadGeneratorDefaults() {
    SourceDefinition d = definition("load-generator", "create source g from load generator");
    assertThat(d.options()).isEmpty();
    assertThat(d.schema()).isEqualTo(Schema.EMPTY);
    assertThat(d.primaryKey()).isEmpty();
    assertThat(d.envelope()).isEqualTo(Envelope.NONE);
  }

  @Test
  void malformedSourcesNameTheProblem() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      assertThatThrownBy(() -> s.execute("CREATE SOURCE x FROM LOAD GENERATOR (keys = 1, keys = 2)"))
          .hasMessage("Cannot parse statement: option 'keys' is given twice at line 1, column 48");
      assertThatThrownBy(() -> s.execute("CREATE SOURCE x FROM KAFKA (topic = 't') (id BIGINT, PRIMARY KEY (nope))"))
          .hasMessageContaining("primary key column 'nope' is not in the column list");
      assertThatThrownBy(() -> s.execute("CREATE SOURCE x FROM KAFKA (topic = 't') (id MONEY)"))
          .hasMessage("Cannot parse statement: unknown type 'money' (supported: BIGINT, DOUBLE, NUMERIC, TEXT, BOOLEAN, TIMESTAMP, DATE, INTERVAL)"
              + " at line 1, column 46");
      assertThatThrownBy(() -> s.execute("CREATE SOURCE x FROM KAFKA (topic = 'unterminated)"))
          .hasMessageContaining("unterminated string");
      assertThatThrownBy(() -> s.execute("CREATE SOURCE x FROM (a = 1)"))
          .hasMessageContaining("expected a connector");
      assertThat(List.of(s.position())).containsExactly(0L);
    }
  }
}
