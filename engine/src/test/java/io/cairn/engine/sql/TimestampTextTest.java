package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.DateTimeException;
import org.junit.jupiter.api.Test;

/** The timestamp texts a quoted literal compared with a TIMESTAMP column is read from. */
class TimestampTextTest {
  @Test
  void isoDatesAndTimesWithOptionalFractionAndOffset() {
    assertThat(Planner.timestampMicros("1970-01-01")).isZero();
    assertThat(Planner.timestampMicros("1970-01-01 00:00:01")).isEqualTo(1_000_000L);
    assertThat(Planner.timestampMicros("1970-01-01T00:01")).isEqualTo(60_000_000L);
    assertThat(Planner.timestampMicros("2023-11-14 22:13:20.1234")).isEqualTo(1_700_000_000_123_400L);
    assertThat(Planner.timestampMicros("2023-11-14 23:13:20.1234+01")).isEqualTo(1_700_000_000_123_400L);
    assertThat(Planner.timestampMicros("2023-11-14T16:43:20.1234-05:30")).isEqualTo(1_700_000_000_123_400L);
    assertThat(Planner.timestampMicros("2023-11-14T22:13:20.1234Z")).isEqualTo(1_700_000_000_123_400L);
    assertThat(Planner.timestampMicros("1969-12-31 23:59:59.999999")).isEqualTo(-1L);
    assertThatThrownBy(() -> Planner.timestampMicros("yesterday")).isInstanceOf(DateTimeException.class);
    assertThatThrownBy(() -> Planner.timestampMicros("2023-13-01")).isInstanceOf(DateTimeException.class);
  }
}
