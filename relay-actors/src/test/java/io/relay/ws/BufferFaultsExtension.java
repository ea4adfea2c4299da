package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.memory.BufferChecks;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails every test during which the node's code, in this JVM, made a fault in its accounting of
 * relayed frames ({@link BufferChecks}), whichever thread made it: a frame let go of more often
 * than held, or written after its last holder let go.
 * Registered for every test of every module by JUnit's extension auto-detection (the build's
 * surefire and failsafe settings, and {@code META-INF/services} of this module's test jar), and
 * checks that the build turned the checks on.
 */
public final class BufferFaultsExtension implements BeforeAllCallback, AfterEachCallback {
  @Override
  public void beforeAll(ExtensionContext context) {
    assertTrue(BufferChecks.ON, "tests run with -D" + BufferChecks.PROPERTY + "=true (the build's surefire and failsafe settings)");
  }

  @Override
  public void afterEach(ExtensionContext context) {
    List<IllegalStateException> faults = BufferChecks.faults();
    BufferChecks.clear();
    if (!faults.isEmpty()) {
      AssertionError failure = new AssertionError(faults.size() + " buffer accounting faults during the test; the first is the cause");
      failure.initCause(faults.get(0));
      faults.stream().skip(1).forEach(failure::addSuppressed);
      throw failure;
    }
  }
}
