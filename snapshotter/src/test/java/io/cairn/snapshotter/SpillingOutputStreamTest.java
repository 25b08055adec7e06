package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SpillingOutputStreamTest {
  @TempDir Path dir;

  static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  @Test
  void staysInMemoryUpToTheThreshold() throws Exception {
    byte[] data = random(10_000);
    SpillingOutputStream s = new SpillingOutputStream(10_000, dir);
    s.write(data, 0, 6_000);
    s.write(data, 6_000, 4_000);
    s.close();
    assertThat(s.file()).isNull();
    assertThat(s.size()).isEqualTo(10_000);
    assertThat(s.bytes()).isEqualTo(data);
    assertThat(s.discard()).isFalse();
  }

  @Test
  void movesToATemporaryFilePastTheThresholdAndDiscardDeletesIt() throws Exception {
    byte[] data = random(100_000);
    SpillingOutputStream s = new SpillingOutputStream(10_000, dir);
    for (int off = 0; off < data.length; off += 3_000) {
      s.write(data, off, Math.min(3_000, data.length - off));
    }
    s.write(7);
    s.close();
    Path f = s.file();
    assertThat(f).isNotNull().hasParent(dir);
    assertThat(s.size()).isEqualTo(100_001);
    byte[] back = Files.readAllBytes(f);
    assertThat(java.util.Arrays.copyOf(back, data.length)).isEqualTo(data);
    assertThat(back[data.length]).isEqualTo((byte) 7);
    assertThat(s.discard()).isTrue();
    assertThat(f).doesNotExist();
  }

  @Test
  void aZeroThresholdAlwaysSpills() throws Exception {
    SpillingOutputStream s = new SpillingOutputStream(0, dir);
    s.write(1);
    s.close();
    assertThat(s.file()).isNotNull();
    s.discard();
  }
}
