package io.cairn.snapshotter;

import io.cairn.engine.row.Schema;
import io.cairn.engine.source.SourceOffsets;
import io.cairn.engine.trace.Description;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The commit point of a snapshot (format version {@value #FORMAT_VERSION}): the engine's state as
 * of closed tick {@code tick}, as a list of batch files per arrangement shard, and every source's
 * {@code offsets(tick)}. Serialized by {@link ManifestCodec} as JSON with a SHA-256 checksum of
 * its own bytes; written create-if-absent under {@code snapshots/<tick, 20 digits>-<id>.manifest.json}.
 *
 * @param formatVersion {@value #FORMAT_VERSION}
 * @param snapshotId a random UUID, also in the manifest's key
 * @param tick the last closed tick T the state is as of
 * @param createdAt wall-clock time of the capture, ISO-8601 UTC
 * @param catalogPosition the catalog entry count applied when the state was captured
 * @param shards the number of workers (shards) the state was captured with
 * @param offsets per source, {@code offsets(T)}
 * @param arrangements one entry per (arrangement, shard)
 * @param catalogHash the hash of catalog entry {@code catalogPosition - 1} ("" for none; null in
 *     format version 1): recovery checks that the catalog still holds that very entry
 * @param epoch the epoch of the node that wrote the manifest (0 in format version 1)
 * @param views every view in the snapshot by name, with the arrangement holding its rows and its
 *     columns (empty before format version 3): what a reader outside cairn needs
 */
public record Manifest(
    int formatVersion,
    String snapshotId,
    long tick,
    String createdAt,
    long catalogPosition,
    int shards,
    Map<String, Map<String, String>> offsets,
    List<ArrangementEntry> arrangements,
    String catalogHash,
    long epoch,
    List<ViewEntry> views,
    List<SinkEntry> sinks) {
  /** The format this build writes; it reads 1 (no catalog hash, no epoch), 2 (no views), 3 (no sinks) and 4. */
  public static final int FORMAT_VERSION = 4;

  public Manifest {
    Objects.requireNonNull(snapshotId, "snapshotId");
    Objects.requireNonNull(createdAt, "createdAt");
    if (formatVersion < 1 || formatVersion > FORMAT_VERSION) {
      throw new IllegalArgumentException("Cannot read manifest: format version " + formatVersion + " is not supported (this build reads 1 to "
          + FORMAT_VERSION + ")");
    }
    if (tick < 0 || shards < 1) {
      throw new IllegalArgumentException("Cannot create manifest: tick " + tick + " < 0 or shards " + shards + " < 1");
    }
    Instant.parse(createdAt);
    Map<String, Map<String, String>> o = new TreeMap<>();
    Objects.requireNonNull(offsets, "offsets").forEach((k, v) -> o.put(k, Collections.unmodifiableMap(new TreeMap<>(v))));
    offsets = Collections.unmodifiableMap(o);
    arrangements = List.copyOf(arrangements);
    views = views == null ? List.of() : List.copyOf(views);
    sinks = sinks == null ? List.of() : List.copyOf(sinks);
  }

  /** A manifest without sinks (format 3 and tests). */
  public Manifest(int formatVersion, String snapshotId, long tick, String createdAt, long catalogPosition, int shards,
      Map<String, Map<String, String>> offsets, List<ArrangementEntry> arrangements, String catalogHash, long epoch, List<ViewEntry> views) {
    this(formatVersion, snapshotId, tick, createdAt, catalogPosition, shards, offsets, arrangements, catalogHash, epoch, views, List.of());
  }

  /** A manifest without views (format 2 and tests). */
  public Manifest(int formatVersion, String snapshotId, long tick, String createdAt, long catalogPosition, int shards,
      Map<String, Map<String, String>> offsets, List<ArrangementEntry> arrangements, String catalogHash, long epoch) {
    this(formatVersion, snapshotId, tick, createdAt, catalogPosition, shards, offsets, arrangements, catalogHash, epoch, List.of(), List.of());
  }

  /** The view named {@code name}, if this snapshot has it. */
  public java.util.Optional<ViewEntry> view(String name) {
    return views.stream().filter(v -> v.name().equals(name)).findFirst();
  }

  /**
   * One view: its rows are the consolidated contents of arrangement {@code arrangement} (all
   * shards; key columns then value columns, named as the view's columns), and {@code columns} is
   * the view's schema as text ({@link Schema#parse}) in the view's column order.
   *
   * @param id the view's dataflow id: the catalog position of its CREATE statement
   */
  public record ViewEntry(String name, long id, String arrangement, String columns) {
    public ViewEntry {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(arrangement, "arrangement");
      Objects.requireNonNull(columns, "columns");
    }
  }

  /**
   * One sink's exactly-once bookkeeping as of the snapshot's tick ({@code SinkTrack}): what its
   * destination is known to hold (up to {@code positions}; null: none of its records) and the
   * changes it still lacks then. A recovery restores them next to the view's state and reads back
   * what the destination committed after {@code positions} before it writes anything.
   *
   * @param id the catalog position of the sink's CREATE
   * @param lastLabel the last tick label the sink had committed (-1: none)
   * @param columns the schema of the rows, as text ({@link Schema#parse})
   * @param pending one list per row: its diff, then its values in column order
   */
  public record SinkEntry(String name, long id, long lastLabel, Map<String, String> positions, String columns, List<List<Object>> pending) {
    public SinkEntry {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(columns, "columns");
      pending = pending == null ? List.of() : pending;
    }
  }

  public Instant createdAtInstant() {
    return Instant.parse(createdAt);
  }

  /** The offsets as the engine's type. */
  public Map<String, SourceOffsets> sourceOffsets() {
    Map<String, SourceOffsets> out = new TreeMap<>();
    offsets.forEach((k, v) -> out.put(k, new SourceOffsets(v)));
    return out;
  }

  /** Every batch file (non-empty batch) of this snapshot. */
  public List<BatchFile> files() {
    List<BatchFile> out = new ArrayList<>();
    for (ArrangementEntry a : arrangements) {
      for (BatchFile f : a.batches()) {
        if (f.path() != null) {
          out.add(f);
        }
      }
    }
    return out;
  }

  /**
   * The snapshot's one row count: the updates stored in the batch files referenced here (the sum
   * of their {@code rows}), which is what loading the snapshot yields. The snapshotter logs and
   * reports this count; it may exceed the captured state's in-memory count when a merged batch is
   * stored as the already-uploaded files of its inputs.
   */
  public long rows() {
    return arrangements.stream().flatMap(a -> a.batches().stream()).mapToLong(BatchFile::rows).sum();
  }

  public long bytes() {
    return files().stream().mapToLong(BatchFile::bytes).sum();
  }

  /**
   * The batches of one arrangement shard.
   *
   * @param upper the spine's upper frontier at capture
   * @param keySchema the key schema as text ({@link Schema#parse})
   * @param valSchema the value schema as text
   * @param schemaFingerprint fingerprint of both, also in every batch file's footer
   * @param batches oldest first, as the spine holds them
   */
  public record ArrangementEntry(
      String name, int shard, long upper, String keySchema, String valSchema, String schemaFingerprint, List<BatchFile> batches) {
    public ArrangementEntry {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(keySchema, "keySchema");
      Objects.requireNonNull(valSchema, "valSchema");
      batches = List.copyOf(batches);
    }

    public Schema parsedKeySchema() {
      return Schema.parse(keySchema);
    }

    public Schema parsedValSchema() {
      return Schema.parse(valSchema);
    }
  }

  /**
   * One batch. An empty batch has no file: {@code path} and {@code checksum} are null and rows
   * and bytes 0.
   *
   * @param id the batch id, kept when loaded so a later snapshot can reference the file again
   * @param path the file's key relative to the snapshot prefix
   * @param checksum {@code crc32c:<8 hex digits>} of the file's bytes
   * @param lower the batch description's lower
   */
  public record BatchFile(String id, String path, long rows, long bytes, String checksum, long lower, long upper, long since) {
    public BatchFile {
      Objects.requireNonNull(id, "id");
      if (rows < 0 || bytes < 0) {
        throw new IllegalArgumentException("Cannot describe batch file " + id + ": negative rows or bytes");
      }
      if ((path == null) != (checksum == null)) {
        throw new IllegalArgumentException("Cannot describe batch file " + id + ": path and checksum must be both set or both null");
      }
    }

    public Description description() {
      return new Description(lower, upper, since);
    }
  }
}
