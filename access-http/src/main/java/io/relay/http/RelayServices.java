package io.relay.http;

import io.relay.RelaySettings;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyList;
import io.relay.deny.DenyListStatus;
import io.relay.metrics.RelayMetrics;
import io.relay.status.ClusterStatus;
import io.relay.topic.ConnectionDirectory;
import io.relay.topic.TopicRegistry;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What a node's HTTP servers are given by its guardian: the node's actors and shared objects.
 *
 * @param denyListStatus whether the deny list has been read from a majority, and its size
 */
public record RelayServices(
    RelaySettings settings,
    ActorRef<CodeStore.Command> codes,
    ActorRef<DenyList.Command> denyList,
    DenyListStatus denyListStatus,
    ActorRef<TopicRegistry.Command> registry,
    ActorRef<ClusterStatus.Gather> clusterStatus,
    ConnectionDirectory directory,
    RelayMetrics metrics) {}
