package io.cairn.objectstore;

import java.io.OutputStream;

/**
 * A write of one object whose length is not known in advance, from {@link
 * ObjectStore#openWrite}. Bytes written become the object only when {@link #commit()}
 * returns, atomically, as with {@link ObjectStore#put}; {@link #close()} without a commit aborts
 * (nothing becomes visible, a multipart upload is aborted). Use it in try-with-resources and call
 * {@code commit()} last inside. Not thread-safe: one producer thread.
 *
 * <p>{@code write} may throw an {@link java.io.IOException} early when the store has already
 * failed (a part upload failed); {@code commit} throws the store's exception from {@code
 * io.cairn.objectstore.exceptions}.
 */
public abstract class ObjectWrite extends OutputStream {

  /** Makes the bytes written so far the object. Durable when it returns. */
  public abstract void commit();

  /** Bytes written so far. */
  public abstract long size();

  /** Aborts unless committed; idempotent. */
  @Override
  public abstract void close();
}
