package io.relay.http;

import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.server.RouteResult;
import org.apache.pekko.http.javadsl.testkit.RouteTest;
import org.apache.pekko.http.javadsl.testkit.TestRouteResult;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.Assertions;
import scala.concurrent.Future;

/**
 * Pekko HTTP's route testkit for JUnit 5 (the testkit's own base class is for JUnit 4): routes run
 * against requests in memory, on an actor test kit's system.
 */
abstract class RouteTesting extends RouteTest {
  protected final ActorTestKit kit = ActorTestKit.create(getClass().getSimpleName());

  @Override
  public ActorSystem system() {
    return Adapter.toClassic(kit.system());
  }

  @Override
  public Materializer materializer() {
    return Materializer.matFromSystem(kit.system());
  }

  @Override
  public TestRouteResult createTestRouteResultAsync(HttpRequest request, Future<RouteResult> result) {
    return new TestRouteResult(result, awaitDuration(), kit.system().executionContext(), materializer()) {
      @Override
      public void assertEquals(Object expected, Object actual, String message) {
        Assertions.assertEquals(expected, actual, message);
      }

      @Override
      public void assertEquals(int expected, int actual, String message) {
        Assertions.assertEquals(expected, actual, message);
      }

      @Override
      public void assertTrue(boolean predicate, String message) {
        Assertions.assertTrue(predicate, message);
      }

      @Override
      public void fail(String message) {
        Assertions.fail(message);
      }
    };
  }
}
