package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.util.ContextInitializer;
import ch.qos.logback.core.read.ListAppender;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.RestartStrategy;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.testkit.postgres.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Regression test for issue 30 item 12: a Postgres restart that the source survives by itself
 * logged ERROR lines with stack traces. Such an event is WARN lines without stack traces; ERROR
 * is for what needs a person. Logging is configured from the shipped configuration (dist
 * conf/logback.xml) for the test, so that what is checked is what an operator sees: every event at
 * WARN and above, from any logger, from the server's stop until the source is back and caught up.
 */
class PostgresRestartLogTest {
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aPostgresRestartTheSourceSurvivesLogsNoErrorAndNoStackTrace() throws Exception {
    // the PgFixture's own connection is closed before the restart; others are the source's
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    java.io.File shipped = java.nio.file.Path.of("..", "dist", "src", "main", "conf", "logback.xml").toFile();
    assertThat(shipped).as("the shipped logging configuration").exists();
    ctx.reset();
    JoranConfigurator jc = new JoranConfigurator();
    jc.setContext(ctx);
    jc.doConfigure(shipped);
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.setContext(ctx);
    events.start();
    try (PostgresServer server = PostgresServer.start()) {
      PgFixture pg = new PgFixture(server, "pgrestart");
      pg.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text)", "ALTER TABLE items REPLICA IDENTITY FULL",
          "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 10) g");
      try (Engine e = Engine.builder().workers(1).tickPolicy(new TickPolicy(10_000, Duration.ofMillis(100)))
          .restartStrategy(new RestartStrategy(Duration.ofMillis(500), Duration.ofSeconds(2), 2, 0.2, 0))
          .secrets(pg.secrets()).connector(new PostgresConnector()).build()) {
        e.createSource(1, pg.definition("items", "public.items", Map.of()));
        awaitRunningAndCaughtUp(e, 60);
        pg.close();
        root.addAppender(events);
        server.restart(Duration.ofSeconds(2));
        PgFixture again = new PgFixture(server, "pgrestart2");
        again.close();
        // the source comes back by itself and reads a change made after the restart
        try (var c = server.connect(pg.database); var st = c.createStatement()) {
          st.execute("INSERT INTO items VALUES (11, 'after')");
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (e.peek("items").size() < 11 || !e.caughtUp()) {
          assertThat(System.nanoTime()).as("back and caught up within 90 s").isLessThan(deadline);
          e.tick();
        }
        assertThat(e.sourceStatus("items").orElseThrow().state()).isEqualTo(SourceStatus.State.RUNNING);
      }
    } finally {
      root.detachAppender(events);
      ctx.reset();
      new ContextInitializer(ctx).autoConfig(); // back to the tests' configuration
    }
    List<ILoggingEvent> loud = events.list.stream().filter(ev -> ev.getLevel().isGreaterOrEqual(Level.WARN)).toList();
    for (ILoggingEvent ev : loud) {
      System.out.printf("%s %s - %s%s%n", ev.getLevel(), ev.getLoggerName(), ev.getFormattedMessage(),
          ev.getThrowableProxy() == null ? "" : " [stack trace: " + ev.getThrowableProxy().getClassName() + "]");
    }
    assertThat(loud).as("WARN and above while the source restarted by itself").isNotEmpty();
    assertThat(loud).as("no ERROR for a restart the node handles by itself")
        .noneMatch(ev -> ev.getLevel().isGreaterOrEqual(Level.ERROR));
    assertThat(loud).as("no stack trace at WARN or above").noneMatch(ev -> ev.getThrowableProxy() != null);
    assertThat(loud.stream().filter(ev -> ev.getFormattedMessage().contains("cannot read statistics")).count())
        .as("one line per outage from the source's monitor, not one per probe").isLessThanOrEqualTo(2);
  }

  private static void awaitRunningAndCaughtUp(Engine e, int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!e.caughtUp()) {
      assertThat(System.nanoTime()).as("caught up within %d s", seconds).isLessThan(deadline);
      e.tick();
    }
  }
}
