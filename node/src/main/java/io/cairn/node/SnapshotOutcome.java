package io.cairn.node;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.cairn.snapshotter.SnapshotResult;
import java.util.Objects;

/**
 * One snapshot this node took, as reported: the snapshotter's figures of the commit and what ran
 * after it (see {@link SnapshotService}). What {@code POST /snapshot} returns and status shows as
 * {@code lastSnapshot}, rendered by Jackson with the field names below; metrics read it by its
 * accessors.
 *
 * @param result the committed snapshot's figures (a snapshot that did not commit has no outcome)
 * @param committed always true: an outcome exists only for a committed snapshot (kept in the JSON
 *     for the readers that check it)
 * @param ownership the ownership check after the commit: {@code checking}, {@code confirmed (epoch
 *     N)}, {@code fenced: ...} or {@code unknown (...)}
 * @param sourcesConfirmed whether the snapshot's offsets were confirmed to the sources
 * @param retention retention and garbage collection after the commit: {@code ok}, {@code failed
 *     ...}, {@code skipped: ...}; null (absent from the JSON) until they ran
 */
@JsonPropertyOrder({"snapshotId", "manifest", "tick", "catalogPosition", "rows", "files", "filesNew", "filesReused",
    "bytesUploaded", "bytesTotal", "capturePauseMicros", "uploadMillis", "committed", "ownership", "sourcesConfirmed",
    "retention"})
public record SnapshotOutcome(
    @JsonIgnore SnapshotResult result,
    boolean committed,
    String ownership,
    boolean sourcesConfirmed,
    @JsonInclude(JsonInclude.Include.NON_NULL) String retention) {
  public SnapshotOutcome {
    Objects.requireNonNull(result, "result");
    Objects.requireNonNull(ownership, "ownership");
  }

  /** A snapshot that just committed, its ownership check not yet run. */
  static SnapshotOutcome committed(SnapshotResult result) {
    return new SnapshotOutcome(result, true, "checking", false, null);
  }

  SnapshotOutcome withOwnership(String o) {
    return new SnapshotOutcome(result, committed, o, sourcesConfirmed, retention);
  }

  SnapshotOutcome withSourcesConfirmed(String o) {
    return new SnapshotOutcome(result, committed, o, true, retention);
  }

  SnapshotOutcome withRetention(String r) {
    return new SnapshotOutcome(result, committed, ownership, sourcesConfirmed, r);
  }

  @JsonProperty
  public String snapshotId() {
    return result.snapshotId();
  }

  /** The manifest's key (the commit point). */
  @JsonProperty
  public String manifest() {
    return result.manifestKey();
  }

  @JsonProperty
  public long tick() {
    return result.tick();
  }

  @JsonProperty
  public long catalogPosition() {
    return result.catalogPosition();
  }

  @JsonProperty
  public long rows() {
    return result.rows();
  }

  @JsonProperty
  public int files() {
    return result.files();
  }

  @JsonProperty
  public int filesNew() {
    return result.filesNew();
  }

  @JsonProperty
  public int filesReused() {
    return result.filesReused();
  }

  @JsonProperty
  public long bytesUploaded() {
    return result.bytesUploaded();
  }

  @JsonProperty
  public long bytesTotal() {
    return result.bytesTotal();
  }

  @JsonProperty
  public long capturePauseMicros() {
    return result.capturePause().toNanos() / 1000;
  }

  @JsonProperty
  public long uploadMillis() {
    return result.uploadDuration().toMillis();
  }
}
