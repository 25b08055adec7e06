package io.cairn.server;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads that must never stop: a SELECT sent round-robin every 100 ms to each watched member of a
 * group (by index into {@code ports}), counting the ones answered and keeping every failure. A
 * member is unwatched before the test kills, stops or pauses it.
 */
final class StandbyReads implements Runnable {
  private final List<Integer> ports;
  private final String sql;
  private final Set<Integer> watched = ConcurrentHashMap.newKeySet();
  final AtomicLong ok = new AtomicLong();
  final List<String> failures = new CopyOnWriteArrayList<>();
  private volatile boolean stopped;

  StandbyReads(List<Integer> ports, String sql) {
    this.ports = ports;
    this.sql = sql;
  }

  void watch(Collection<Integer> members) {
    watched.addAll(members);
  }

  void unwatch(int member) {
    watched.remove(member);
  }

  void stop() {
    stopped = true;
  }

  @Override
  public void run() {
    while (!stopped) {
      for (int i : List.copyOf(watched)) {
        try {
          Http.Response r = Http.post(ports.get(i), "/sql", sql);
          if (r.code() == 200) {
            ok.incrementAndGet();
          } else if (watched.contains(i)) {
            failures.add("member " + i + ": " + r.code() + " " + r.body());
          }
        } catch (RuntimeException e) {
          if (watched.contains(i)) {
            failures.add("member " + i + ": " + e);
          }
        }
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        return;
      }
    }
  }
}
