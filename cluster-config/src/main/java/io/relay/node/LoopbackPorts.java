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
  private static final AtomicInteger NEXT = new AtomicInteger(start());

  private LoopbackPorts() {}

  /**
   * Where this JVM starts looking: anywhere, or, for a test JVM that runs beside others (numbered
   * from 1 by {@code relay.test.fork}), in a quarter of the range of its own, so that two of them
   * do not pick the same port between looking and binding.
   */
  private static int start() {
    int fork = Integer.getInteger("relay.test.fork", 0);
    int quarter = COUNT / 4;
    return fork > 0
        ? (fork - 1) % 4 * quarter + ThreadLocalRandom.current().nextInt(quarter / 2)
        : ThreadLocalRandom.current().nextInt(COUNT);
  }

  /** A port nothing listens on now. */
  public static int free() {
    for (int tries = 0; tries < COUNT; tries++) {
      int port = FIRST + Math.floorMod(NEXT.getAndIncrement(), COUNT);
      if (isFree(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no free loopback port in " + FIRST + ".." + (FIRST + COUNT));
  }

  /**
   * The first of {@code width} consecutive ports nothing listens on now, for a program that
   * numbers its ports from one base (the local cluster script); none of them is handed out again
   * by this JVM.
   */
  public static int freeBlock(int width) {
    for (int tries = 0; tries < COUNT / width; tries++) {
      int base = FIRST + Math.floorMod(NEXT.getAndAdd(width), COUNT - width);
      boolean allFree = true;
      for (int port = base; port < base + width && allFree; port++) {
        allFree = isFree(port);
      }
      if (allFree) {
        return base;
      }
    }
    throw new IllegalStateException("no " + width + " free consecutive loopback ports in " + FIRST + ".." + (FIRST + COUNT));
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      return true;
    } catch (IOException taken) {
      return false;
    }
  }
}
