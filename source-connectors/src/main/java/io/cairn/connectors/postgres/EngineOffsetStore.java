package io.cairn.connectors.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;
import org.apache.kafka.connect.util.Callback;

/**
 * Debezium's offset store for a {@link PostgresSource}: the offsets live in the engine, not in a
 * file. Debezium instantiates this class by name, so it finds its {@link Channel} through the id in
 * the worker property {@value #ID_PROPERTY}.
 *
 * <p>Reads return what the channel serves: the offsets given to {@code seek()} while Debezium's task
 * starts (that is where it resumes), and afterwards only offsets that are in a committed cairn
 * snapshot (nothing before the first {@code onSnapshotCommitted}). Debezium's Postgres task confirms
 * to the replication slot exactly the LSN of the offsets it reads back here, so this is what keeps
 * the slot from freeing WAL that recovery still needs. Writes from Debezium's offset flushes are
 * ignored: the position the engine records comes from the delivered records.
 */
public final class EngineOffsetStore extends MemoryOffsetBackingStore {
  static final String ID_PROPERTY = "cairn.offset.store.id";
  private static final Map<String, Channel> CHANNELS = new ConcurrentHashMap<>();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What one source serves to its Debezium engine. */
  static final class Channel {
    private volatile Map<String, Object> served;

    void serve(Map<String, Object> offsets) {
      this.served = offsets == null ? null : Map.copyOf(offsets);
    }

    Map<String, Object> served() {
      return served;
    }
  }

  private Channel channel;

  static Channel register(String id) {
    Channel c = new Channel();
    CHANNELS.put(id, c);
    return c;
  }

  static void unregister(String id) {
    CHANNELS.remove(id);
  }

  @Override
  public void configure(WorkerConfig config) {
    super.configure(config);
    Object id = config.originals().get(ID_PROPERTY);
    channel = id == null ? null : CHANNELS.get(id.toString());
    if (channel == null) {
      throw new IllegalStateException("Cannot configure the cairn offset store: no channel for '" + ID_PROPERTY + "' = " + id);
    }
  }

  @Override
  public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
    Map<String, Object> offsets = channel.served();
    Map<ByteBuffer, ByteBuffer> out = new HashMap<>();
    if (offsets != null) {
      ByteBuffer value;
      try {
        value = ByteBuffer.wrap(JSON.writeValueAsBytes(offsets));
      } catch (JsonProcessingException e) {
        throw new IllegalStateException("Cannot serialize offsets " + offsets, e);
      }
      // One source, one table, one Debezium partition: every requested key gets the served offsets.
      for (ByteBuffer key : keys) {
        out.put(key, value.duplicate());
      }
    }
    return CompletableFuture.completedFuture(out);
  }

  @Override
  public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
    if (callback != null) {
      callback.onCompletion(null, null);
    }
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public Set<Map<String, Object>> connectorPartitions(String connectorName) {
    return Set.of();
  }

  static String describe(ByteBuffer b) {
    return b == null ? "null" : StandardCharsets.UTF_8.decode(b.duplicate()).toString();
  }
}
