package io.relay.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every node's own view of the cluster, sampled on a schedule from its management port ({@code GET
 * /cluster/members}, read-only): each sample in which a node listed a member as unreachable, or
 * saw other than the expected members all {@code Up}, is kept with when it was taken.
 */
public final class MembershipWatch implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(5);

  private final List<NodeProcess> nodes;
  private final int expectedMembers;
  private final ScheduledExecutorService sampler;
  private final long started = System.nanoTime();
  private final AtomicLong[] samples;
  private final AtomicLong[] unanswered;
  private final AtomicLong slowest = new AtomicLong();
  private final List<String> problems = new ArrayList<>();

  /** Samples each of {@code nodes} every {@code period} on a thread of its own, from now until closed. */
  public MembershipWatch(List<NodeProcess> nodes, Duration period) {
    this.nodes = List.copyOf(nodes);
    this.expectedMembers = nodes.size();
    this.samples = new AtomicLong[nodes.size()];
    this.unanswered = new AtomicLong[nodes.size()];
    this.sampler = Executors.newScheduledThreadPool(nodes.size());
    for (int i = 0; i < nodes.size(); i++) {
      samples[i] = new AtomicLong();
      unanswered[i] = new AtomicLong();
      int node = i;
      sampler.scheduleAtFixedRate(() -> sample(node), 0, period.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void sample(int i) {
    NodeProcess node = nodes.get(i);
    long asked = System.nanoTime();
    String at = String.format("%s at %.1f s", node.name, (asked - started) / 1e9);
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.managementPort + "/cluster/members"))
                  .timeout(ANSWER_TIMEOUT)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      slowest.accumulateAndGet(System.nanoTime() - asked, Math::max);
      samples[i].incrementAndGet();
      if (response.statusCode() != 200) {
        problem(at + ": /cluster/members answered " + response.statusCode());
        return;
      }
      JsonNode members = JSON.readTree(response.body());
      if (members.path("unreachable").size() > 0) {
        problem(at + " lists as unreachable: " + members.get("unreachable"));
      }
      long up = 0;
      for (JsonNode member : members.path("members")) {
        up += "Up".equals(member.path("status").asText()) ? 1 : 0;
      }
      if (up != expectedMembers || members.path("members").size() != expectedMembers) {
        problem(at + " sees members " + members.path("members"));
      }
    } catch (IOException e) {
      unanswered[i].incrementAndGet();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void problem(String what) {
    synchronized (problems) {
      problems.add(what);
    }
  }

  /** The samples in which a node saw a member unreachable or not Up (empty: none). */
  public List<String> problems() {
    synchronized (problems) {
      return List.copyOf(problems);
    }
  }

  /** Answered samples of the node at {@code index}. */
  public long samples(int index) {
    return samples[index].get();
  }

  /** Samples of the node at {@code index} that got no answer within 5 s. */
  public long unanswered(int index) {
    return unanswered[index].get();
  }

  public long slowestMillis() {
    return slowest.get() / 1_000_000;
  }

  /** Stops sampling and waits for samples under way, which are not interrupted. */
  @Override
  public void close() {
    sampler.shutdown();
    try {
      if (!sampler.awaitTermination(ANSWER_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS)) {
        throw new AssertionError("the last membership samples did not finish within " + (ANSWER_TIMEOUT.toSeconds() + 5) + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
