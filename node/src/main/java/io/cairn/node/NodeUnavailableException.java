package io.cairn.node;

/**
 * The node cannot serve this request now, through no fault of the request: it is still recovering
 * ({@link Reason#NOT_READY}), or another node took its store and it stopped writing ({@link
 * Reason#FENCED}). HTTP answers 503 with the message; pgwire answers 57P03 (cannot_connect_now)
 * for the first and 57P01 (admin_shutdown) for the second.
 */
public final class NodeUnavailableException extends RuntimeException implements io.cairn.engine.sql.SqlState.Carrier {
  /** Why the node cannot serve. */
  public enum Reason {
    NOT_READY,
    FENCED
  }

  private final Reason reason;

  public NodeUnavailableException(Reason reason, String message) {
    super(message);
    this.reason = java.util.Objects.requireNonNull(reason, "reason");
  }

  public Reason reason() {
    return reason;
  }

  /** 57P01 admin_shutdown when fenced, 57P03 cannot_connect_now when not ready. */
  @Override
  public String sqlState() {
    return reason == Reason.FENCED ? "57P01" : "57P03";
  }
}
