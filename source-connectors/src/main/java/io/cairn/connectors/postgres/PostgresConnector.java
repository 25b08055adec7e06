package io.cairn.connectors.postgres;

import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;
import java.util.Objects;

/**
 * The {@code postgres} connector: one table read with Debezium's embedded Postgres connector
 * (pgoutput logical decoding). Options are described in {@link PostgresSourceConfig}; behaviour
 * (offsets, LSN confirmation, slot loss, TOAST) in {@link PostgresSource}.
 *
 * <pre>
 * CREATE SOURCE orders FROM POSTGRES (host = '127.0.0.1', port = 5432, database = 'shop', user = 'cairn',
 *     password = SECRET 'PG_PASSWORD', table = 'public.orders', slot-lost = 'fail')
 * </pre>
 *
 * The schema and primary key may be declared; when they are not, they are read from the table when
 * the source is opened ({@link #validate} never connects). The envelope is {@code DEBEZIUM}
 * ({@code UPSERT} is accepted as a synonym; none defaults to {@code DEBEZIUM}).
 */
public final class PostgresConnector implements SourceConnector {
  public static final String NAME = "postgres";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public SourceDefinition validate(SourceDefinition definition) {
    Objects.requireNonNull(definition, "definition");
    if (!NAME.equals(definition.connector())) {
      throw new IllegalArgumentException("Cannot create source '" + definition.name() + "': connector is '"
          + definition.connector() + "', not '" + NAME + "'");
    }
    PostgresSourceConfig.from(definition);
    for (String k : definition.primaryKey()) {
      if (definition.schema().size() > 0 && definition.schema().indexOf(k) < 0) {
        throw new IllegalArgumentException("Cannot create source '" + definition.name() + "': primary-key column '" + k
            + "' is not in the declared schema (" + definition.schema() + ")");
      }
    }
    Envelope envelope = definition.envelope() == Envelope.NONE ? Envelope.DEBEZIUM : definition.envelope();
    return new SourceDefinition(definition.name(), definition.connector(), definition.options(), definition.schema(),
        definition.primaryKey(), envelope);
  }

  @Override
  public Source open(SourceDefinition definition, Secrets secrets) {
    SourceDefinition def = validate(definition);
    PostgresSourceConfig config = PostgresSourceConfig.from(def);
    String password = secrets.resolve(config.passwordRef());
    return new PostgresSource(config, password, def.schema(), def.primaryKey());
  }

  /** How long the WAL rate is sampled by the retention guard. */
  static final java.time.Duration WAL_RATE_SAMPLE = java.time.Duration.ofSeconds(1);

  /**
   * The slot's WAL limit against one snapshot interval of WAL ({@link PostgresRetentionGuard}),
   * the rate sampled over {@link #WAL_RATE_SAMPLE}.
   */
  @Override
  public java.util.Optional<io.cairn.engine.source.RetentionGuard> retentionGuard() {
    return java.util.Optional.of((definition, secrets, interval) ->
        PostgresRetentionGuard.check(definition, secrets, interval, WAL_RATE_SAMPLE));
  }

  /** The server's WAL limits, the slot's state and the WAL rate ({@link PostgresRetentionGuard#probe}). */
  @Override
  public java.util.Optional<io.cairn.engine.source.RetentionProbe> retentionProbe() {
    return java.util.Optional.of(PostgresRetentionGuard::probe);
  }

  /**
   * 10,000 changes/s: a hot-standby takeover's Postgres catch-up read 49,000 rows in about 3.6 s,
   * Debezium's start and the caught-up watermark included, on a loaded 2-core machine
   * (benchmarks/RESULTS.md, "What availability costs the sources"), rounded down.
   */
  @Override
  public java.util.OptionalDouble typicalReplayRate() {
    return java.util.OptionalDouble.of(10_000);
  }
}
