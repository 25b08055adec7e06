package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.BucketNotFoundException;
import io.cairn.objectstore.exceptions.ObjectAlreadyExistsException;
import io.cairn.objectstore.exceptions.ObjectNotFoundException;
import io.cairn.objectstore.exceptions.ObjectStoreException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link ObjectStore} in a local directory: key "a/b/c" is the file {@code <root>/a/b/c}.
 *
 * <p>Design and invariants:
 * <ul>
 *   <li>Owns nothing but its root directory and the temp directory {@code <root>/.cairn-tmp/}
 *       inside it: no open handles between calls, no cache, no metadata beside the files (an
 *       object's etag is derived from its size, modification time and file key). {@link #close()}
 *       does nothing.
 *   <li>Threading: every method may be called from any thread at once; the store's fields are
 *       final and it takes no lock. The file system orders racing writers (rename and link are
 *       atomic); a write whose parent directory a racing delete just removed publishes again (up
 *       to 5 times). An {@link ObjectWrite} or stream it returns is for one thread.
 *   <li>Every write goes to a temp file in {@code <root>/.cairn-tmp/} (same file system as the
 *       objects), is fsynced, then published by a rename ({@link #put}) or a hard link
 *       ({@link #putIfAbsent}: {@code link(2)} fails atomically if the name exists, so of racing
 *       writers exactly one wins and no reader ever sees a partial file). The parent directory is
 *       fsynced after publishing so the new name survives a crash.
 *   <li>The first key segment {@value #TMP_DIR} is reserved; listing skips it.
 *   <li>Directories are created on demand and removed (best effort) when a delete empties them.
 *       A file system cannot hold both "a" and "a/b"; writing the second fails.
 *   <li>The root must exist when the store is opened (the bucket analogue); it is not created.
 *   <li>On failure a write deletes its temp file and publishes nothing; a crash may leave temp
 *       files in {@code .cairn-tmp/}, which no read or listing sees.
 * </ul>
 */
public final class LocalObjectStore implements ObjectStore {
  private static final Logger LOG = LoggerFactory.getLogger(LocalObjectStore.class);
  static final String TMP_DIR = ".cairn-tmp";
  private static final int BUFFER = 1 << 16;

  private final Path root;
  private final Path tmp;
  private final String name;

  /**
   * Opens a store over the existing directory {@code root}.
   *
   * @throws BucketNotFoundException if {@code root} is not an existing directory
   */
  public LocalObjectStore(Path root) {
    this.root = root.toAbsolutePath().normalize();
    this.name = this.root.toUri().toString();
    if (!Files.isDirectory(this.root)) {
      throw new BucketNotFoundException("Cannot open local object store " + name + ": not an existing directory");
    }
    this.tmp = this.root.resolve(TMP_DIR);
    try {
      Files.createDirectories(tmp);
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot open local object store " + name + ": cannot create " + tmp + ": " + e, e);
    }
  }

  /** Creates the directory (and parents) if needed, then opens it. */
  public static LocalObjectStore createDirectories(Path root) {
    try {
      Files.createDirectories(root);
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot create local object store directory " + root + ": " + e, e);
    }
    return new LocalObjectStore(root);
  }

  public Path root() {
    return root;
  }

  private Path path(String key) {
    ObjectKeys.validate(key);
    if (key.equals(TMP_DIR) || key.startsWith(TMP_DIR + "/")) {
      throw new io.cairn.objectstore.exceptions.InvalidKeyException(
          "Invalid object key '" + key + "': the first segment " + TMP_DIR + " is reserved by the local store");
    }
    return root.resolve(key);
  }

  // ---- writes

  @FunctionalInterface
  private interface Writer {
    void write(OutputStream out) throws IOException;
  }

  private Path writeTemp(String key, Writer writer) {
    Path temp = tmp.resolve(UUID.randomUUID() + ".tmp");
    try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      OutputStream out = Channels.newOutputStream(ch);
      writer.write(out);
      out.flush();
      ch.force(true);
      return temp;
    } catch (IOException | RuntimeException e) {
      deleteQuietly(temp);
      if (e instanceof ObjectStoreException ose) {
        throw ose;
      }
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": " + e, e);
    }
  }

  private void publish(String key, Path temp, boolean ifAbsent) {
    Path target = path(key);
    try {
      for (int attempt = 0; ; attempt++) {
        try {
          try {
            Files.createDirectories(target.getParent());
          } catch (FileAlreadyExistsException e) {
            throw new ObjectStoreException("Cannot " + (ifAbsent ? "create " : "put ") + key + " in " + name
                + ": a prefix of the key (" + root.relativize(Path.of(e.getFile())) + ") is an existing object;"
                + " a local store cannot hold both 'a' and 'a/b'", e);
          }
          if (ifAbsent) {
            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
              throw new ObjectStoreException(
                  "Cannot create " + key + " in " + name + ": a directory of other objects has that name;"
                  + " a local store cannot hold both 'a' and 'a/b'");
            }
            Files.createLink(target, temp);
          } else {
            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
              throw new ObjectStoreException(
                  "Cannot put " + key + " in " + name + ": a directory of other objects has that name;"
                  + " a local store cannot hold both 'a' and 'a/b'");
            }
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
          }
          break;
        } catch (NoSuchFileException e) {
          // a concurrent delete removed an emptied parent directory between create and publish
          if (attempt >= 5) {
            throw e;
          }
        }
      }
      fsyncDirectory(target.getParent());
    } catch (FileAlreadyExistsException e) {
      throw new ObjectAlreadyExistsException("Cannot create " + key + " in " + name + ": object already exists");
    } catch (AtomicMoveNotSupportedException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": file system has no atomic rename", e);
    } catch (IOException e) {
      if (e.getMessage() != null && e.getMessage().contains("Not a directory")
          || e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null
              && fse.getReason().contains("Not a directory")) {
        throw new ObjectStoreException(
            "Cannot put " + key + " in " + name + ": a prefix of the key is an existing object", e);
      }
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": " + e, e);
    } finally {
      deleteQuietly(temp);
    }
  }

  @Override
  public void put(String key, byte[] bytes) {
    path(key);
    publish(key, writeTemp(key, out -> out.write(bytes)), false);
  }

  @Override
  public void put(String key, InputStream in, long length) {
    path(key);
    StoreSupport.checkLength(key, length);
    publish(key, writeTemp(key, out -> copyExactly(key, in, out, length)), false);
  }

  @Override
  public void put(String key, Path file) {
    path(key);
    Path temp = writeTemp(key, out -> Files.copy(file, out));
    publish(key, temp, false);
  }

  @Override
  public void putIfAbsent(String key, byte[] bytes) {
    Path target = path(key);
    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(target)) {
      throw new ObjectAlreadyExistsException("Cannot create " + key + " in " + name + ": object already exists");
    }
    publish(key, writeTemp(key, out -> out.write(bytes)), true);
  }

  /** Writes into a temporary file of this store (64 KiB buffered), published by an atomic rename at commit. */
  @Override
  public boolean supportsStreamingWrites() {
    return true;
  }

  @Override
  public ObjectWrite openWrite(String key) {
    path(key);
    Path temp = tmp.resolve(UUID.randomUUID() + ".tmp");
    FileChannel ch;
    try {
      ch = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new ObjectStoreException("Cannot put " + key + " in " + name + ": " + e, e);
    }
    OutputStream out = new java.io.BufferedOutputStream(Channels.newOutputStream(ch), BUFFER);
    return new ObjectWrite() {
      private long size;
      private boolean done;

      @Override
      public void write(int b) throws IOException {
        out.write(b);
        size++;
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        out.write(b, off, len);
        size += len;
      }

      @Override
      public long size() {
        return size;
      }

      @Override
      public void commit() {
        if (done) {
          throw new IllegalStateException("Cannot commit " + key + ": the write is already finished");
        }
        done = true;
        try {
          out.flush();
          ch.force(true);
          ch.close();
        } catch (IOException e) {
          closeQuietly(ch);
          deleteQuietly(temp);
          throw new ObjectStoreException("Cannot put " + key + " in " + name + ": " + e, e);
        }
        publish(key, temp, false);
      }

      @Override
      public void close() {
        if (!done) {
          done = true;
          closeQuietly(ch);
          deleteQuietly(temp);
        }
      }
    };
  }

  private void copyExactly(String key, InputStream in, OutputStream out, long length) throws IOException {
    byte[] buffer = new byte[BUFFER];
    long remaining = length;
    while (remaining > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, remaining));
      if (n < 0) {
        throw StoreSupport.shortStream(name, key, length - remaining, length);
      }
      out.write(buffer, 0, n);
      remaining -= n;
    }
  }

  // ---- reads

  private SeekableByteChannel open(String key) {
    Path p = path(key);
    try {
      if (Files.isDirectory(p)) {
        throw new NoSuchFileException(p.toString());
      }
      return Files.newByteChannel(p, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      throw new ObjectNotFoundException("Cannot read " + key + " in " + name + ": no such object");
    } catch (IOException e) {
      if (e.getMessage() != null && e.getMessage().contains("Not a directory")) {
        throw new ObjectNotFoundException("Cannot read " + key + " in " + name + ": no such object");
      }
      throw new ObjectStoreException("Cannot read " + key + " in " + name + ": " + e, e);
    }
  }

  @Override
  public InputStream get(String key) {
    return Channels.newInputStream(open(key));
  }

  @Override
  public InputStream getRange(String key, long offset, long length) {
    StoreSupport.checkRange(key, offset, length);
    SeekableByteChannel ch = open(key);
    try {
      long size = ch.size();
      if (offset > size) {
        ch.close();
        throw StoreSupport.rangeBeyondEnd(name, key, offset, size);
      }
      ch.position(offset);
      return new BoundedInputStream(Channels.newInputStream(ch), Math.min(length, size - offset));
    } catch (IOException e) {
      closeQuietly(ch);
      throw new ObjectStoreException("Cannot read " + key + " in " + name + ": " + e, e);
    }
  }

  @Override
  public Optional<ObjectInfo> head(String key) {
    Path p = path(key);
    try {
      BasicFileAttributes attrs = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      if (!attrs.isRegularFile()) {
        return Optional.empty();
      }
      return Optional.of(info(key, attrs));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      if (e.getMessage() != null && e.getMessage().contains("Not a directory")) {
        return Optional.empty();
      }
      throw new ObjectStoreException("Cannot head " + key + " in " + name + ": " + e, e);
    }
  }

  private static ObjectInfo info(String key, BasicFileAttributes attrs) {
    long nanos = attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
    Object fileKey = attrs.fileKey();
    String etag = String.format(Locale.ROOT, "%x-%x-%x", attrs.size(), nanos,
        fileKey == null ? 0 : fileKey.hashCode());
    return new ObjectInfo(key, attrs.size(), etag, attrs.lastModifiedTime().toInstant());
  }

  @Override
  public List<ObjectInfo> list(String prefix) {
    ObjectKeys.validatePrefix(prefix);
    // start the walk at the deepest directory the prefix fully names
    int slash = prefix.lastIndexOf('/');
    Path start = slash < 0 ? root : root.resolve(prefix.substring(0, slash));
    List<ObjectInfo> result = new ArrayList<>();
    if (!Files.isDirectory(start)) {
      return result;
    }
    try (Stream<Path> files = Files.walk(start)) {
      files.forEach(p -> {
        if (p.equals(root)) {
          return;
        }
        String key = root.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/");
        if (key.equals(TMP_DIR) || key.startsWith(TMP_DIR + "/") || !key.startsWith(prefix)) {
          return;
        }
        try {
          BasicFileAttributes attrs = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
          if (attrs.isRegularFile()) {
            result.add(info(key, attrs));
          }
        } catch (NoSuchFileException e) {
          // deleted during the listing
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
    } catch (IOException | java.io.UncheckedIOException e) {
      if (e.getCause() instanceof NoSuchFileException || e instanceof NoSuchFileException) {
        // a directory vanished during the walk: list what remains
        return list(prefix);
      }
      throw new ObjectStoreException("Cannot list prefix '" + prefix + "' in " + name + ": " + e, e);
    }
    result.sort((a, b) -> ObjectKeys.ORDER.compare(a.key(), b.key()));
    return result;
  }

  @Override
  public void delete(Collection<String> keys) {
    List<Path> paths = keys.stream().map(this::path).toList();
    List<String> failed = new ArrayList<>();
    IOException first = null;
    int i = 0;
    for (Path p : paths) {
      String key = keys instanceof List<String> l ? l.get(i) : root.relativize(p).toString();
      i++;
      try {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && Files.deleteIfExists(p)) {
          fsyncDirectory(p.getParent());
          removeEmptyParents(p.getParent());
        }
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().contains("Not a directory")) {
          continue;
        }
        failed.add(key);
        first = first == null ? e : first;
      }
    }
    if (!failed.isEmpty()) {
      throw new ObjectStoreException("Cannot delete " + failed + " in " + name + ": " + first, first);
    }
  }

  private void removeEmptyParents(Path dir) {
    while (dir != null && !dir.equals(root) && dir.startsWith(root)) {
      try {
        Files.delete(dir);
      } catch (DirectoryNotEmptyException | NoSuchFileException e) {
        return;
      } catch (IOException e) {
        LOG.debug("Could not remove empty directory {}: {}", dir, e.toString());
        return;
      }
      dir = dir.getParent();
    }
  }

  private static void fsyncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // some platforms (Windows) cannot open directories; the rename is still atomic there
      if (!(e instanceof NotDirectoryException) && System.getProperty("os.name", "").startsWith("Windows")) {
        return;
      }
      throw e;
    }
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      LOG.warn("Could not delete temp file {}", p, e);
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // already failing
    }
  }

  @Override
  public String describe() {
    return name;
  }

  @Override
  public void close() {}

  /** A stream that ends after {@code limit} bytes of the underlying one. */
  static final class BoundedInputStream extends InputStream {
    private final InputStream in;
    private long remaining;

    BoundedInputStream(InputStream in, long limit) {
      this.in = in;
      this.remaining = limit;
    }

    @Override
    public int read() throws IOException {
      if (remaining <= 0) {
        return -1;
      }
      int b = in.read();
      if (b >= 0) {
        remaining--;
      }
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (remaining <= 0) {
        return len == 0 ? 0 : -1;
      }
      int n = in.read(b, off, (int) Math.min(len, remaining));
      if (n > 0) {
        remaining -= n;
      }
      return n;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}
