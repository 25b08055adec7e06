package io.cairn.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Removing the temporary directories test servers keep their data in. */
public final class TempDirs {
  private TempDirs() {}

  /**
   * Deletes {@code dir} and everything under it, deepest first, as far as it can: a file that
   * cannot be deleted is left and the rest is still deleted; nothing is thrown. A directory that
   * does not exist is not an error.
   */
  public static void deleteQuietly(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort
        }
      });
    } catch (IOException ignored) {
      // best effort
    }
  }
}
