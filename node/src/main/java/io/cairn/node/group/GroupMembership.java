package io.cairn.node.group;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Membership of a group of nodes, and which member should own the store, from Kafka's
 * consumer-group protocol: no heartbeat or election protocol of cairn's own. Every member
 * subscribes to a one-partition coordination topic under one consumer group; the member the group
 * assigns the partition to is the owner, every other member a standby.
 *
 * <p>Design and invariants:
 *
 * <ul>
 *   <li>Failure detection is Kafka's: a member that stops heartbeating for {@code sessionTimeout}
 *       (killed, paused, partitioned) is removed and the partition is assigned to another member; a
 *       member that {@link #close}s leaves the group at once, so a clean stop hands over without
 *       waiting for the session timeout.
 *   <li>The cooperative sticky assignor: a member joining never takes the partition away from the
 *       owner (there is no eager "revoke everything" round), so a standby starting does not
 *       interrupt the owner.
 *   <li>Ownership here says who <em>should</em> own the store, never who <em>may</em> write: that is
 *       the store's epoch alone ({@code StoreFence}). A member that was paused past the session
 *       timeout may still believe it owns the partition when it resumes; the epoch fences it.
 *   <li>One thread ({@code cairn-group-<name>}) owns the consumer: it polls (nothing is ever
 *       produced to the topic, so polls only drive the protocol) and runs the listener, in order,
 *       with {@code true} on assignment and {@code false} on revocation or loss. {@link
 *       #isOwner()} is readable from any thread.
 * </ul>
 */
public final class GroupMembership implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GroupMembership.class);

  /**
   * Where and how a group meets.
   *
   * @param bootstrapServers the Kafka cluster the group meets on
   * @param group the group's name: the consumer group is {@code cairn-<group>}, the coordination
   *     topic {@code cairn-group-<group>} (created with one partition when missing)
   * @param memberId this member's name as other members and Kafka's tools see it (its client id)
   * @param sessionTimeout how long a silent member stays a member
   * @param properties passed to the Kafka clients as they are (security settings, for instance)
   */
  public record Settings(String bootstrapServers, String group, String memberId, Duration sessionTimeout,
      Map<String, String> properties) {
    public Settings {
      Objects.requireNonNull(bootstrapServers, "bootstrapServers");
      Objects.requireNonNull(group, "group");
      Objects.requireNonNull(memberId, "memberId");
      Objects.requireNonNull(sessionTimeout, "sessionTimeout");
      properties = Map.copyOf(properties);
      if (!group.matches("[A-Za-z0-9._-]{1,200}")) {
        throw new IllegalArgumentException("Cannot form group '" + group + "': a group name is 1 to 200 letters, digits, '.', '_' or '-'");
      }
    }

    String consumerGroup() {
      return "cairn-" + group;
    }

    String topic() {
      return "cairn-group-" + group;
    }
  }

  private final Settings settings;
  private final Consumer<Boolean> listener;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final Thread thread;
  private final AtomicBoolean owner = new AtomicBoolean();
  /** The group as last described (members, owner), refreshed by the member's thread; never fetched by a reader. */
  private volatile View view = new View(List.of(), "", 0);
  private long viewDueNanos;
  private Admin admin;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final CountDownLatch stopped = new CountDownLatch(1);

  private GroupMembership(Settings settings, Consumer<Boolean> listener) {
    this.settings = settings;
    this.listener = listener;
    this.consumer = new KafkaConsumer<>(consumerProperties(settings), new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.thread = new Thread(this::run, "cairn-group-" + settings.group());
    this.thread.setDaemon(true);
  }

  /**
   * Joins the group: creates the coordination topic when it is missing, subscribes, and starts the
   * member's thread. {@code listener} hears {@code true} when this member becomes the owner and
   * {@code false} when it stops being the owner, on the member's thread.
   *
   * @throws IllegalStateException when the topic cannot be created or checked
   */
  public static GroupMembership join(Settings settings, Consumer<Boolean> listener) {
    ensureTopic(settings);
    GroupMembership m = new GroupMembership(settings, listener);
    m.thread.start();
    return m;
  }

  /**
   * The group as Kafka last described it: its members' names (client ids, sorted), the owner's
   * name ("" when none is assigned) and when it was read (epoch milliseconds, 0 before the first).
   */
  public record View(List<String> members, String owner, long readAtMillis) {
    public View {
      members = List.copyOf(members);
    }
  }

  /** The group as last described, at most about {@value #VIEW_EVERY_MILLIS} ms old while the member runs; never waits. */
  public View view() {
    return view;
  }

  static final long VIEW_EVERY_MILLIS = 2000;

  /** Counted down when this member's first rebalance completes (it then knows whether it owns the store). */
  private final java.util.concurrent.CountDownLatch joined = new java.util.concurrent.CountDownLatch(1);

  /**
   * Waits until this member's first rebalance has completed — {@link #isOwner()} then says whether
   * the group made it the owner — at most {@code within}; false when it has not completed by then.
   */
  public boolean awaitJoined(Duration within) throws InterruptedException {
    return joined.await(within.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Whether {@link #close} has been called (a listener told "not the owner" then hears a leave, not a move). */
  public boolean closing() {
    return closed.get();
  }

  /** Whether the group has assigned this member the coordination partition: it should own the store. */
  public boolean isOwner() {
    return owner.get();
  }

  public Settings settings() {
    return settings;
  }

  static Properties consumerProperties(Settings s) {
    Properties p = new Properties();
    p.putAll(s.properties());
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, s.consumerGroup());
    p.put(ConsumerConfig.CLIENT_ID_CONFIG, s.memberId());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
    p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CooperativeStickyAssignor.class.getName());
    long session = s.sessionTimeout().toMillis();
    p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(session));
    // a member learns of a rebalance at its next heartbeat: at most 1 s, so that a hand-over is quick
    p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, String.valueOf(Math.max(100, Math.min(1000, session / 3))));
    return p;
  }

  private static void ensureTopic(Settings s) {
    Properties p = new Properties();
    p.putAll(s.properties());
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers());
    try (Admin admin = Admin.create(p)) {
      try {
        admin.createTopics(List.of(new NewTopic(s.topic(), 1, (short) -1))).all().get(30, TimeUnit.SECONDS);
        LOG.info("Group '{}': created the coordination topic {}", s.group(), s.topic());
      } catch (java.util.concurrent.ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) {
          throw new IllegalStateException("Cannot form group '" + s.group() + "': cannot create topic " + s.topic() + " on "
              + s.bootstrapServers() + ": " + e.getCause().getMessage(), e.getCause());
        }
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IllegalStateException("Cannot form group '" + s.group() + "': " + s.bootstrapServers()
            + " did not answer within 30 s", e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Cannot form group '" + s.group() + "': interrupted", e);
      }
    }
  }

  private void run() {
    try {
      consumer.subscribe(List.of(settings.topic()), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) {
            set(true);
          }
          joined.countDown(); // called after every rebalance, with nothing new too (cooperative protocol)
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) {
            set(false);
          }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
          if (!partitions.isEmpty()) {
            set(false);
          }
        }
      });
      while (!closed.get()) {
        consumer.poll(Duration.ofMillis(200));
        describe();
      }
    } catch (WakeupException e) {
      // closing
    } catch (RuntimeException e) {
      LOG.warn("Group '{}': member {} stopped: {}", settings.group(), settings.memberId(), e.toString());
    } finally {
      try {
        consumer.close(Duration.ofSeconds(5)); // leaves the group: the partition moves at once
      } catch (RuntimeException e) {
        LOG.debug("Group '{}': closing the consumer: {}", settings.group(), e.toString());
      }
      if (admin != null) {
        admin.close(Duration.ofSeconds(1));
      }
      set(false);
      stopped.countDown();
    }
  }

  /** Refreshes {@link #view} every {@value #VIEW_EVERY_MILLIS} ms, on this member's thread, bounded by 1 s. */
  private void describe() {
    long now = System.nanoTime();
    if (now < viewDueNanos) {
      return;
    }
    viewDueNanos = now + TimeUnit.MILLISECONDS.toNanos(VIEW_EVERY_MILLIS);
    try {
      if (admin == null) {
        Properties p = new Properties();
        p.putAll(settings.properties());
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, settings.bootstrapServers());
        admin = Admin.create(p);
      }
      var d = admin.describeConsumerGroups(List.of(settings.consumerGroup())).all().get(1, TimeUnit.SECONDS)
          .get(settings.consumerGroup());
      List<String> members = new java.util.ArrayList<>();
      String ownerName = "";
      for (var m : d.members()) {
        members.add(m.clientId());
        if (!m.assignment().topicPartitions().isEmpty()) {
          ownerName = m.clientId();
        }
      }
      java.util.Collections.sort(members);
      view = new View(members, ownerName, System.currentTimeMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException | RuntimeException e) {
      LOG.debug("Group '{}': cannot describe the group now: {}", settings.group(), e.toString());
    }
  }

  private void set(boolean own) {
    if (owner.getAndSet(own) != own) {
      LOG.info("Group '{}': member {} is {}", settings.group(), settings.memberId(), own ? "the owner" : "a standby");
      listener.accept(own);
    }
  }

  /** Leaves the group (the partition moves to another member at once) and stops the member's thread; idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      consumer.wakeup();
    }
    try {
      if (Thread.currentThread() != thread && !stopped.await(15, TimeUnit.SECONDS)) {
        LOG.warn("Group '{}': member {} did not leave within 15 s", settings.group(), settings.memberId());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
