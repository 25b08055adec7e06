package io.cairn.engine.catalog;

/** An append lost the race: another writer's entry holds the position. Re-read and retry. */
public final class CatalogConflictException extends RuntimeException {
  private final long position;

  public CatalogConflictException(long position, String where) {
    super("Cannot append catalog entry " + position + " to " + where + ": the position is taken by another writer");
    this.position = position;
  }

  public long position() {
    return position;
  }
}
