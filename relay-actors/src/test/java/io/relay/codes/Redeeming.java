package io.relay.codes;

import java.time.Duration;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;

/** Redeeming a code at a code store, for the code store's tests. */
final class Redeeming {
  private static final Duration WAIT = Duration.ofSeconds(15);

  private Redeeming() {}

  /** What {@code store}, on {@code node}, answers when {@code code} is presented for {@code topic}. */
  static CodeStore.Redemption redeem(ActorTestKit node, ActorRef<CodeStore.Command> store, String code, String topic) {
    TestProbe<CodeStore.Redemption> answer = node.createTestProbe();
    store.tell(new CodeStore.Redeem(code, topic, answer.ref()));
    return answer.receiveMessage(WAIT);
  }
}
