package io.cairn.engine.catalog;

import java.util.ArrayList;
import java.util.List;

/** A {@link CatalogLog} in memory: for tests and for a laptop node that needs no durability. */
public final class InMemoryCatalogLog implements CatalogLog {
  private final List<CatalogEntry> entries = new ArrayList<>();

  @Override
  public synchronized void append(CatalogEntry entry) {
    long p = entry.position();
    if (p < entries.size()) {
      throw new CatalogConflictException(p, describe());
    }
    if (p > entries.size()) {
      throw new IllegalArgumentException(
          "Cannot append catalog entry " + p + " to " + describe() + ": the log ends at " + entries.size() + " (no gaps)");
    }
    entries.add(entry);
  }

  @Override
  public synchronized List<CatalogEntry> read(long from) {
    if (from < FIRST_POSITION) {
      throw new IllegalArgumentException("Cannot read catalog from " + from + ": positions start at " + FIRST_POSITION);
    }
    if (from >= entries.size()) {
      return List.of();
    }
    return List.copyOf(new ArrayList<>(entries.subList((int) from, entries.size())));
  }

  @Override
  public synchronized long end() {
    return entries.size();
  }

  @Override
  public String describe() {
    return "memory";
  }
}
