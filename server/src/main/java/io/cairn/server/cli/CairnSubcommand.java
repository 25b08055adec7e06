package io.cairn.server.cli;

/**
 * An extra {@code cairn} subcommand contributed by another module (found with {@link
 * java.util.ServiceLoader}), e.g. {@code demo} and {@code bench} from the benchmarks module.
 */
public interface CairnSubcommand {
  /** The subcommand's name. */
  String name();

  /** A picocli command object (annotated with {@code @Command}). */
  Object command();
}
