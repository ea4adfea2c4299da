package io.relay.node;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Free loopback ports for the servers that local clusters, benchmarks and tests start, taken
 * below Linux's ephemeral range (32768 and up): a port picked there can be taken by some
 * client's outgoing connection before the server binds it.
 */
public final class LoopbackPorts {
  private static final int FIRST = 20000;
  private static final int COUNT = 12000;
  private static final AtomicInteger NEXT = new AtomicInteger(ThreadLocalRandom.current().nextInt(COUNT));

  private LoopbackPorts() {}

  /** A port nothing listens on now. */
  public static int free() {
    for (int tries = 0; tries < COUNT; tries++) {
      int port = FIRST + Math.floorMod(NEXT.getAndIncrement(), COUNT);
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        return port;
      } catch (IOException taken) {
        // try the next one
      }
    }
    throw new IllegalStateException("no free loopback port in " + FIRST + ".." + (FIRST + COUNT));
  }
}
