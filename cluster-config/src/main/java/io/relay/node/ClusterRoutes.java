package io.relay.node;

import io.relay.http.AdminGuard;
import java.util.Optional;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.cluster.javadsl.ClusterHttpManagementRoutes;
import org.apache.pekko.management.javadsl.ManagementRouteProvider;
import org.apache.pekko.management.javadsl.ManagementRouteProviderSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pekko Management's cluster HTTP routes under {@code /cluster} on the management port, in place of
 * its own provider: reads (members, domain events) for everyone; writes (join, leave, down,
 * prepare-for-full-shutdown) refused with 403 unless {@code relay.management-writes} is on, and then
 * only for a request carrying a {@code relay:admin} token. The other management routes (health
 * checks, metrics, Cluster Bootstrap's seed nodes) stay open: kubelet and Prometheus send no
 * credentials.
 */
public final class ClusterRoutes extends AllDirectives implements ManagementRouteProvider {
  private static final Logger LOG = LoggerFactory.getLogger(ClusterRoutes.class);
  static final String WRITES_DISABLED =
      "cluster writes (join, leave, down) are disabled on this management port; to allow them set "
          + "RELAY_MANAGEMENT_WRITES=on (relay.management-writes) and send a relay:admin token in Authorization";

  private final Cluster cluster;
  private final Optional<AdminGuard> writers;

  public ClusterRoutes(ExtendedActorSystem system) {
    this.cluster = Cluster.get(system);
    this.writers = NodeState.get(Adapter.toTyped(system)).clusterWriters();
  }

  @Override
  public Route routes(ManagementRouteProviderSettings settings) {
    return pathPrefixTest(
        "cluster",
        () -> extractMethod(method -> isRead(method) ? ClusterHttpManagementRoutes.readOnly(cluster) : write(method)));
  }

  private Route write(HttpMethod method) {
    return writers
        .map(guard -> guard.authorize(() -> audited(method, ClusterHttpManagementRoutes.all(cluster))))
        .orElseGet(() -> complete(AdminGuard.error(403, WRITES_DISABLED)));
  }

  private Route audited(HttpMethod method, Route inner) {
    return extractUri(
        uri -> {
          LOG.info("cluster write {} {} with a relay:admin token", method.name(), uri.path());
          return inner;
        });
  }

  private static boolean isRead(HttpMethod method) {
    return method.equals(HttpMethods.GET) || method.equals(HttpMethods.HEAD);
  }
}
