package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.connectors.postgres.PgFixture.Oracle;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.SourceStatus;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Regression test for a caught-up flag that flapped: on an idle Postgres source the published
 * {@code caughtUp} turned false for about 0.4 s at intervals, although the source's position did
 * not move relative to the table. Runs a node's engine (default tick policy) over an idle table and
 * samples the published status every 5 ms for 20 s. The source's heartbeat (50 ms), statistics
 * (200 ms) and watermark (1 s) intervals are shorter than their defaults (1 s, 1 s, 10 s) so that
 * 20 s hold what would take minutes with the defaults: 400 heartbeats and 20 watermarks.
 */
class PostgresCaughtUpStableTest {
  /**
   * The cause: Debezium's heartbeats (and this source's own watermarks) wait in the hand-over
   * queue until the next poll, and {@code caughtUp()} answered false while anything waited there,
   * although they carry no change. Made deterministic here by not polling for a while: only
   * heartbeats queue up, and the answer must stay true; a change queued the same way turns it
   * false, and polling it turns it true again.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void heartbeatsWaitingInTheQueueDoNotMakeTheSourceBehind() {
    try (PgFixture pg = new PgFixture("hbq")) {
      pg.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text)", "ALTER TABLE items REPLICA IDENTITY FULL",
          "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 10) g");
      PostgresSource source = (PostgresSource) pg.open(pg.definition("hbq", "public.items", Map.of("heartbeat-interval-ms", "50")));
      try {
        source.seek(SourceOffsets.EMPTY);
        Oracle oracle = new Oracle();
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(60), () -> oracle.rows.size() == 10 && source.caughtUp(),
            "the initial load and a first watermark");
        PgFixture.sleep(1000); // not polled: heartbeats queue up (under the 2 s a watermark may be in flight)
        assertThat(source.queued()).as("heartbeats waiting in the queue").isPositive();
        assertThat(source.caughtUp()).as("caught up with only heartbeats waiting").isTrue();
        pg.exec("INSERT INTO items VALUES (11, 'new')");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (source.caughtUp()) {
          assertThat(System.nanoTime()).as("a queued change turns caughtUp false within 20 s").isLessThan(deadline);
          PgFixture.sleep(20);
        }
        PgFixture.pollUntil(source, oracle, Duration.ofSeconds(20), source::caughtUp, "the change");
        assertThat(oracle.rows).hasSize(11);
      } finally {
        source.close();
      }
    }
  }

  /** The node's view of it: the published status, sampled. */
  /**
   * A soak, not in the default build: sampling for 20 s did not see the flap on the old code either
   * (it is rare here: once in 25 s in one of three runs), so it cannot be relied on to fail; the
   * deterministic test above is the guard. Runs with {@code mvn verify -Psoak}.
   */
  @Test
  @org.junit.jupiter.api.Tag("soak")
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void caughtUpStaysTrueOnAnIdleTable() throws Exception {
    try (PgFixture pg = new PgFixture("steady")) {
      pg.exec("CREATE TABLE items (id bigint PRIMARY KEY, name text)", "ALTER TABLE items REPLICA IDENTITY FULL",
          "INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 100) g");
      try (Engine e = Engine.builder().workers(1).tickPolicy(TickPolicy.DEFAULT).secrets(pg.secrets())
          .connector(new PostgresConnector()).build()) {
        e.createSource(1, pg.definition("steady", "public.items",
            Map.of("stats-interval-ms", "200", "heartbeat-interval-ms", "50", "watermark-interval-ms", "1000")));
        e.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!e.caughtUp()) {
          assertThat(System.nanoTime()).as("caught up after the initial load within 60 s").isLessThan(deadline);
          Thread.sleep(10);
        }
        // sample the published status: every run of false is a flap
        List<Long> flapsMs = new ArrayList<>();
        long falseSince = -1;
        long samples = 0;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < end) {
          SourceStatus st = e.sourceStatus("steady").orElseThrow();
          assertThat(st.state()).isEqualTo(SourceStatus.State.RUNNING);
          long now = System.nanoTime();
          if (!st.caughtUp() && falseSince < 0) {
            falseSince = now;
          } else if (st.caughtUp() && falseSince >= 0) {
            flapsMs.add((now - falseSince) / 1_000_000);
            falseSince = -1;
          }
          samples++;
          Thread.sleep(5);
        }
        if (falseSince >= 0) {
          flapsMs.add((System.nanoTime() - falseSince) / 1_000_000);
        }
        System.out.printf("idle postgres source: %d samples in 20 s, caughtUp false %d time(s), for ms %s%n",
            samples, flapsMs.size(), flapsMs);
        assertThat(flapsMs).as("runs of caughtUp = false (ms each) on an idle table, sampled every 5 ms for 20 s").isEmpty();
      }
    }
  }
}
