package io.cairn.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.CatalogIntegrityException;
import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30: a start that is refused — bad configuration (exit 2) or a catalog it will not replay —
 * leaves the store byte for byte as it found it (every object listed and hashed before and after),
 * and a catalog tail removed by hand is detected and named. Each test failed on the build before.
 */
class RefusedStartIT {
  /** Every object of the local store under {@code dir/store}: its path and SHA-256. */
  static Map<String, String> objects(Path dir) {
    Path root = dir.resolve("store");
    Map<String, String> out = new TreeMap<>();
    if (!Files.exists(root)) {
      return out;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
        out.put(root.relativize(p).toString(),
            HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    return out;
  }

  private static Path withCron(Path yaml, String cron) throws IOException {
    Files.writeString(yaml, Files.readString(yaml).replace("cron: \"" + StoreIntegrityIT.DAILY + "\"", "cron: \"" + cron + "\""));
    return yaml;
  }

  @Test
  @Timeout(120)
  void aCronThatNeverFiresAgainExitsTwoBeforeTheStoreIsTouched(@TempDir Path dir) throws Exception {
    StoreIntegrityIT.prepared(dir);
    Path yaml = withCron(dir.resolve("cairn.yaml"), "0 0 0 1 1 ? 2001");
    Map<String, String> before = objects(dir);
    CliIT.Run run = CliIT.cairn("run", "--config", yaml.toString());
    assertThat(run.exit()).as(run.out()).isEqualTo(2);
    assertThat(objects(dir)).as("the store byte for byte as it was").isEqualTo(before);
    // an empty store: not even the catalog's first entry (init) or an epoch
    Path fresh = dir.resolve("fresh");
    Files.createDirectories(fresh);
    Path yaml2 = withCron(Http.config(fresh, StoreIntegrityIT.DAILY, StoreIntegrityIT.INIT), "0 0 0 1 1 ? 2001");
    assertThat(CliIT.cairn("run", "--config", yaml2.toString()).exit()).isEqualTo(2);
    assertThat(objects(fresh)).isEmpty();
  }

  @Test
  @Timeout(120)
  void anInitStatementThatDoesNotParseExitsTwoBeforeTheStoreIsTouched(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, StoreIntegrityIT.DAILY, List.of(StoreIntegrityIT.INIT.get(0), "CREATE MATERIALIZED VIEW v AS SELEC 1"));
    CliIT.Run run = CliIT.cairn("recover", "--until-caught-up", "--config", yaml.toString());
    assertThat(run.exit()).isEqualTo(2);
    assertThat(objects(dir)).as("no catalog entry of the statement before it, no epoch").isEmpty();
  }

  @Test
  @Timeout(60)
  void aStoreUriThatIsNotAUriExitsTwoAndCreatesNothing(@TempDir Path dir) throws Exception {
    Path yaml = Http.config(dir, StoreIntegrityIT.DAILY, StoreIntegrityIT.INIT);
    Files.writeString(yaml, Files.readString(yaml).replaceFirst("uri: \"[^\"]*\"", "uri: \"not a uri at all\""));
    org.junit.jupiter.api.Assumptions.assumeFalse(Files.exists(Path.of("not a uri at all")), "left by an earlier build");
    assertThat(CliIT.cairn("recover", "--until-caught-up", "--config", yaml.toString()).exit()).isEqualTo(2);
    assertThat(Path.of("not a uri at all")).as("no folder of that name in the working directory").doesNotExist();
  }

  @Test
  @Timeout(120)
  void aTailThatASnapshotIncludesIsRefusedBeforeAnEpochIsTaken(@TempDir Path dir) throws Exception {
    CairnConfig cfg = StoreIntegrityIT.prepared(dir);
    Files.delete(StoreIntegrityIT.catalogEntry(dir, 4));
    Map<String, String> before = objects(dir);
    assertThatThrownBy(() -> Node.recover(cfg, Node.Options.defaults()))
        .isInstanceOf(CatalogIntegrityException.class).hasMessageContaining("entries 4..4 are missing");
    assertThat(objects(dir)).as("no epoch object: the running owner is not fenced by a start that refuses").isEqualTo(before);
  }

  @Test
  @Timeout(120)
  void aRemovedTailNewerThanEverySnapshotIsDetectedAndNamed(@TempDir Path dir) throws Exception {
    CairnConfig cfg = ConfigLoader.load(Http.config(dir, StoreIntegrityIT.DAILY, StoreIntegrityIT.INIT), Map.of());
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      node.engine().tick();
      node.snapshotNow(); // includes entries 0-1 (init)
      node.sql("CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM gen WHERE amount > 500");
      node.sql("CREATE MATERIALIZED VIEW small AS SELECT id, amount FROM gen WHERE amount < 100");
    }
    Path e2 = StoreIntegrityIT.catalogEntry(dir, 2);
    Path e3 = StoreIntegrityIT.catalogEntry(dir, 3);
    byte[] b2 = Files.readAllBytes(e2);
    byte[] b3 = Files.readAllBytes(e3);
    Files.delete(e3);
    Files.delete(e2);
    Map<String, String> before = objects(dir);
    assertThatThrownBy(() -> Node.recover(cfg, Node.Options.defaults()))
        .isInstanceOf(CatalogIntegrityException.class)
        .hasMessageContaining("entries 2..3 are missing").hasMessageContaining("catalog-heads/00000000000000000003.json");
    assertThat(objects(dir)).as("a refused start writes nothing").isEqualTo(before);
    StringBuilder out = new StringBuilder();
    assertThat(StoreIntegrityIT.verify(dir, out)).as(out.toString()).isEqualTo(1);
    assertThat(out.toString()).contains("INVALID  catalog (2 entries)").contains("entries 2..3 are missing");

    // only the last one removed: named too
    Files.write(e2, b2);
    assertThatThrownBy(() -> Node.recover(cfg, Node.Options.defaults()))
        .isInstanceOf(CatalogIntegrityException.class).hasMessageContaining("entries 3..3 are missing");

    // restored: the views are back
    Files.write(e3, b3);
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.engine().dataflow("big")).isPresent();
      assertThat(node.engine().dataflow("small")).isPresent();
    }
  }

  @Test
  @Timeout(120)
  void aStoreWithoutWitnessesGetsOneForItsHeadAtTheNextStart(@TempDir Path dir) throws Exception {
    CairnConfig cfg = StoreIntegrityIT.prepared(dir); // entries 0-4
    Path heads = dir.resolve("store").resolve("catalog-heads");
    try (Stream<Path> s = Files.list(heads)) {
      for (Path p : s.toList()) {
        Files.delete(p); // as an older build left the store
      }
    }
    try (Node node = Node.recover(cfg, Node.Options.defaults())) {
      assertThat(node.session().position()).isEqualTo(5);
    }
    try (Stream<Path> s = Files.list(heads)) {
      assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("00000000000000000004.json");
    }
    Files.delete(StoreIntegrityIT.catalogEntry(dir, 4));
    Files.delete(StoreIntegrityIT.catalogEntry(dir, 3));
    assertThatThrownBy(() -> Node.recover(cfg, Node.Options.defaults()))
        .isInstanceOf(CatalogIntegrityException.class).hasMessageContaining("entries 3..4 are missing");
  }

  @Test
  @Timeout(120)
  void verifyCountsTheEntriesOfACatalogWithAGap(@TempDir Path dir) throws Exception {
    StoreIntegrityIT.prepared(dir);
    Files.delete(StoreIntegrityIT.catalogEntry(dir, 2));
    StringBuilder out = new StringBuilder();
    assertThat(StoreIntegrityIT.verify(dir, out)).isEqualTo(1);
    assertThat(out.toString()).contains("INVALID  catalog (4 entries)").doesNotContain("(0 entries)").contains("entry 2");
  }
}
