package io.cairn.engine.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntConsumer;

/** N worker threads; worker i always runs shard i's work, so each shard's state has one owner. */
final class Workers implements AutoCloseable {
  private final ExecutorService[] threads;

  Workers(int n) {
    threads = new ExecutorService[n];
    for (int i = 0; i < n; i++) {
      int id = i;
      threads[i] =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "cairn-worker-" + id);
                t.setDaemon(true);
                return t;
              });
    }
  }

  int size() {
    return threads.length;
  }

  /** Runs {@code task(i)} on worker i for every i and waits for all; rethrows the first failure. */
  void runAll(IntConsumer task) {
    if (threads.length == 1) {
      task.accept(0);
      return;
    }
    List<Future<?>> fs = new ArrayList<>(threads.length);
    for (int i = 0; i < threads.length; i++) {
      int shard = i;
      fs.add(threads[i].submit(() -> task.accept(shard)));
    }
    RuntimeException first = null;
    for (Future<?> f : fs) {
      try {
        f.get();
      } catch (ExecutionException e) {
        if (first == null) {
          first = e.getCause() instanceof RuntimeException re ? re : new IllegalStateException(e.getCause());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while waiting for workers", e);
      }
    }
    if (first != null) {
      throw first;
    }
  }

  @Override
  public void close() {
    for (ExecutorService t : threads) {
      t.shutdownNow();
    }
  }
}
