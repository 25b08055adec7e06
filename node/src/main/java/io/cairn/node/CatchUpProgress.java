package io.cairn.node;

import java.io.PrintStream;
import java.time.Duration;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * Progress of a catch-up, on standard error: a progress bar (records read, rate, elapsed) when
 * standard error is a terminal, else a plain line every {@value #PLAIN_INTERVAL_SECONDS} s, so a
 * log file or CI output gets no carriage returns. The number of records still to read is not
 * known in general (a Kafka topic grows, a WAL position is not a record count), so the bar counts
 * up without a maximum.
 */
final class CatchUpProgress implements AutoCloseable {
  static final int PLAIN_INTERVAL_SECONDS = 5;
  private final ProgressBar bar;
  private final PrintStream plain;
  private final long startNanos = System.nanoTime();
  private long lastPlainNanos = System.nanoTime();

  private CatchUpProgress(ProgressBar bar, PrintStream plain) {
    this.bar = bar;
    this.plain = plain;
  }

  /** A bar on a terminal, plain lines otherwise; {@code enabled} false prints nothing. */
  static CatchUpProgress start(boolean enabled) {
    if (!enabled) {
      return new CatchUpProgress(null, null);
    }
    if (System.console() != null) {
      ProgressBar bar = new ProgressBarBuilder().setTaskName("catching up").setInitialMax(-1).setUnit(" records", 1)
          .setStyle(ProgressBarStyle.ASCII).showSpeed().setUpdateIntervalMillis(250).continuousUpdate()
          .setConsumer(new me.tongfei.progressbar.ConsoleProgressBarConsumer(System.err)).build();
      return new CatchUpProgress(bar, null);
    }
    return new CatchUpProgress(null, System.err);
  }

  /** Records read so far and the last closed tick. */
  void update(long records, long tick) {
    if (bar != null) {
      bar.stepTo(records);
      bar.setExtraMessage("tick " + tick);
    } else if (plain != null && System.nanoTime() - lastPlainNanos >= Duration.ofSeconds(PLAIN_INTERVAL_SECONDS).toNanos()) {
      lastPlainNanos = System.nanoTime();
      plain.printf("catching up: tick %d, %,d records read, %d s%n", tick, records, (lastPlainNanos - startNanos) / 1_000_000_000L);
    }
  }

  /** Ends the bar and prints how the catch-up ended. */
  void finish(String outcome) {
    if (bar != null) {
      bar.setExtraMessage(outcome);
      bar.close();
    }
    if (bar != null || plain != null) {
      System.err.println("catching up: " + outcome);
    }
  }

  @Override
  public void close() {
    if (bar != null) {
      bar.close();
    }
  }
}
