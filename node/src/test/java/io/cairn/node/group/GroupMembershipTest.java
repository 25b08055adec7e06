package io.cairn.node.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.kafka.KafkaBroker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which member should own the store, from Kafka's group protocol on a real broker: one owner at a
 * time, a member joining never takes ownership from the owner, and a member that leaves hands over
 * at once, well within the session timeout.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GroupMembershipTest {
  private static final Duration SESSION = Duration.ofSeconds(20);

  static GroupMembership.Settings settings(String group, String member) {
    return new GroupMembership.Settings(KafkaBroker.shared().bootstrapServers(), group, member, SESSION, Map.of());
  }

  static void await(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime()).as("waiting for %s (%s)", what, within).isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  static int members(String group) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KafkaBroker.shared().bootstrapServers()))) {
      ConsumerGroupDescription d = admin.describeConsumerGroups(List.of("cairn-" + group)).all().get(10, TimeUnit.SECONDS)
          .get("cairn-" + group);
      return d.state().toString().equalsIgnoreCase("stable") ? d.members().size() : -1;
    }
  }

  @Test
  void oneOwnerAtATimeAndALeavingOwnerHandsOverAtOnce() throws Exception {
    String group = KafkaBroker.uniqueTopic("g");
    List<Boolean> aEvents = new CopyOnWriteArrayList<>();
    List<Boolean> bEvents = new CopyOnWriteArrayList<>();
    GroupMembership a = GroupMembership.join(settings(group, "a"), aEvents::add);
    GroupMembership b = null;
    try {
      await("a alone to own", Duration.ofSeconds(30), a::isOwner);
      b = GroupMembership.join(settings(group, "b"), bEvents::add);
      await("the group to be stable with two members", Duration.ofSeconds(30), () -> {
        try {
          return members(group) == 2;
        } catch (Exception e) {
          return false;
        }
      });
      Thread.sleep(1000); // the cooperative protocol's second round, if any, has run
      assertThat(a.isOwner()).as("a joining standby does not take the store from the owner").isTrue();
      assertThat(b.isOwner()).isFalse();
      assertThat(aEvents).as("the owner was never revoked").containsExactly(true);
      await("both members to describe the group with a as its owner", Duration.ofSeconds(10), () -> {
        GroupMembership.View va = a.view();
        return va.members().equals(List.of("a", "b")) && va.owner().equals("a");
      });
      GroupMembership late = b;
      await("b to describe the group too", Duration.ofSeconds(10), () -> late.view().owner().equals("a"));
      long t0 = System.nanoTime();
      a.close();
      GroupMembership standby = b;
      await("b to own after a left", SESSION.dividedBy(2), standby::isOwner);
      long handover = (System.nanoTime() - t0) / 1_000_000;
      // a member sets its owner flag and then calls its listener, on its own thread: wait for the call
      await("b's listener to hear it owns", Duration.ofSeconds(5), () -> !bEvents.isEmpty());
      assertThat(aEvents).containsExactly(true, false);
      assertThat(bEvents).containsExactly(true);
      System.out.printf("hand-over after a clean leave: %d ms (session timeout %d ms)%n", handover, SESSION.toMillis());
    } finally {
      a.close();
      if (b != null) {
        b.close();
      }
    }
  }
}
