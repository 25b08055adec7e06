package io.cairn.connectors.kafka;

import io.cairn.engine.source.Secrets;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceConnector;
import io.cairn.engine.source.SourceDefinition;

/**
 * The {@code kafka} connector: one topic, JSON values, envelopes NONE, UPSERT and DEBEZIUM. See
 * {@link KafkaSourceConfig} for the options. Registered for {@link java.util.ServiceLoader}.
 */
public final class KafkaSourceConnector implements SourceConnector {
  public static final String NAME = "kafka";

  @Override
  public String name() {
    return NAME;
  }

  /** No consumer group, no commits: a standby's reads are invisible to the owner's. */
  @Override
  public boolean sharedReads() {
    return true;
  }

  @Override
  public SourceDefinition validate(SourceDefinition definition) {
    if (!NAME.equals(definition.connector())) {
      throw new IllegalArgumentException("Cannot create source '" + definition.name() + "': connector is '"
          + definition.connector() + "', not '" + NAME + "'");
    }
    KafkaSourceConfig.parse(definition);
    KafkaSourceConfig.checkShape(definition);
    return definition;
  }

  @Override
  public Source open(SourceDefinition definition, Secrets secrets) {
    validate(definition);
    KafkaSourceConfig config = KafkaSourceConfig.parse(definition, secrets);
    return new KafkaSource(definition, config, System::nanoTime, nanos -> java.util.concurrent.TimeUnit.NANOSECONDS.sleep(nanos));
  }

  /** The topic's retention against the snapshot interval ({@link KafkaRetentionGuard}). */
  @Override
  public java.util.Optional<io.cairn.engine.source.RetentionGuard> retentionGuard() {
    return java.util.Optional.of(KafkaRetentionGuard::check);
  }

  /** The topic's retention settings and partitions ({@link KafkaRetentionGuard#probe}). */
  @Override
  public java.util.Optional<io.cairn.engine.source.RetentionProbe> retentionProbe() {
    return java.util.Optional.of(KafkaRetentionGuard::probe);
  }

  /**
   * 200,000 records/s: a restart's replay in a fresh JVM measured 231K–247K records/s on a 2-core
   * machine (benchmarks/RESULTS.md, "A full replay in a fresh JVM"), rounded down.
   */
  @Override
  public java.util.OptionalDouble typicalReplayRate() {
    return java.util.OptionalDouble.of(200_000);
  }

  /**
   * {@code Errors} makes a lambda per error code (135) as it initialises, {@code ApiKeys} and
   * {@code ApiMessageType} build their schemas: a restart's first broker response initialises all
   * three, which the training (its broker a closed port) otherwise never does (measured: 340
   * classes a cold Kafka recovery spun at run time or loaded from the jars, 135 of them these lambdas).
   */
  @Override
  public void trainClassCache() {
    for (org.apache.kafka.common.protocol.Errors e : org.apache.kafka.common.protocol.Errors.values()) {
      e.exception(); // the lambda that makes its exception runs once
    }
    org.apache.kafka.common.protocol.ApiKeys.values();
    org.apache.kafka.common.message.ApiMessageType.values();
  }
}
