package io.cairn.server.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.node.Node;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 part of the {@code class-cache} training: a node writes a snapshot over the S3 client to
 * {@link TrainingS3} and a second one recovers from it. If the training endpoint fell short of
 * what the client sends, the training would only print a line and the archive would silently lack
 * the S3 response path again: this test fails instead.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 8 s
class ClassCacheS3Test {
  @TempDir Path dir;

  @Test
  void aNodeWritesASnapshotOverTheS3ClientAndAnotherRecoversFromIt() throws Exception {
    Node.Options options = Node.Options.defaults().withProgress(false).withCatchUpTimeout(Duration.ofSeconds(5));
    int objects = ClassCache.trainOnS3(dir, options);
    // two catalog entries, the epoch, at least one batch file and the manifest
    assertThat(objects).isGreaterThanOrEqualTo(5);
  }

  @Test
  void anAwsChunkedBodyIsDecodedToItsPayload() {
    byte[] body = ("5;chunk-signature=ab\r\nhello\r\n6;chunk-signature=cd\r\n world\r\n0;chunk-signature=ef\r\n"
        + "x-amz-checksum-crc32:AAAAAA==\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    assertThat(new String(TrainingS3.unchunk(body), StandardCharsets.US_ASCII)).isEqualTo("hello world");
  }
}
