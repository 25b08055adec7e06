package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stranger reads a view out of a snapshot: {@code cairn snapshots export} writes it as Parquet
 * with the view's column names, and the README's DuckDB query over that file gives exactly what
 * {@code SELECT * FROM view} gave on the node when the snapshot was taken.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // measured 1 s
class ExportIT {
  private static final String DAILY = "0 0 0 * * ?";

  @Test
  void anExportedViewReadByDuckDbEqualsTheNodesSelect(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, DAILY, List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 300, categories = 7, seed = 3, limit = 3000)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total, AVG(amount) AS mean FROM gen GROUP BY category",
        "CREATE MATERIALIZED VIEW labelled AS SELECT id, 'é' AS tag, NULL AS nothing, amount FROM gen WHERE amount > 900"));
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    List<Row> byCat;
    List<Row> labelled;
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      while (node.engine().offsets().get("gen").getLong("offset", 0) < 3000) {
        node.engine().tick();
      }
      byCat = sorted(node.engine().peek("by_cat"));
      labelled = sorted(node.engine().peek("labelled"));
      node.snapshotNow();
    }
    assertThat(byCat).isNotEmpty();
    assertThat(labelled).isNotEmpty();

    Path out = dir.resolve("by_cat.parquet");
    CliIT.Run r = CliIT.cairn("snapshots", "export", "by_cat", "--to", out.toString(), "--config", yaml.toString());
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out()).contains("exported view by_cat").contains(byCat.size() + " rows");
    Path out2 = dir.resolve("labelled.parquet");
    assertThat(CliIT.cairn("snapshots", "export", "labelled", "--to", out2.toString(), "--config", yaml.toString()).exit()).isZero();

    try (Connection c = DriverManager.getConnection("jdbc:duckdb:"); Statement st = c.createStatement()) {
      // the README's recipe
      try (ResultSet rs = st.executeQuery("SELECT * EXCLUDE (_time, _diff) FROM '" + out + "'")) {
        ResultSetMetaData md = rs.getMetaData();
        assertThat(List.of(md.getColumnName(1), md.getColumnName(2), md.getColumnName(3), md.getColumnName(4)))
            .as("the view's column names, in the view's order").containsExactly("category", "n", "total", "mean");
        assertThat(sorted(rows(rs))).isEqualTo(byCat);
      }
      try (ResultSet rs = st.executeQuery("SELECT * EXCLUDE (_time, _diff) FROM '" + out2 + "'")) {
        assertThat(sorted(rows(rs))).isEqualTo(labelled);
      }
      try (ResultSet rs = st.executeQuery("SELECT DISTINCT _diff FROM '" + out + "'")) {
        assertThat(rows(rs)).containsExactly(Row.of(1L));
      }
    }

    CliIT.Run missing = CliIT.cairn("snapshots", "export", "nope", "--to", dir.resolve("x.parquet").toString(), "--config", yaml.toString());
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(Files.exists(dir.resolve("x.parquet"))).isFalse();
  }

  private static List<Row> rows(ResultSet rs) throws Exception {
    List<Row> out = new ArrayList<>();
    int n = rs.getMetaData().getColumnCount();
    while (rs.next()) {
      Object[] v = new Object[n];
      for (int i = 0; i < n; i++) {
        Object o = rs.getObject(i + 1);
        v[i] = o instanceof Integer x ? (Object) x.longValue() : o instanceof Float f ? (Object) f.doubleValue() : o;
      }
      out.add(Row.of(v));
    }
    return out;
  }

  private static List<Row> sorted(List<Row> rows) {
    List<Row> copy = new ArrayList<>(rows);
    copy.sort(null);
    return copy;
  }
}
