package io.cairn.benchmarks.cli;

import io.cairn.benchmarks.loadonsource.ConsistencyChecks;
import io.cairn.benchmarks.loadonsource.LoadOnSourceBenchmark;
import io.cairn.benchmarks.loadonsource.LoadOnSourceConfig;
import io.cairn.benchmarks.loadonsource.LoadOnSourceResult;
import io.cairn.benchmarks.loadonsource.ReportWriter;
import io.cairn.recovery.cli.CairnSubcommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn bench …}: benchmarks that start their own servers on 127.0.0.1. */
@Command(name = "bench", description = "Benchmarks (they start their own Kafka broker and Postgres server on 127.0.0.1).",
    subcommands = BenchCommand.LoadOnSource.class, mixinStandardHelpOptions = true)
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
      description = "Recovery strategies (full replay, daily, hourly, right after a snapshot) over Kafka + Postgres CDC:"
          + " recovery time, source load, object-store requests; Kafka Streams beside it. Writes report.md, report.html,"
          + " results.json, results.csv.")
  static final class LoadOnSource implements Callable<Integer> {
    @Option(names = "--hours", description = "Simulated hours of history (default ${DEFAULT-VALUE}).", defaultValue = "24")
    int hours;

    @Option(names = "--orders-per-hour", description = "Kafka records per simulated hour (default ${DEFAULT-VALUE}).", defaultValue = "10000")
    int ordersPerHour;

    @Option(names = "--customer-changes-per-hour", description = "Postgres row changes per simulated hour (default ${DEFAULT-VALUE}).",
        defaultValue = "2000")
    int changesPerHour;

    @Option(names = "--curve-step", description = "A snapshot every N hours for the growth curve (default ${DEFAULT-VALUE}).",
        defaultValue = "6")
    int curveStep;

    @Option(names = "--repeat", description = "Recoveries per strategy; the median wall time is reported (default ${DEFAULT-VALUE}).",
        defaultValue = "3")
    int repeat;

    @Option(names = "--no-postgres", description = "Kafka only.")
    boolean noPostgres;

    @Option(names = "--no-peer", description = "Skip the Kafka Streams comparison.")
    boolean noPeer;

    @Option(names = {"-o", "--out"}, description = "Output directory (default ${DEFAULT-VALUE}).", defaultValue = "bench-report")
    Path out;

    @Override
    public Integer call() throws Exception {
      LoadOnSourceConfig config = LoadOnSourceConfig.defaults(out.toAbsolutePath()).withHours(hours, Math.min(curveStep, hours))
          .withRates(ordersPerHour, changesPerHour).withPostgres(!noPostgres).withPeer(!noPeer).withRepeats(repeat);
      List<String> args = args();
      if (config.postgres() && System.getenv(LoadOnSourceBenchmark.PASSWORD_ENV) == null) {
        return inChildJvm(args);
      }
      Files.createDirectories(config.outputDir());
      LoadOnSourceResult r = new LoadOnSourceBenchmark(config, "cairn " + String.join(" ", args)).run();
      ReportWriter.write(r, config.outputDir());
      System.out.println(Files.readString(config.outputDir().resolve(ReportWriter.MD)).split("\n## Consistency checks")[0]);
      System.out.println("Report: " + config.outputDir().resolve(ReportWriter.HTML));
      return ConsistencyChecks.allPassed(r) ? 0 : 1;
    }

    private List<String> args() {
      List<String> a = new ArrayList<>(List.of("bench", "load-on-source", "--hours", Integer.toString(hours), "--orders-per-hour",
          Integer.toString(ordersPerHour), "--customer-changes-per-hour", Integer.toString(changesPerHour), "--curve-step",
          Integer.toString(curveStep), "--repeat", Integer.toString(repeat), "--out", out.toString()));
      if (noPostgres) {
        a.add("--no-postgres");
      }
      if (noPeer) {
        a.add("--no-peer");
      }
      return a;
    }

    /**
     * A cairn node reads Postgres passwords only from its environment; a JVM cannot set its own, so
     * the benchmark runs in a child JVM with a fresh random password for its private Postgres role.
     */
    private static int inChildJvm(List<String> args) throws Exception {
      List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
          System.getProperty("java.class.path"), "io.cairn.recovery.cli.CairnCommand"));
      cmd.addAll(args);
      ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
      pb.environment().put(LoadOnSourceBenchmark.PASSWORD_ENV, UUID.randomUUID().toString());
      Process p = pb.start();
      Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
      return p.waitFor();
    }
  }
}
