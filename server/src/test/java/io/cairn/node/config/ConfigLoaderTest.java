package io.cairn.node.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.objectstore.ObjectStores;
import io.cairn.objectstore.exceptions.ObjectStoreConfigException;
import io.cairn.server.cli.CairnCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Configuration errors name what was wrong and exit 2; nothing a user sets is silently ignored. */
class ConfigLoaderTest {
  @Test
  void anEnvironmentVariableThatMatchesNoKeyIsAnError() {
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_HTTP_PROT", "8080")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("CAIRN_HTTP_PROT");
    assertThat(ConfigLoader.load(null, Map.of("CAIRN_HTTP_PORT", "8080", "CAIRN_JAVA_OPTS", "-Xmx1g")).httpPort()).isEqualTo(8080);
  }

  @Test
  void groupKeysAreReadAndCheckedBeforeAnythingElseHappens(@TempDir Path dir) throws Exception {
    assertThat(ConfigLoader.load(null, Map.of()).group().enabled()).as("no group by default: one node, no Kafka").isFalse();
    String store = "memory:group-test";
    CairnConfig a = ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", store, "CAIRN_GROUP_BOOTSTRAP_SERVERS", "127.0.0.1:9092"));
    CairnConfig b = ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", store, "CAIRN_GROUP_BOOTSTRAP_SERVERS", "127.0.0.1:9092"));
    assertThat(a.group().enabled()).isTrue();
    assertThat(a.group().name()).as("derived from the store: nodes on one store form one group").startsWith("store-")
        .isEqualTo(b.group().name());
    assertThat(ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", "memory:other", "CAIRN_GROUP_BOOTSTRAP_SERVERS", "k:9092"))
        .group().name()).isNotEqualTo(a.group().name());
    assertThat(a.group().sessionTimeout()).isEqualTo(Duration.ofSeconds(6));
    Path file = dir.resolve("g.yaml");
    Files.writeString(file, "group:\n  bootstrap-servers: k:9092\n  name: blue\n  session-timeout: 10s\n"
        + "  properties:\n    security.protocol: SASL_PLAINTEXT\n");
    CairnConfig.Group g = ConfigLoader.load(file, Map.of()).group();
    assertThat(g.name()).isEqualTo("blue");
    assertThat(g.sessionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(g.properties()).containsEntry("security.protocol", "SASL_PLAINTEXT");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_GROUP_BOOTSTRAP_SERVERS", "k:9092", "CAIRN_GROUP_SESSION_TIMEOUT", "500ms")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("group.session-timeout");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_GROUP_BOOTSTRAP_SERVERS", "k:9092", "CAIRN_GROUP_NAME", "no spaces")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("group.name");
  }

  @Test
  void theLaunchersOwnVariablesAreNotConfiguration() {
    // bin/cairn documents these; a node started with any of them set must start
    Map<String, String> env = Map.of("CAIRN_LOG_LEVEL", "DEBUG", "CAIRN_EXTRA_CLASSPATH", "/x.jar", "CAIRN_CLASS_CACHE", "off",
        "CAIRN_JAVA_OPTS", "-Xmx1g", "CAIRN_HTTP_PORT", "8080");
    assertThat(ConfigLoader.load(null, env).httpPort()).isEqualTo(8080);
  }

  @Test
  void restartAndBodyLimitKeysAreReadAndChecked() {
    CairnConfig c = ConfigLoader.load(null, Map.of("CAIRN_SOURCES_RESTART_MAX_BACKOFF", "5m", "CAIRN_HTTP_MAX_BODY", "2048"));
    assertThat(c.sourceRestart().maxBackoff()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.httpMaxBodyBytes()).isEqualTo(2048);
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_SOURCES_RESTART_JITTER", "1.5")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("sources.restart").hasMessageContaining("jitter");
  }

  @Test
  void aLocalStoreDirectoryIsCreatedAndTakesNoProperties(@TempDir Path dir) throws Exception {
    Path store = dir.resolve("a").resolve("b");
    CairnConfig c = ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", "file://" + store));
    ObjectStores.open(c.storeUri(), c.storeProperties()).close();
    assertThat(Files.isDirectory(store)).isTrue();
    assertThatThrownBy(() -> ObjectStores.open(c.storeUri(), Map.of("s3.region", "eu-west-1")))
        .isInstanceOf(ObjectStoreConfigException.class).hasMessageContaining("s3.region").hasMessageContaining("file://");
  }

