package io.cairn.snapshotter;

import io.cairn.engine.runtime.EngineState;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What recovery found: the newest snapshot that verified (if any), its loaded state when loading
 * was asked for, and every newer snapshot that was rejected, with the reason.
 */
public record RecoveryChoice(Optional<ManifestInfo> chosen, Optional<Manifest> manifest, Optional<EngineState> state, List<Rejected> rejected) {
  /** A snapshot that did not verify, and why. */
  public record Rejected(ManifestInfo info, String reason) {
    public Rejected {
      Objects.requireNonNull(info, "info");
      Objects.requireNonNull(reason, "reason");
    }
  }

  public RecoveryChoice {
    Objects.requireNonNull(chosen, "chosen");
    Objects.requireNonNull(manifest, "manifest");
    Objects.requireNonNull(state, "state");
    rejected = List.copyOf(rejected);
  }

  public boolean isEmpty() {
    return chosen.isEmpty();
  }
}
