package io.cairn.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The heap governor's rule, and the governor at work in child JVMs: the soft heap limit it sets
 * after real collection cycles, and the cases where it must stay out.
 */
class HeapGovernorTest {
  private static final long MIB = 1L << 20;
  private static final long GIB = 1L << 30;

  @Test
  void theLimitStartsAtTheFloorAndFollowsThreeTimesTheHeapUsed() {
    assertThat(HeapGovernor.next(0, 0, 20 * GIB, 3 * GIB)).isEqualTo(3 * GIB);
    assertThat(HeapGovernor.next(3 * GIB, 500 * MIB, 20 * GIB, 3 * GIB)).isEqualTo(3 * GIB);
    assertThat(HeapGovernor.next(3 * GIB, 2 * GIB, 20 * GIB, 3 * GIB)).isEqualTo(6 * GIB);
    assertThat(HeapGovernor.next(6 * GIB, 9 * GIB, 20 * GIB, 3 * GIB)).isEqualTo(20 * GIB);
    assertThat(HeapGovernor.next(0, 0, 2 * GIB, 3 * GIB)).as("a heap smaller than the floor").isEqualTo(2 * GIB);
    assertThat(HeapGovernor.next(64 * MIB, 100 * MIB, 2 * GIB, 64 * MIB)).isEqualTo(300 * MIB);
  }

  @Test
  void theLimitNeverShrinks() {
    assertThat(HeapGovernor.next(8 * GIB, 100 * MIB, 20 * GIB, 3 * GIB)).isEqualTo(8 * GIB);
    assertThat(HeapGovernor.next(20 * GIB, 0, 20 * GIB, 3 * GIB)).isEqualTo(20 * GIB);
  }

  @Test
  void theFloorIsReadAsASize() {
    assertThat(HeapGovernor.floorBytes(null)).isEqualTo(3 * GIB);
    assertThat(HeapGovernor.floorBytes("512m")).isEqualTo(512 * MIB);
    assertThat(HeapGovernor.floorBytes("2G")).isEqualTo(2 * GIB);
    assertThat(HeapGovernor.floorBytes("1048576")).isEqualTo(MIB);
    assertThatThrownBy(() -> HeapGovernor.floorBytes("lots")).hasMessageContaining("cairn.heap.floor: 'lots'");
    assertThatThrownBy(() -> HeapGovernor.floorBytes("-1g")).hasMessageContaining("512m or 3g");
  }

  /** Holds a live set, allocates garbage until the governor has seen cycles, prints what it set. */
  public static final class Probe {
    public static void main(String[] args) throws Exception {
      long[][] live = new long[100][];
      for (int i = 0; i < live.length; i++) {
        live[i] = new long[(int) (MIB / 8)]; // 100 MiB kept
      }
      HeapGovernor g = HeapGovernor.install();
      long sink = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while ((g == null || g.cycles() < 3) && System.nanoTime() < deadline) {
        if (g == null) {
          System.gc(); // a cycle for the JVMs where the governor stays out
          g = HeapGovernor.install();
          if (g == null) {
            break;
          }
        }
        byte[] garbage = new byte[64 * 1024];
        sink += garbage.length;
      }
      HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      System.out.println("installed=" + (g != null) + " cycles=" + (g == null ? 0 : g.cycles())
          + " limit=" + (g == null ? 0 : g.softLimitBytes()) + " flag=" + hs.getVMOption("SoftMaxHeapSize").getValue()
          + " live=" + live.length + " sink=" + (sink > 0));
    }
  }

  private static Map<String, String> probe(String... jvmOptions) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of(jvmOptions));
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Probe.class.getName()));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(90, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    String last = out.lines().filter(l -> l.startsWith("installed=")).reduce((a, b) -> b).orElseThrow(() -> new AssertionError(out));
    return java.util.Arrays.stream(last.split(" ")).map(kv -> kv.split("=", 2))
        .collect(Collectors.toMap(kv -> kv[0], kv -> kv[1]));
  }

  @Test
  void onShenandoahTheLimitFollowsTheHeapUsedAfterEachCycle() throws Exception {
    Map<String, String> r = probe("-XX:+UseShenandoahGC", "-Xmx2g", "-Dcairn.heap.floor=64m");
    assertThat(r.get("installed")).isEqualTo("true");
    assertThat(Long.parseLong(r.get("cycles"))).isGreaterThanOrEqualTo(3);
    long limit = Long.parseLong(r.get("limit"));
    assertThat(Long.parseLong(r.get("flag"))).as("the JVM's flag is what the governor set").isEqualTo(limit);
    // 100 MiB live, times three, plus what a cycle's floating garbage and the JVM's own objects add
    assertThat(limit).isBetween(300 * MIB, 2 * GIB - 1);
  }

  @Test
  void itStaysOutWhenTheOperatorSetTheLimitOrTheCollectorIgnoresIt() throws Exception {
    Map<String, String> set = probe("-XX:+UseShenandoahGC", "-Xmx2g", "-XX:SoftMaxHeapSize=1g");
    assertThat(set.get("installed")).isEqualTo("false");
    assertThat(set.get("flag")).isEqualTo(Long.toString(GIB));
    Map<String, String> g1 = probe("-XX:+UseG1GC", "-Xmx2g");
    assertThat(g1.get("installed")).isEqualTo("false");
    Map<String, String> off = probe("-XX:+UseShenandoahGC", "-Xmx2g", "-Dcairn.heap.governor=false");
    assertThat(off.get("installed")).isEqualTo("false");
    assertThat(off.get("flag")).isEqualTo(Long.toString(2 * GIB));
  }
}
