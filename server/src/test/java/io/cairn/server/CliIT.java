package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.engine.sql.Result;
import io.cairn.server.cli.CairnCommand;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The command line as a user runs it against a node: formats, status, snapshots subcommands, exit codes. */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured under 2 s
class CliIT {
  private static final String DAILY = "0 0 0 * * ?";

  record Run(int exit, String out) {}

  static Run cairn(String... args) {
    PrintStream old = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      int code = CairnCommand.execute(args);
      return new Run(code, buf.toString(StandardCharsets.UTF_8));
    } finally {
      System.setOut(old);
    }
  }

  @Test
  void sqlFormatsStatusAndSnapshotsSubcommands(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, DAILY, List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 50, categories = 3, seed = 1, limit = 500)",
        "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category"));
    String cfgArg = yaml.toString();
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.serve();
      node.sql("CREATE MATERIALIZED VIEW odd AS SELECT 'NULL' AS a, NULL AS b, '' AS c, '日本語' AS d, 1.5 AS e "
          + "FROM gen WHERE id = 1");
      node.engine().tick();
      String q = "SELECT * FROM odd";
      Run table = cairn("sql", "--config", cfgArg, q);
      assertThat(table.exit()).isZero();
      String[] lines = table.out().split("\n");
      assertThat(lines[2]).contains("'NULL'").contains(" NULL ").contains("''").contains("日本語");
      // display width: the row's separators line up with the header's
      assertThat(Result.displayWidth(lines[0])).isEqualTo(Result.displayWidth(lines[2]));

      Run csv = cairn("sql", "--config", cfgArg, "--format", "csv", q);
      assertThat(csv.out()).isEqualTo("a,b,c,d,e\r\nNULL,,\"\",日本語,1.5\r\n");

      Run json = cairn("sql", "--config", cfgArg, "--format", "json", q + "; SELECT * FROM by_cat");
      JsonNode j = new ObjectMapper().readTree(json.out());
      assertThat(j.get(0).get("rows").get(0).get(0).asText()).isEqualTo("NULL");
      assertThat(j.get(0).get("rows").get(0).get(1).isNull()).isTrue();
      assertThat(j.get(1).get("columns").toString()).isEqualTo("[\"category\",\"n\"]");

      assertThat(cairn("sql", "--config", cfgArg, "--format", "xml", "SELECT 1").exit()).as("unknown format").isEqualTo(2);

      Run status = cairn("status", "--config", cfgArg);
      assertThat(status.out()).contains("node: SERVING").contains("gen").contains("by_cat").doesNotContain("{\"");
      Run statusJson = cairn("status", "--config", cfgArg, "--json");
      assertThat(new ObjectMapper().readTree(statusJson.out()).get("sources").has("gen")).isTrue();
      node.snapshotNow();
    }
    Run list = cairn("snapshots", "list", "--config", cfgArg);
    assertThat(list.exit()).isZero();
    assertThat(list.out()).contains("manifest");
    Run verify = cairn("snapshots", "verify", "--config", cfgArg);
    assertThat(verify.exit()).as(verify.out()).isZero();
    assertThat(verify.out()).startsWith("OK");
    assertThat(cairn("snapshots", "gc", "--config", cfgArg).exit()).isZero();
    assertThat(cairn("snapshots", "--config", cfgArg).exit()).as("no subcommand").isEqualTo(2);
    assertThat(cairn("snapshots", "frobnicate").exit()).as("unknown subcommand").isEqualTo(2);
    Run help = cairn("sql", "--help");
    assertThat(help.out()).contains("Example");
  }

  /** A second `cairn run` whose ports are taken fails before it takes the store: the running owner is not fenced. */
  @Test
  void aStartThatCannotListenFencesNobody(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, DAILY, List.of("CREATE SOURCE gen FROM LOAD GENERATOR (keys = 50, seed = 1, limit = 100)"));
    CairnConfig cfg = ConfigLoader.load(yaml, Map.of());
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.serve();
      long epochs;
      try (var s = java.nio.file.Files.list(dir.resolve("store").resolve("nodes"))) {
        epochs = s.filter(p -> p.getFileName().toString().endsWith(".json")).count();
      }
      Run second = cairn("run", "--config", yaml.toString());
      assertThat(second.exit()).isEqualTo(1);
      try (var s = java.nio.file.Files.list(dir.resolve("store").resolve("nodes"))) {
        assertThat(s.filter(p -> p.getFileName().toString().endsWith(".json")).count()).as("no new epoch taken").isEqualTo(epochs);
      }
      assertThat(node.fencedBy()).isNull();
      assertThat(node.sql("SHOW SOURCES")).contains("gen");
    }
  }
}
