package io.relay.topic;

import org.apache.pekko.actor.typed.javadsl.ActorContext;

/**
 * Topics whose messages mean something to the node instead of being relayed (the practable
 * {@code stats} topic): a topic actor asks for its room here when it starts. Everything else about
 * such a topic (joins, permissions, closes, claims) is an ordinary topic's.
 */
@FunctionalInterface
public interface SpecialTopics {
  /** No special topics: every topic relays. */
  SpecialTopics NONE = (topic, topicActor) -> null;

  /**
   * The room of {@code topic} when it is special, with whatever serves it started as children of
   * {@code topicActor} (they stop with it); null for a topic that relays.
   */
  Room roomFor(String topic, ActorContext<?> topicActor);
}
