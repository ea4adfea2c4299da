package io.relay.http;

import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResource;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.redirect;

import io.relay.Ask;
import io.relay.status.ClusterStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The cluster's state for holders of the relay:stats scope, from one gathering of every relay
 * node's reports: {@code GET /status} (the connection reports; relay members that do not answer in
 * time are named in {@code X-Relay-Missing-Nodes}, never silently left out) and {@code GET
 * /cluster} for the cluster page (the members as this node sees them, every node's connections, the
 * recent claims, evictions and denies, and the nodes that did not answer); and the operator pages
 * themselves under {@code /ui/}.
 *
 * @param timeout how long to wait for the whole gathering
 */
record StatusRoutes(AccessGuard guard, ActorRef<ClusterStatus.Gather> status, Duration timeout, ActorSystem<?> system) {
  static final String MISSING_NODES = "X-Relay-Missing-Nodes";
  /** The operator pages' file names (access-http's resources, {@code web/}). */
  private static final Pattern PAGE = Pattern.compile("[a-z]+\\.(?:html|js|css)");

  Route route() {
    return concat(
        gathered("status", this::statusResponse),
        gathered("cluster", this::clusterResponse),
        pathPrefix(
            "ui",
            () ->
                concat(
                    pathEndOrSingleSlash(() -> redirect(Uri.create("/ui/cluster.html"), StatusCodes.FOUND)),
                    // a page's own name only: a segment with an escaped slash or backslash never reaches
                    // the resource directory, which would log a warning for each such request
                    path(PathMatchers.segment(PAGE), page -> getFromResource("web/" + page)))));
  }

  /** {@code GET /name}, guarded by relay:stats, answered from one gathering. */
  private Route gathered(String name, Function<ClusterStatus.Gathered, HttpResponse> respond) {
    return path(name, () -> get(() -> guard.route("relay:stats", claims -> gather().thenApply(respond))));
  }

  private CompletionStage<ClusterStatus.Gathered> gather() {
    return Ask.<ClusterStatus.Gather, ClusterStatus.Gathered>ask(status, ClusterStatus.Gather::new, timeout, system);
  }

  private HttpResponse statusResponse(ClusterStatus.Gathered gathered) {
    HttpResponse response = Json.ok(gathered.reports());
    return gathered.missingNodes().isEmpty()
        ? response
        : response.addHeader(RawHeader.create(MISSING_NODES, String.join(",", gathered.missingNodes())));
  }

  private HttpResponse clusterResponse(ClusterStatus.Gathered gathered) {
    Map<String, Object> body = new LinkedHashMap<>();
    String build = StatusRoutes.class.getPackage().getImplementationVersion(); // the jar's manifest's, as relay --version reports it
    body.put("self", Cluster.get(system).selfMember().address().toString());
    body.put("build", build == null ? "development build" : build);
    body.put("members", members());
    body.put("connections", gathered.reports());
    body.put("events", gathered.events());
    body.put("missing_nodes", gathered.missingNodes());
    return Json.ok(body);
  }

  private List<Map<String, Object>> members() {
    ClusterEvent.CurrentClusterState state = Cluster.get(system).state();
    Set<String> unreachable = new TreeSet<>();
    state.getUnreachable().forEach(m -> unreachable.add(m.address().toString()));
    String leader = state.getLeader() == null ? "" : state.getLeader().toString();
    List<Map<String, Object>> members = new ArrayList<>();
    for (Member member : state.getMembers()) {
      Map<String, Object> m = new LinkedHashMap<>();
      String address = member.address().toString();
      m.put("address", address);
      m.put("status", member.status().toString());
      m.put("roles", new TreeSet<>(member.getRoles()));
      m.put("reachable", !unreachable.contains(address));
      m.put("leader", address.equals(leader));
      m.put("app_version", member.appVersion().version());
      members.add(m);
    }
    return members;
  }
}
