package io.cairn.benchmarks.cli;

import io.cairn.benchmarks.loadonsource.ConsistencyChecks;
import io.cairn.benchmarks.loadonsource.LoadOnSourceBenchmark;
import io.cairn.benchmarks.loadonsource.LoadOnSourceConfig;
import io.cairn.benchmarks.loadonsource.LoadOnSourceResult;
import io.cairn.benchmarks.loadonsource.ReportWriter;
import io.cairn.benchmarks.takeover.TakeoverBenchmark;
import io.cairn.benchmarks.takeover.TakeoverConfig;
import io.cairn.benchmarks.takeover.TakeoverReport;
import io.cairn.benchmarks.takeover.TakeoverResult;
import io.cairn.server.cli.CairnSubcommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn bench …}: benchmarks that start their own servers on 127.0.0.1. */
@Command(name = "bench", description = "Benchmarks (they start their own Kafka broker and Postgres server on 127.0.0.1).",
    subcommands = {BenchCommand.LoadOnSource.class, BenchCommand.Report.class, BenchCommand.Takeover.class}, mixinStandardHelpOptions = true)
public final class BenchCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.out);
  }

  /** The ServiceLoader entry that adds {@code bench} to {@code cairn}. */
  public static final class Provider implements CairnSubcommand {
    @Override
    public String name() {
      return "bench";
    }

    @Override
    public Object command() {
      return new BenchCommand();
    }
  }

  @Command(name = "load-on-source", mixinStandardHelpOptions = true,
      description = "Recovery strategies (full replay, daily, hourly, right after a snapshot, warm and hot standby) over Kafka + Postgres CDC:"
          + " recovery time, source load, object-store requests; Kafka Streams beside it. Writes report.md, report.html,"
          + " results.json, results.csv.")
  static final class LoadOnSource implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--hours", description = "Simulated hours of history (default ${DEFAULT-VALUE}).", defaultValue = "24")
    int hours;

    @Option(names = "--days", description = "Simulated days of history instead of --hours (e.g. 30): snapshots at midnight of"
        + " day 1, one day before the crash and at the last hour; defaults to 33,000 records and 2,400 row changes a day."
        + " Reports recovery from the day-old snapshot against a full replay of every day.")
    Integer days;

    @Option(names = "--orders-per-hour", description = "Kafka records per simulated hour (default 10000; with --days 1375).")
    Integer ordersPerHour;

    @Option(names = "--customer-changes-per-hour", description = "Postgres row changes per simulated hour (default 2000; with --days 100).")
    Integer changesPerHour;

    @Option(names = "--curve-step", description = "A snapshot every N hours for the growth curve (default 6; with --days"
        + " 24 × (days - 1)).")
    Integer curveStep;

    @Option(names = "--repeat", description = "Recoveries per strategy; the median wall time is reported (default 3; 1 with"
        + " --scale large).")
    Integer repeat;

    @Option(names = "--scale", description = "small (default: the sizes above) or large: 30 days, 100M Kafka records over 10M"
        + " order ids, 1M customers changed 3M times, and an order-history join holding about 95M rows; one recovery per"
        + " strategy, no Kafka Streams peer, no standbys. Takes about an hour and a 20 GiB heap (given to the child JVM"
        + " unless CAIRN_JAVA_OPTS sets -Xmx). --days, the rates and --curve-step still apply.",
        defaultValue = "small")
    String scale;

    /** The heap the large scale needs: the oracle (0.6 GB), the ingest node's state and a recovering node's. */
    static final String LARGE_HEAP = "-Xmx20g";
    private static final long LARGE_MIN_HEAP_BYTES = 18L << 30;

    @Option(names = "--no-postgres", description = "Kafka only.")
    boolean noPostgres;

    @Option(names = "--no-peer", description = "Skip the Kafka Streams comparison.")
    boolean noPeer;

    @Option(names = "--no-standby", description = "Skip the standby strategies (an owner and a warm, then a hot, standby on the"
        + " daily snapshot; the owner stopped, the standby taking over).")
    boolean noStandby;

    @Option(names = "--broker", description = "Where the Kafka broker runs: child (its own JVM, as in production; default)"
        + " or in-process (the benchmark's JVM, which then also compiles and collects for it).", defaultValue = "child")
    String broker;

    @Option(names = {"-o", "--out"}, description = "Output directory (default ${DEFAULT-VALUE}).", defaultValue = "bench-report")
    Path out;

    @Option(names = "--advise-target", description = "Ask `cairn advise` for this recovery time (e.g. 30s) and apply it: snapshot"
        + " at the ages the 1-12 h schedules leave at worst, recover the recommended one (default: 30s with --scale large,"
        + " none otherwise; 'none' to skip).")
    String adviseTarget;

    @Override
    public Integer call() throws Exception {
      if (days != null && days < 1) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--days must be at least 1, was " + days);
      }
      boolean large = switch (scale) {
        case "small" -> false;
        case "large" -> true;
        default -> throw new CommandLine.ParameterException(spec.commandLine(), "--scale must be small or large, was '" + scale + "'");
      };
      LoadOnSourceConfig config;
      if (large) {
        LoadOnSourceConfig l = LoadOnSourceConfig.large(out.toAbsolutePath());
        int h = days != null ? 24 * days : l.hours();
        int step = curveStep != null ? curveStep : Math.min(l.curveStepHours(), h);
        config = l.withHours(h, Math.min(step, h))
            .withRates(ordersPerHour != null ? ordersPerHour : l.ordersPerHour(),
                changesPerHour != null ? changesPerHour : l.customerChangesPerHour())
            .withPostgres(!noPostgres).withRepeats(repeat != null ? repeat : 1).withBrokerInChildJvm(brokerInChildJvm());
      } else {
        int h = days != null ? 24 * days : hours;
        int step = curveStep != null ? curveStep : days != null ? 24 * Math.max(1, days - 1) : 6;
        int orders = ordersPerHour != null ? ordersPerHour : days != null ? 1375 : 10_000;
        int changes = changesPerHour != null ? changesPerHour : days != null ? 100 : 2000;
        config = LoadOnSourceConfig.defaults(out.toAbsolutePath()).withHours(h, Math.min(step, h))
            .withRates(orders, changes).withPostgres(!noPostgres).withPeer(!noPeer).withStandbys(!noStandby)
            .withRepeats(repeat != null ? repeat : 3).withBrokerInChildJvm(brokerInChildJvm());
      }
      if (adviseTarget != null) {
        config = config.withAdviseTarget(adviseTarget.equals("none") ? null : parseTarget(adviseTarget));
      }
      List<String> args = args();
      if (config.postgres() && System.getenv(LoadOnSourceBenchmark.PASSWORD_ENV) == null) {
        return inChildJvm(args, large);
      }
      if (large && Runtime.getRuntime().maxMemory() < LARGE_MIN_HEAP_BYTES) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--scale large needs a heap of at least 18 GiB; this JVM has "
            + (Runtime.getRuntime().maxMemory() >> 20) + " MiB (set CAIRN_JAVA_OPTS=" + LARGE_HEAP + ")");
      }
      Files.createDirectories(config.outputDir());
      LoadOnSourceResult r = new LoadOnSourceBenchmark(config, "cairn " + String.join(" ", args)).run();
      ReportWriter.write(r, config.outputDir());
      System.out.println(Files.readString(config.outputDir().resolve(ReportWriter.MD)).split("\n## Consistency checks")[0]);
      System.out.println("Report: " + config.outputDir().resolve(ReportWriter.HTML));
      return ConsistencyChecks.allPassed(r) ? 0 : 1;
    }

    private boolean brokerInChildJvm() {
      return switch (broker) {
        case "child" -> true;
        case "in-process" -> false;
        default -> throw new CommandLine.ParameterException(spec.commandLine(),
            "--broker must be child or in-process, was '" + broker + "'");
      };
    }

    private List<String> args() {
      List<String> a = new ArrayList<>(List.of("bench", "load-on-source"));
      if (days != null) {
        a.addAll(List.of("--days", Integer.toString(days)));
      } else if (!scale.equals("large")) { // the large scale's hours are its own (30 days) unless --days says otherwise
        a.addAll(List.of("--hours", Integer.toString(hours)));
      }
      if (ordersPerHour != null) {
        a.addAll(List.of("--orders-per-hour", Integer.toString(ordersPerHour)));
      }
      if (changesPerHour != null) {
        a.addAll(List.of("--customer-changes-per-hour", Integer.toString(changesPerHour)));
      }
      if (curveStep != null) {
        a.addAll(List.of("--curve-step", Integer.toString(curveStep)));
      }
      if (repeat != null) {
        a.addAll(List.of("--repeat", Integer.toString(repeat)));
      }
      a.addAll(List.of("--scale", scale, "--out", out.toString()));
      if (noPostgres) {
        a.add("--no-postgres");
      }
      if (noPeer) {
        a.add("--no-peer");
      }
      if (noStandby) {
        a.add("--no-standby");
      }
      a.addAll(List.of("--broker", broker));
      if (adviseTarget != null) {
        a.addAll(List.of("--advise-target", adviseTarget));
      }
      return a;
    }

    private Duration parseTarget(String text) {
      try {
        return io.cairn.node.config.ConfigLoader.parseDuration("--advise-target", text);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
    }

    /**
     * A cairn node reads Postgres passwords only from its environment; a JVM cannot set its own, so
     * the benchmark runs in a child JVM with a fresh random password for its private Postgres role.
     */
    private static int inChildJvm(List<String> args, boolean large) throws Exception {
      List<String> jvm = new ArrayList<>(java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments());
      if (large && jvm.stream().noneMatch(o -> o.startsWith("-Xmx"))) {
        jvm.add(LARGE_HEAP);
      }
      List<String> cmd = childCommand(jvm, System.getProperty("java.class.path"), args);
      ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
      pb.environment().put(LoadOnSourceBenchmark.PASSWORD_ENV, UUID.randomUUID().toString());
      Process p = pb.start();
      Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
      return p.waitFor();
    }

    /**
     * The child's command line: this JVM's options (its logging configuration, heap, class-data
     * archive, {@code CAIRN_JAVA_OPTS}), so that the child measures what this command was asked to
     * measure and logs as it was told to (without them, logback falls back to DEBUG on the console:
     * hundreds of MB a run, and its cost in every figure); minus a flight recording, an agent or a
     * debugger, which would then run twice over one file or port.
     */
    static List<String> childCommand(List<String> jvmOptions, String classPath, List<String> args) {
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      for (String o : jvmOptions) {
        if (!o.startsWith("-XX:StartFlightRecording") && !o.startsWith("-XX:FlightRecorderOptions") && !o.startsWith("-agentlib:")
            && !o.startsWith("-agentpath:") && !o.startsWith("-javaagent:") && !o.startsWith("-Xrunjdwp") && !o.startsWith("-Xdebug")) {
          cmd.add(o);
        }
      }
      cmd.addAll(List.of("-cp", classPath, "io.cairn.server.cli.CairnCommand"));
      cmd.addAll(args);
      return cmd;
    }
  }

  @Command(name = "report", mixinStandardHelpOptions = true,
      description = "Writes a load-on-source report again (report.md, report.html, results.csv, charts) from the results.json"
          + " of a run, with this version's report writer: no benchmark runs.")
  static final class Report implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--from", required = true, description = "The directory of a load-on-source run (it holds results.json).")
    Path from;

    @Option(names = {"-o", "--out"}, description = "Where to write the report (default: the --from directory).")
    Path out;

    @Override
    public Integer call() {
      Path json = from.resolve(ReportWriter.JSON);
      if (!Files.isRegularFile(json)) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--from " + from + " holds no " + ReportWriter.JSON);
      }
      LoadOnSourceResult r = ReportWriter.read(json);
      Path dir = out != null ? out : from;
      ReportWriter.write(r, dir);
      System.out.println("Report: " + dir.resolve(ReportWriter.HTML));
      return ConsistencyChecks.allPassed(r) ? 0 : 1;
    }
  }

  @Command(name = "takeover", mixinStandardHelpOptions = true,
      description = "A group of two nodes on one store (Kafka broker for the group, nodes in child JVMs): the owner is killed with -9;"
          + " time until the standby serves a fresh, correct answer, against a cold restart of the same store. Writes report.md and"
          + " results.json.")
  static final class Takeover implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--rows", split = ",", description = "Table sizes, comma-separated (default ${DEFAULT-VALUE}).", defaultValue = "1000000")
    List<Long> rows;

    @Option(names = "--heap", description = "The nodes' -Xmx (default: 1g up to 100k rows, 4g up to 2M, else 16g).")
    String heap;

    @Option(names = "--session-timeout", description = "The group's session timeout in seconds (default ${DEFAULT-VALUE}).",
        defaultValue = "6")
    int sessionTimeoutSeconds;

    @Option(names = "--standby-wait", description = "Seconds the standby is given before the owner's kill to answer a query"
        + " (a warm standby: the wait ends there; a cold one waits it all; default ${DEFAULT-VALUE}).", defaultValue = "60")
    int standbyWaitSeconds;

    @Option(names = "--node-classpath", description = "Class path of the cairn nodes under test (default: this command's), e.g."
        + " another build's jars, to measure two builds with one benchmark.")
    String nodeClassPath;

    @Option(names = "--keep-store", description = "Keep each size's store (default: deleted; the node logs are kept).")
    boolean keepStore;

    @Option(names = {"-o", "--out"}, description = "Output directory (default benchmarks/reports/takeover-<date>).")
    Path out;

    @Override
    public Integer call() throws Exception {
      Path dir = (out != null ? out : Path.of("benchmarks", "reports", "takeover-" + java.time.LocalDate.now())).toAbsolutePath();
      List<String> jvm = new ArrayList<>();
      for (String o : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (!o.startsWith("-Xmx") && !o.startsWith("-Xms") && !o.startsWith("-XX:MaxRAM") && !o.startsWith("-XX:StartFlightRecording")
            && !o.startsWith("-XX:FlightRecorderOptions") && !o.startsWith("-agentlib:") && !o.startsWith("-agentpath:")
            && !o.startsWith("-javaagent:") && !o.startsWith("-Xrunjdwp") && !o.startsWith("-Xdebug")) {
          jvm.add(o); // the logging configuration and class-data archive of the launcher, as `cairn run` has them
        }
      }
      TakeoverConfig config = new TakeoverConfig(rows, heap, java.time.Duration.ofSeconds(sessionTimeoutSeconds), dir,
          nodeClassPath != null ? nodeClassPath : System.getProperty("java.class.path"), jvm, java.time.Duration.ofSeconds(standbyWaitSeconds), keepStore);
      List<TakeoverResult> results = new TakeoverBenchmark(config).run();
      StringBuilder cmd = new StringBuilder("cairn bench takeover --rows ");
      cmd.append(String.join(",", rows.stream().map(String::valueOf).toList()));
      if (heap != null) {
        cmd.append(" --heap ").append(heap);
      }
      cmd.append(" --session-timeout ").append(sessionTimeoutSeconds);
      System.out.println(TakeoverReport.write(results, cmd.toString(), dir));
      System.out.println("Report: " + dir.resolve(TakeoverReport.MD));
      return 0;
    }
  }
}
