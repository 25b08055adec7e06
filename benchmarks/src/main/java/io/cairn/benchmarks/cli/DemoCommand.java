package io.cairn.benchmarks.cli;

import io.cairn.benchmarks.demo.Demo;
import io.cairn.server.cli.CairnSubcommand;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code cairn demo}: ingest, snapshot, kill, recover, and what the recovery cost the sources. */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = "Embedded defaults + an in-process Kafka broker: ingest, snapshot, kill, recover; prints the recovery"
        + " report and the load on the sources with and without the snapshot. About a minute.")
public final class DemoCommand implements Callable<Integer> {
  @Option(names = "--records", description = "Kafka records before the snapshot (default ${DEFAULT-VALUE}).", defaultValue = "200000")
  int records;

  @Option(names = "--after", description = "Kafka records after the snapshot, before the kill (default ${DEFAULT-VALUE}).",
      defaultValue = "20000")
  int after;

  @Option(names = "--dir", description = "Where the demo's object stores go (default ${DEFAULT-VALUE}).", defaultValue = "cairn-demo-data")
  Path dir;

  @Override
  public Integer call() {
    Demo.Outcome o = new Demo(dir.toAbsolutePath(), System.out).run(records, after);
    return o.viewsAgree() ? 0 : 1;
  }

  /** The ServiceLoader entry that adds {@code demo} to {@code cairn}. */
  public static final class Provider implements CairnSubcommand {
    @Override
    public String name() {
      return "demo";
    }

    @Override
    public Object command() {
      return new DemoCommand();
    }
  }
}
