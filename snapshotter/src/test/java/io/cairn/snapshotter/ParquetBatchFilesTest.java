package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Description;
import io.cairn.engine.trace.Update;
import io.cairn.snapshotter.exceptions.CorruptSnapshotException;
import io.cairn.snapshotter.format.ParquetBatchFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ParquetBatchFilesTest {
  static final Schema KEY = Schema.of(Column.of("id", Type.BIGINT), Column.of("name", Type.TEXT));
  static final Schema VAL = Schema.of(Column.of("id", Type.BIGINT), Column.of("price", Type.DOUBLE), Column.of("ok", Type.BOOLEAN),
      Column.of("at", Type.TIMESTAMP), Column.of("nothing", Type.NULL));
  static final Description DESC = new Description(3, 9, 3);

  @TempDir Path dir;

  static Batch sample() {
    List<Update> u = new ArrayList<>();
    u.add(new Update(Row.of(1L, "a"), Row.of(1L, 2.5, true, 1_700_000_000_000_000L, null), 3, 1));
    u.add(new Update(Row.of(2L, "b\u00e9\u4e2d"), Row.of(2L, null, false, null, null), 4, -2));
    u.add(new Update(Row.of(null, null), Row.of(null, -0.0, null, 0L, null), 8, 5));
    u.add(new Update(Row.of(3L, ""), Row.of(3L, Double.NaN, true, -1L, null), 5, 1));
    return Batch.fromUpdates(KEY, VAL, u, DESC);
  }

  @Test
  void roundTripKeepsIdDescriptionAndEveryValue() {
    Batch b = sample();
    byte[] bytes = ParquetBatchFiles.toBytes("d000002.0.join-left", 1, b);
    Batch back = ParquetBatchFiles.read("t", bytes, b.id(), KEY, VAL, DESC, b.size());
    assertThat(back.id()).isEqualTo(b.id());
    assertThat(back.description()).isEqualTo(DESC);
    List<Update> a = new ArrayList<>();
    List<Update> e = new ArrayList<>();
    for (int i = 0; i < b.size(); i++) {
      a.add(back.update(i));
      e.add(b.update(i));
    }
    assertThat(a).isEqualTo(e);
  }

  @Test
  void dateColumnsAreParquetDatesThatRoundTripAndDuckDbReadsAsDates() throws Exception {
    Schema key = Schema.of(Column.of("day", Type.DATE));
    Schema val = Schema.of(Column.of("n", Type.BIGINT), Column.of("due", Type.DATE));
    long d2024 = java.time.LocalDate.parse("2024-02-29").toEpochDay();
    List<Update> u = new ArrayList<>();
    u.add(new Update(Row.of(d2024), Row.of(1L, d2024 + 30), 3, 1));
    u.add(new Update(Row.of(-1L), Row.of(2L, null), 4, -1)); // 1969-12-31
    u.add(new Update(Row.of((Object) null), Row.of(3L, 2_932_896L), 5, 2)); // 9999-12-31
    u.add(new Update(Row.of(0L), Row.of(4L, -719_162L), 6, 1)); // 0001-01-01
    Batch b = Batch.fromUpdates(key, val, u, DESC);
    byte[] bytes = ParquetBatchFiles.toBytes("d.dates", 0, b);
    Batch back = ParquetBatchFiles.read("t", bytes, b.id(), key, val, DESC, b.size());
    for (int i = 0; i < b.size(); i++) {
      assertThat(back.update(i)).isEqualTo(b.update(i));
    }
    Path f = dir.resolve("dates.parquet");
    Files.write(f, bytes);
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
      List<String> cols = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet('" + f + "')")) {
        while (rs.next()) {
          cols.add(rs.getString(1) + " " + rs.getString(2));
        }
      }
      assertThat(cols).containsExactly("day DATE", "n BIGINT", "due DATE", "_time BIGINT", "_diff BIGINT");
      List<String> days = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("SELECT strftime(day, '%Y-%m-%d'), strftime(due, '%Y-%m-%d') FROM read_parquet('" + f + "') ORDER BY n")) {
        while (rs.next()) {
          days.add(rs.getString(1) + " " + rs.getString(2));
        }
      }
      assertThat(days).containsExactly("2024-02-29 2024-03-30", "1969-12-31 null", "null 9999-12-31", "1970-01-01 0001-01-01");
    }
  }

  @Test
  void numericColumnsAreDecimal38Of18ThatRoundTripExactlyAndDuckDbReadsAsDecimals() throws Exception {
    Schema key = Schema.of(Column.of("price", Type.NUMERIC));
    Schema val = Schema.of(Column.of("n", Type.BIGINT), Column.of("total", Type.NUMERIC));
    java.math.BigDecimal[] values = {new java.math.BigDecimal("12.34"), new java.math.BigDecimal("-0.000000000000000001"),
        new java.math.BigDecimal("99999999999999999999.999999999999999999"), new java.math.BigDecimal("-99999999999999999999.999999999999999999"),
        java.math.BigDecimal.ZERO, new java.math.BigDecimal("100")};
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      u.add(new Update(Row.of(values[i]), Row.of((long) i, i % 2 == 0 ? values[values.length - 1 - i] : null), 3 + i % 4, 1));
    }
    Batch b = Batch.fromUpdates(key, val, u, DESC);
    byte[] bytes = ParquetBatchFiles.toBytes("d.numeric", 0, b);
    Batch back = ParquetBatchFiles.read("t", bytes, b.id(), key, val, DESC, b.size());
    for (int i = 0; i < b.size(); i++) {
      assertThat(back.update(i)).isEqualTo(b.update(i));
    }
    Path f = dir.resolve("numeric.parquet");
    Files.write(f, bytes);
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
      List<String> cols = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet('" + f + "')")) {
        while (rs.next()) {
          cols.add(rs.getString(1) + " " + rs.getString(2));
        }
      }
      assertThat(cols).containsExactly("price DECIMAL(38,18)", "n BIGINT", "total DECIMAL(38,18)", "_time BIGINT", "_diff BIGINT");
      try (ResultSet rs = st.executeQuery("SELECT price, n FROM read_parquet('" + f + "') ORDER BY n")) {
        int i = 0;
        while (rs.next()) {
          assertThat(rs.getBigDecimal(1).compareTo(values[(int) rs.getLong(2)])).as("row %d", i).isZero();
          i++;
        }
        assertThat(i).isEqualTo(values.length);
      }
    }
  }

  @Test
  void intervalColumnsKeepTheirThreeFieldsAndDuckDbCastsThem() throws Exception {
    Schema key = Schema.of(Column.of("id", Type.BIGINT));
    Schema val = Schema.of(Column.of("span", Type.INTERVAL));
    io.cairn.engine.row.Interval[] values = {new io.cairn.engine.row.Interval(1, 0, 0), new io.cairn.engine.row.Interval(0, 30, 0),
        new io.cairn.engine.row.Interval(14, 3, 14_706_500_000L), new io.cairn.engine.row.Interval(0, -1, 7_200_000_000L),
        new io.cairn.engine.row.Interval(0, 0, -1), new io.cairn.engine.row.Interval(-25, 400, 86_400_000_001L), null};
    List<Update> u = new ArrayList<>();
    for (int i = 0; i < values.length; i++) {
      u.add(new Update(Row.of((long) i), Row.of(values[i]), 3, 1));
    }
    Batch b = Batch.fromUpdates(key, val, u, DESC);
    byte[] bytes = ParquetBatchFiles.toBytes("d.interval", 0, b);
    Batch back = ParquetBatchFiles.read("t", bytes, b.id(), key, val, DESC, b.size());
    for (int i = 0; i < b.size(); i++) {
      // field by field: '1 mon' equals '30 days' as a value, but each keeps what it was
      assertThat(String.valueOf(back.update(i).val().get(0))).isEqualTo(String.valueOf(values[(int) back.update(i).key().getLong(0)]));
    }
    Path f = dir.resolve("interval.parquet");
    Files.write(f, bytes);
    // DuckDB reads the text as its INTERVAL, whose months, days and microseconds are cairn's three fields
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id, 12 * datepart('year', s) + datepart('month', s), datepart('day', s),"
            + " datepart('microseconds', s) + 60000000 * datepart('minute', s) + 3600000000 * datepart('hour', s)"
            + " FROM (SELECT id, CAST(span AS INTERVAL) AS s FROM read_parquet('" + f + "')) ORDER BY id")) {
      int i = 0;
      while (rs.next()) {
        io.cairn.engine.row.Interval want = values[(int) rs.getLong(1)];
        if (want == null) {
          assertThat(rs.getObject(2)).isNull();
        } else {
          assertThat(List.of(rs.getLong(2), rs.getLong(3), rs.getLong(4))).as("row %d", i)
              .isEqualTo(List.of((long) want.months(), (long) want.days(), want.micros()));
        }
        i++;
      }
      assertThat(i).isEqualTo(values.length);
    }
  }

  @Test
  void duckDbReadsTheFileWithItsColumnsTypesAndFooter() throws Exception {
    Batch b = sample();
    Path f = dir.resolve("b.parquet");
    Files.write(f, ParquetBatchFiles.toBytes("arr", 0, b));
    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
      List<String> cols = new ArrayList<>();
      try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet('" + f + "')")) {
        while (rs.next()) {
          cols.add(rs.getString(1) + " " + rs.getString(2));
        }
      }
      assertThat(cols).containsExactly("id BIGINT", "name VARCHAR", "val_id BIGINT", "price DOUBLE", "ok BOOLEAN",
          "at TIMESTAMP WITH TIME ZONE", "nothing BOOLEAN", "_time BIGINT", "_diff BIGINT");
      try (ResultSet rs = st.executeQuery(
          "SELECT count(*), sum(_diff), count(name), max(price) FILTER (WHERE NOT isnan(price)), string_agg(name, ',' ORDER BY name) FROM read_parquet('" + f + "')")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(4);
        assertThat(rs.getLong(2)).isEqualTo(5);
        assertThat(rs.getLong(3)).isEqualTo(3);
        assertThat(rs.getDouble(4)).isEqualTo(2.5);
        assertThat(rs.getString(5)).isEqualTo(",a,b\u00e9\u4e2d");
      }
      try (ResultSet rs = st.executeQuery("SELECT epoch_us(\"at\") FROM read_parquet('" + f + "') WHERE id = 1")) {
        rs.next();
        assertThat(rs.getLong(1)).isEqualTo(1_700_000_000_000_000L);
      }
      try (ResultSet rs = st.executeQuery("SELECT decode(value) FROM parquet_kv_metadata('" + f + "') WHERE decode(key) = 'cairn.batch-id'")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo(b.id());
      }
      try (ResultSet rs = st.executeQuery("SELECT compression FROM parquet_metadata('" + f + "') LIMIT 1")) {
        rs.next();
        assertThat(rs.getString(1)).isEqualTo("ZSTD");
      }
    }
  }

  @Test
  void aFooterThatDisagreesWithTheManifestIsRejected() {
    Batch b = sample();
    byte[] bytes = ParquetBatchFiles.toBytes("arr", 0, b);
    assertThatThrownBy(() -> ParquetBatchFiles.read("t", bytes, "other-id", KEY, VAL, DESC, b.size()))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("cairn.batch-id");
    assertThatThrownBy(() -> ParquetBatchFiles.read("t", bytes, b.id(), KEY, VAL, new Description(3, 10, 3), b.size()))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("cairn.upper");
    assertThatThrownBy(() -> ParquetBatchFiles.read("t", bytes, b.id(), KEY, VAL, DESC, b.size() + 1))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("rows");
    assertThatThrownBy(() -> ParquetBatchFiles.read("t", new byte[] {1, 2, 3}, b.id(), KEY, VAL, DESC, b.size()))
        .isInstanceOf(CorruptSnapshotException.class).hasMessageContaining("Cannot read batch file t");
  }

  static Gen<List<Update>> updates() {
    Gen<Long> keys = Gen.longs(-50, 50).orNull(0.1);
    Gen<String> texts = Gen.strings(6).orNull(0.2);
    Gen<Double> doubles = Gen.anyDouble().orNull(0.2);
    Gen<Long> times = Gen.longs(0, 20);
    Gen<Long> diffs = Gen.longs(-3, 3);
    Gen<Update> u = (r, size) ->
        new Update(Row.of(keys.next(r, size)), Row.of(texts.next(r, size), doubles.next(r, size)), times.next(r, size), diffs.next(r, size));
    return u.list(0, 200);
  }

  @Test
  void anyBatchRoundTrips() {
    Property.tries(60).forAll(updates(), ParquetBatchFilesTest::roundTrips);
  }

  private static void roundTrips(List<Update> updates) {
    Schema key = Schema.of(Column.of("k", Type.BIGINT));
    Schema val = Schema.of(Column.of("t", Type.TEXT), Column.of("d", Type.DOUBLE));
    Batch b = Batch.fromUpdates(key, val, updates, new Description(0, 21, 0));
    Batch back = ParquetBatchFiles.read("p", ParquetBatchFiles.toBytes("a", 0, b), b.id(), key, val, b.description(), b.size());
    assertThat(back.size()).isEqualTo(b.size());
    for (int i = 0; i < b.size(); i++) {
      assertThat(back.update(i)).isEqualTo(b.update(i));
    }
    assertThat(Map.of("id", back.id())).isEqualTo(Map.of("id", b.id()));
  }
}