  @Test
  void configurationErrorsExitWithTwoAndSubcommandsHaveHelp(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, "store:\n  uri: \"file://" + dir + "/s\"\n  properties:\n    s3.region: x\nhttp:\n  port: 0\n");
    assertThat(CairnCommand.execute("snapshots", "list", "--config", f.toString())).isEqualTo(2);
    assertThat(CairnCommand.execute("run", "--help")).isZero();
    assertThat(CairnCommand.execute("recover", "--help")).isZero();
  }

  /** One vocabulary: the schedule is checked by the schedule's own parser before recovery, and the error names the user's key. */
  @Test
  void aBadCronOrZoneIsAConfigurationErrorNamingTheKey(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_SNAPSHOTS_CRON", "61 * * * * ?")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("snapshots.cron").hasMessageContaining("61 * * * * ?")
        .hasMessageNotContaining("snapshot.schedule");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_SNAPSHOTS_ZONE", "Mars/Olympus")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("snapshots.zone");
    Path f = dir.resolve("c.yaml");
    Files.writeString(f, "store:\n  uri: \"file://" + dir + "/s\"\nsnapshots:\n  cron: \"0 0 25 * * ?\"\nhttp:\n  port: 0\n");
    assertThat(CairnCommand.execute("recover", "--config", f.toString())).as("exit code").isEqualTo(2);
    assertThat(Files.exists(dir.resolve("s"))).as("nothing written before the configuration was checked").isFalse();
  }

  /** Issue 30: such values were taken (a folder named "not a uri at all"), or refused only after the store was written. */
  @Test
  @org.junit.jupiter.api.Timeout(30)
  void storeUrisCronsThatNeverFireAndInitThatDoesNotParseAreRefusedWhenRead() {
    for (String bad : new String[] {"not a uri at all", "cairn-data", "./cairn-data", "http://host/x", "s3://", "file://"}) {
      assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", bad)))
          .as(bad).isInstanceOf(ConfigException.class).hasMessageContaining("store.uri");
    }
    for (String good : new String[] {"file:./cairn-data", "file:data", "file:///var/lib/cairn", "s3://bucket/prefix?endpoint=http://127.0.0.1:9000",
        "memory:x"}) {
      assertThat(ConfigLoader.load(null, Map.of("CAIRN_STORE_URI", good)).storeUri()).as(good).isNotBlank();
    }
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_SNAPSHOTS_CRON", "0 0 0 1 1 ? 2001")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("snapshots.cron").hasMessageContaining("never fires");
    assertThat(ConfigLoader.load(null, Map.of("CAIRN_SNAPSHOTS_CRON", "0 0 0 1 1 ? 2001-2999")).snapshotCron()).isNotBlank();
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_HTTP_HOST", "no-such-host.invalid")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("http.host");
  }

  @Test
  @org.junit.jupiter.api.Timeout(30)
  void anInitStatementThatDoesNotParseIsAConfigurationError(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("cairn.yaml");
    Files.writeString(f, "init:\n  - \"CREATE MATERIALIZED VIEW v AS SELEC 1\"\n");
    assertThatThrownBy(() -> ConfigLoader.load(f, Map.of()))
        .isInstanceOf(ConfigException.class).hasMessageContaining("'init'").hasMessageContaining("statement 1 of 1");
  }

  @Test
  void theDefaultsAreCairnConfigDefaultsLoadedAsWritten() {
    CairnConfig loaded = ConfigLoader.load(null, Map.of());
    CairnConfig d = CairnConfig.DEFAULTS;
    // the store URI is resolved against the working directory when loaded; everything else is as written
    assertThat(loaded.storeUri()).startsWith("file:///").endsWith("/cairn-data?create=true");
    assertThat(new CairnConfig(d.storeUri(), loaded.storeProperties(), loaded.workers(), loaded.tickMaxRecords(),
        loaded.tickMaxDuration(), loaded.snapshotCron(), loaded.snapshotZone(), loaded.keepLast(), loaded.keepDailyDays(),
        loaded.gcGrace(), loaded.httpHost(), loaded.httpPort(), loaded.catchUpRateLimit(), loaded.init(), loaded.httpMaxBodyBytes(),
        loaded.sourceRestart(), loaded.pgwireHost(), loaded.pgwirePort(), loaded.pgwireMaxConnections(), loaded.limits()))
        .isEqualTo(d);
    assertThat(d.pgwirePort()).isEqualTo(6875);
  }

  @Test
  void aDurationIsWrittenOneWay() {
    assertThat(ConfigLoader.parseDuration("k", "200ms")).isEqualTo(Duration.ofMillis(200));
    assertThat(ConfigLoader.parseDuration("k", "30s")).isEqualTo(Duration.ofSeconds(30));
    assertThat(ConfigLoader.parseDuration("k", "5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(ConfigLoader.parseDuration("k", "1h")).isEqualTo(Duration.ofHours(1));
    assertThat(ConfigLoader.parseDuration("k", "2d")).isEqualTo(Duration.ofDays(2));
    assertThat(ConfigLoader.parseDuration("k", "0")).isZero();
    for (String other : new String[] {"PT1H", "5 s", "1.5h", "10", "-1s", "1w"}) {
      assertThatThrownBy(() -> ConfigLoader.parseDuration("engine.tick.max-duration", other)).as(other)
          .isInstanceOf(ConfigException.class).hasMessageContaining("'engine.tick.max-duration'").hasMessageContaining("200ms");
    }
    for (Duration d : new Duration[] {Duration.ZERO, Duration.ofMillis(1500), Duration.ofSeconds(60), Duration.ofHours(48),
        Duration.ofMinutes(90)}) {
      assertThat(ConfigLoader.parseDuration("k", ConfigLoader.formatDuration(d))).isEqualTo(d);
    }
    assertThat(ConfigLoader.formatDuration(Duration.ofSeconds(60))).isEqualTo("1m");
    assertThatThrownBy(() -> ConfigLoader.load(null, Map.of("CAIRN_SNAPSHOTS_RETENTION_GC_GRACE", "PT1H")))
        .isInstanceOf(ConfigException.class).hasMessageContaining("snapshots.retention.gc-grace");
  }
}
