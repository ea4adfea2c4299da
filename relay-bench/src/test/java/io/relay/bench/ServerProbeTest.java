package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The probe's reading of a server's CPU, against real processes (Linux). */
class ServerProbeTest {
  @Test
  void aWorkerThatExitsKeepsItsCpuTimeInTheServersSum() throws Exception {
    // a root that starts one busy worker, reaps it, then idles, as nginx's master restarts a
    // worker that crashed
    Process root =
        new ProcessBuilder("sh", "-c", "(i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done) & wait; exec sleep 60").start();
    try {
      ServerProbe probe = new ServerProbe(List.of(root.pid()), null, null);
      Await.until("the worker has used 0.1 s of CPU", Duration.ofSeconds(30), () -> probe.cpuSeconds() >= 0.1);
      double whileRunning = probe.cpuSeconds();
      Path children = Path.of("/proc", Long.toString(root.pid()), "task", Long.toString(root.pid()), "children");
      Await.until("the worker has exited and been reaped", Duration.ofSeconds(60), () -> read(children).isBlank());
      double afterExit = probe.cpuSeconds();
      assertTrue(
          afterExit >= whileRunning,
          "the server's CPU seconds do not go back when a worker exits: " + whileRunning + " while it ran, " + afterExit + " after");
    } finally {
      root.destroyForcibly();
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new AssertionError("cannot read " + file, e);
    }
  }
}
