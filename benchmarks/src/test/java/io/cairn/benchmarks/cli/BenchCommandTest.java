package io.cairn.benchmarks.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BenchCommandTest {
  @Test
  void theChildJvmGetsTheParentsOptionsButNoSecondRecordingAgentOrDebugger() {
    List<String> cmd = BenchCommand.LoadOnSource.childCommand(
        List.of("-Xmx2g", "-Dlogback.configurationFile=/opt/cairn/conf/logback.xml", "-XX:SharedArchiveFile=/opt/cairn/lib/cairn.jsa",
            "-XX:StartFlightRecording=filename=a.jfr", "-XX:FlightRecorderOptions=stackdepth=96", "-javaagent:/x/agent.jar",
            "-agentlib:jdwp=transport=dt_socket,server=y,address=5005", "-agentpath:/x/libprof.so", "-Xdebug",
            "-Xrunjdwp:transport=dt_socket"),
        "/opt/cairn/lib/*", List.of("bench", "load-on-source", "--days", "30"));

    assertThat(cmd.get(0)).endsWith("java");
    assertThat(cmd.subList(1, cmd.size())).containsExactly("-Xmx2g", "-Dlogback.configurationFile=/opt/cairn/conf/logback.xml",
        "-XX:SharedArchiveFile=/opt/cairn/lib/cairn.jsa", "-cp", "/opt/cairn/lib/*", "io.cairn.server.cli.CairnCommand", "bench",
        "load-on-source", "--days", "30");
  }
}
