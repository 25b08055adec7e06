package io.cairn.connectors.postgres;

import io.debezium.config.Configuration;
import java.util.Map;
import org.apache.kafka.common.config.ConfigValue;

/**
 * Debezium's PostgreSQL connector without the connection check its engine runs before every start
 * (a login, a test query, the role and read-only checks: ~80 ms of a cold restart). A {@link
 * PostgresSource} has by then checked the same things on its own connection: the login (a wrong
 * password fails at open, naming the secret), the table and its replica identity, the publication
 * and the slot, whose creation or use needs the REPLICATION role. What is left of Debezium's
 * validation, the fields of its configuration, still runs. Named in the engine's {@code
 * connector.class}; Debezium itself is not changed.
 */
public class PrecheckedPostgresConnector extends io.debezium.connector.postgresql.PostgresConnector {
  @Override
  protected void validateConnection(Map<String, ConfigValue> configValues, Configuration config) {
    // checked by PostgresSource before the engine starts (see the class comment)
  }
}
