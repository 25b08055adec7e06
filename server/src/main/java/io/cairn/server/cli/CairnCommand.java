package io.cairn.server.cli;

import io.cairn.node.config.CairnConfig;
import io.cairn.node.config.ConfigException;
import io.cairn.node.config.ConfigLoader;
import io.cairn.node.Node;
import io.cairn.node.OfflineStore;
import io.cairn.node.RecoveryReport;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The {@code cairn} command line. */
@Command(
    name = "cairn",
    mixinStandardHelpOptions = true,
    version = "cairn 0.1.0",
    description = "An incremental dataflow engine whose state survives restarts.",
    subcommands = {
      CairnCommand.Run.class,
      CairnCommand.Recover.class,
      CairnCommand.Snapshot.class,
      CairnCommand.Snapshots.class,
      CairnCommand.Sql.class,
      CairnCommand.Status.class,
      CairnCommand.Advise.class,
      ClassCache.class
    })
public final class CairnCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns the exit code (0 ok, 1 failure, 2 usage or configuration error). */
  public static int execute(String... args) {
    CommandLine cl = new CommandLine(new CairnCommand());
    for (CairnSubcommand extra : ServiceLoader.load(CairnSubcommand.class)) {
      cl.addSubcommand(extra.name(), extra.command());
    }
    cl.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          if (e instanceof ConfigException || e instanceof io.cairn.objectstore.exceptions.ObjectStoreConfigException) {
            cmd.getErr().println("cairn: " + e.getMessage());
            return 2;
          }
          cmd.getErr().println("cairn: " + e.getMessage());
          return 1;
        });
    return cl.execute(args);
  }

  /** The bound on waiting for a running node's answer (sql, status, snapshot). */
  static class ClientTimeout {
    @Option(names = "--timeout", description = "How long to wait for the node's answer (e.g. 30s, 5m). Default: ${DEFAULT-VALUE}.",
        defaultValue = "60s")
    String value;

    Duration get() {
      return ConfigLoader.parseDuration("--timeout", value);
    }
  }

  /** Options shared by the commands that read the configuration. */
  static class ConfigOption {
    @Option(names = {"-c", "--config"}, description = "Configuration file (YAML). Default: embedded laptop setup.")
    Path config;

    CairnConfig load() {
      Path p = config;
      if (p == null && java.nio.file.Files.isRegularFile(Path.of("cairn.yaml"))) {
        p = Path.of("cairn.yaml");
      }
      return ConfigLoader.load(p, System.getenv());
    }
  }

  @Command(name = "run", mixinStandardHelpOptions = true, description = "Start (recover) and serve: ingest, snapshot on schedule, answer SQL over HTTP.",
      footer = {"", "Exit codes: 0 stopped; 1 failed; 2 bad configuration; 5 another node took the store (fenced).", "",
          "Examples:", "  cairn run                      # the embedded laptop setup (./cairn-data)",
          "  cairn run --config cairn.yaml"})
  static final class Run implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();

    @Option(names = "--no-takeover", description = "Refuse to start while another live node owns the store "
        + "(default: take the store over; the other node is fenced and stops writing).")
    boolean noTakeover;

    @Override
    public Integer call() throws Exception {
      CairnConfig cfg = config.load();
      Node.requireListenPortsFree(cfg); // before taking the store: a start that cannot listen must not fence its owner
      // HTTP listens from the first second: status and the probes answer through recovery and catch-up
      Node node = Node.recover(cfg, Node.Options.defaults().withProgress(true).withTakeover(!noTakeover).withHttpWhileRecovering(true));
      System.out.print(node.report().toText());
      Runtime.getRuntime().addShutdownHook(new Thread(node::close, "cairn-shutdown"));
      node.serve();
      node.awaitTermination();
      return fencedExit(node);
    }
  }

  /** Exit code of a node that stopped because another node took its store. */
  public static final int EXIT_FENCED = 5;

  static int fencedExit(Node node) {
    String why = node.fencedBy();
    if (why == null) {
      return 0;
    }
    System.err.println("cairn: " + why);
    return EXIT_FENCED;
  }

  /** {@code recover --until-caught-up}: caught up, but a source or view is not RUNNING. */
  public static final int EXIT_UNHEALTHY = 3;
  /** {@code recover --until-caught-up}: not caught up within {@code --timeout}. */
  public static final int EXIT_NOT_CAUGHT_UP = 4;

  @Command(name = "recover", mixinStandardHelpOptions = true, description = "Restart-and-recover: load the newest valid snapshot, replay sources, print the report.",
      footer = {"", "Exit codes with --until-caught-up: 0 caught up and every source and view RUNNING; 1 recovery failed;",
          "2 bad configuration; 3 caught up but a source or view FAILED or RESTARTING (the report says which and why);",
          "4 not caught up within --timeout.", "", "Example:", "  cairn recover --until-caught-up --timeout 10m --json > report.json"})
  static final class Recover implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();

    @Option(names = "--until-caught-up", description = "Exit once every source has caught up (else keep serving).")
    boolean untilCaughtUp;

    @Option(names = "--json", description = "Print the report as JSON.")
    boolean json;

    @Option(names = "--no-takeover", description = "Refuse to start while another live node owns the store.")
    boolean noTakeover;

    @Option(names = "--timeout", description = "Give up catching up after this long (e.g. 10m). Default: none.")
    String timeout;

    @Override
    public Integer call() throws Exception {
      CairnConfig cfg = config.load();
      Duration limit = timeout == null ? null : ConfigLoader.parseDuration("--timeout", timeout);
      if (!untilCaughtUp) {
        Node.requireListenPortsFree(cfg); // it serves afterwards: fail before taking the store
      }
      Node node = Node.recover(cfg, Node.Options.defaults().withProgress(!json).withCatchUpTimeout(limit).withTakeover(!noTakeover)
          .withHttpWhileRecovering(!untilCaughtUp));
      RecoveryReport r = node.report();
      System.out.println(json ? r.toJson() : r.toText());
      if (untilCaughtUp) {
        node.close();
        if (!r.caughtUp()) {
          return EXIT_NOT_CAUGHT_UP;
        }
        return r.healthy() ? 0 : EXIT_UNHEALTHY;
      }
      Runtime.getRuntime().addShutdownHook(new Thread(node::close, "cairn-shutdown"));
      node.serve();
      node.awaitTermination();
      return fencedExit(node);
    }
  }

  @Command(name = "snapshot", mixinStandardHelpOptions = true, description = "Take a snapshot now on the running node.",
      footer = {"", "Example:", "  cairn snapshot"})
  static final class Snapshot implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();
    @CommandLine.Mixin ClientTimeout timeout = new ClientTimeout();

    @Override
    public Integer call() throws Exception {
      System.out.println(http(config.load(), timeout.get(), "POST", "/snapshot", ""));
      return 0;
    }
  }

  @Command(name = "snapshots", mixinStandardHelpOptions = true, description = "Inspect the snapshot store: list, verify, gc.",
      subcommands = {Snapshots.ListSnapshots.class, Snapshots.Verify.class, Snapshots.Gc.class, Export.class},
      footer = {"", "Examples:", "  cairn snapshots list", "  cairn snapshots verify --config cairn.yaml   # exit 1 if anything is INVALID"})
  static final class Snapshots implements Runnable {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: list, verify or gc");
    }

    @Command(name = "list", mixinStandardHelpOptions = true, description = "List the snapshots in the store, oldest first.",
        footer = {"", "Example:", "  cairn snapshots list --config cairn.yaml"})
    static final class ListSnapshots implements Callable<Integer> {
      @CommandLine.Mixin ConfigOption config = new ConfigOption();

      @Override
      public Integer call() {
        try (OfflineStore offline = OfflineStore.open(config.load())) {
          System.out.print(offline.list());
        }
        return 0;
      }
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
        description = "Check the catalog's hash chain and every file of every snapshot (sizes, checksums, footers).",
        footer = {"", "Exit codes: 0 nothing INVALID (a snapshot deleted by GC while verifying is GONE, not INVALID); 1 something INVALID.",
            "", "Example:", "  cairn snapshots verify --config cairn.yaml"})
    static final class Verify implements Callable<Integer> {
      @CommandLine.Mixin ConfigOption config = new ConfigOption();

      @Override
      public Integer call() {
        try (OfflineStore offline = OfflineStore.open(config.load())) {
          io.cairn.snapshotter.VerifyReport r = offline.verify();
          System.out.print(r.toText());
          return r.valid() ? 0 : 1;
        }
      }
    }

    @Command(name = "gc", mixinStandardHelpOptions = true,
        description = "Apply retention (snapshots.retention.*) and delete files no remaining snapshot references.",
        footer = {"", "Example:", "  cairn snapshots gc --config cairn.yaml"})
    static final class Gc implements Callable<Integer> {
      @CommandLine.Mixin ConfigOption config = new ConfigOption();

      @Override
      public Integer call() {
        try (OfflineStore offline = OfflineStore.open(config.load())) {
          System.out.print(offline.gc());
        }
        return 0;
      }
    }
  }

  @Command(name = "export", mixinStandardHelpOptions = true,
      description = "Write a view as of a snapshot to a Parquet file: the view's columns, plus _time (the snapshot's tick) and "
          + "_diff (the row's multiplicity). Reads the store only; no node needs to run.",
      footer = {"", "Examples:", "  cairn snapshots export revenue_by_category --to revenue.parquet",
          "  duckdb -c \"SELECT * EXCLUDE (_time, _diff) FROM 'revenue.parquet'\""})
  static final class Export implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();

    @Parameters(index = "0", description = "The view's name.")
    String view;

    @Option(names = "--to", required = true, description = "The Parquet file to write (replaced if it exists).")
    Path to;

    @Option(names = "--snapshot", description = "Snapshot id (from `cairn snapshots list`). Default: the newest.")
    String snapshot;

    @Override
    public Integer call() {
      try (OfflineStore offline = OfflineStore.open(config.load())) {
        System.out.print(offline.export(view, snapshot, to));
      }
      return 0;
    }
  }

  /** Output formats of {@code cairn sql}. */
  enum Format {
    table,
    json,
    csv
  }

  @Command(name = "sql", mixinStandardHelpOptions = true, description = "Run SQL statements against the running node.",
      footer = {"", "In tables SQL NULL prints as NULL; a text value that could be mistaken for it (NULL, an empty string,",
          "leading or trailing spaces) prints quoted: 'NULL', ''.", "",
          "Examples:", "  cairn sql \"SELECT * FROM revenue_by_category\"",
          "  cairn sql --format csv \"SELECT * FROM revenue_by_category\" > revenue.csv",
          "  cairn sql \"CREATE MATERIALIZED VIEW big AS SELECT * FROM orders WHERE amount > 900\""})
  static final class Sql implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();
    @CommandLine.Mixin ClientTimeout timeout = new ClientTimeout();

    @Option(names = "--format", description = "table, json or csv. Default: ${DEFAULT-VALUE}.", defaultValue = "table")
    Format format;

    @Parameters(index = "0", description = "The statement(s), e.g. \"SELECT * FROM revenue_by_category\"")
    String sql;

    @Override
    public Integer call() throws Exception {
      System.out.print(http(config.load(), timeout.get(), "POST", "/sql?format=" + format, sql));
      return 0;
    }
  }

  @Command(name = "status", mixinStandardHelpOptions = true, description = "Status of the running node.",
      footer = {"", "Examples:", "  cairn status", "  cairn status --json | jq .sources"})
  static final class Status implements Callable<Integer> {
    @CommandLine.Mixin ConfigOption config = new ConfigOption();
    @CommandLine.Mixin ClientTimeout timeout = new ClientTimeout();

    @Option(names = "--json", description = "Print the status as JSON (as GET /status returns it).")
    boolean json;

    @Override
    public Integer call() throws Exception {
      String body = http(config.load(), timeout.get(), "GET", "/status", null);
      System.out.println(json ? body : StatusText.render(body));
      return 0;
    }
  }

  @Command(name = "advise", mixinStandardHelpOptions = true,
      description = "Recommend a snapshot schedule (snapshots.cron) for a target recovery time, from the running node's "
          + "measured rates; state the Kafka retention and Postgres WAL it needs and warn where the sources' settings fall short.",
      footer = {"", "The node measures each source's ingest while it serves, and its last recovery's load and replay rates; a",
          "figure it has not measured is assumed and said so. It reads each Kafka topic's retention.ms and retention.bytes",
          "and each Postgres server's max_slot_wal_keep_size, a few seconds at most each.", "",
          "Examples:", "  cairn advise --target-recovery 2m", "  cairn advise --target-recovery 90s --json | jq .recommended"})
  static final class Advise implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    @CommandLine.Mixin ConfigOption config = new ConfigOption();
    @CommandLine.Mixin ClientTimeout timeout = new ClientTimeout();

    @Option(names = "--target-recovery", required = true, paramLabel = "DURATION",
        description = "The longest recovery acceptable: from the start of a recovery until every source has caught up (e.g. 90s, 2m, 1h).")
    String target;

    @Option(names = "--json", description = "Print the advice as JSON (as GET /advise returns it).")
    boolean json;

    @Override
    public Integer call() throws Exception {
      try {
        io.cairn.server.http.HttpEndpoint.adviseTarget(target); // a bad value is bad usage: nothing is asked of the node
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage().replace("Cannot advise: ", "Invalid value for "
            + "--target-recovery: "));
      }
      String path = "/advise?target=" + java.net.URLEncoder.encode(target.strip(), java.nio.charset.StandardCharsets.UTF_8)
          + "&format=" + (json ? "json" : "text");
      System.out.print(http(config.load(), timeout.get(), "GET", path, null));
      return 0;
    }
  }

  /**
   * One request to the running node (always plain HTTP on its own host). {@link
   * java.net.HttpURLConnection}, not {@link java.net.http.HttpClient}: building an {@code HttpClient} initialises
   * the JDK's default TLS context (its trust store) even for an http:// URI, a fixed cost of every
   * {@code cairn status}, {@code sql} and {@code snapshot}.
   */
  static String http(CairnConfig cfg, Duration timeout, String method, String path, String body) throws IOException, InterruptedException {
    if (cfg.httpPort() == 0) {
      throw new IllegalArgumentException("Cannot reach the node: http.port is 0 (HTTP disabled)");
    }
    URI uri = URI.create("http://" + cfg.httpHost() + ":" + cfg.httpPort() + path);
    java.net.HttpURLConnection c = (java.net.HttpURLConnection) uri.toURL().openConnection(java.net.Proxy.NO_PROXY);
    c.setConnectTimeout(3000);
    c.setReadTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(1, timeout.toMillis())));
    c.setRequestMethod(body == null ? "GET" : method);
    byte[] bytes = body == null ? null : body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    if (bytes != null) {
      c.setDoOutput(true);
      c.setFixedLengthStreamingMode(bytes.length);
    }
    int status;
    String answer;
    try {
      try {
        c.connect(); // refused or timed out here: no node listening (a timeout later is a slow node)
      } catch (java.net.ConnectException | java.net.SocketTimeoutException e) {
        throw new IllegalStateException("Cannot reach the node at " + uri + ": is `cairn run` running?");
      }
      if (bytes != null) {
        try (java.io.OutputStream os = c.getOutputStream()) {
          os.write(bytes);
        }
      }
      status = c.getResponseCode();
      java.io.InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
      answer = in == null ? "" : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.net.SocketTimeoutException e) {
      throw new IllegalStateException("No answer from the node at " + uri + " within " + timeout.toSeconds()
          + " s (--timeout to wait longer)");
    } finally {
      c.disconnect();
    }
    if (status != 200) {
      throw new IllegalArgumentException(answer.strip());
    }
    return answer;
  }
}
