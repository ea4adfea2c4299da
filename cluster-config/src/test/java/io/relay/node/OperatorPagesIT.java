package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.testing.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The operator pages in a real browser (headless Chromium) against a two-node cluster: the
 * cluster page shows a test client's connection with its node and then the deny that closed it;
 * the participant page exchanges frames with a test client and reconnects after its node evicts
 * the topic. Screenshots go to target/screenshots.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OperatorPagesIT {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Map<String, Object> TIMINGS = Map.of("relay.claims.hold-down", "1s");
  private TestNode a;
  private TestNode b;
  private Browser browser;

  @BeforeAll
  void start() {
    a = TestNode.start(TIMINGS);
    b = TestNode.joining(a, TIMINGS);
    browser = new Browser();
  }

  @AfterAll
  void stop() {
    if (browser != null) {
      browser.close();
    }
    b.close();
    a.close();
  }

  private static String session(String topic, String booking) {
    return Tokens.sign(Tokens.session(topic, List.of("read", "write"), booking).build());
  }

  @Test
  void theClusterPageShowsAConnectionWithItsNodeAndThenItsDeny() {
    String topic = "page/lab";
    try (Participant client = Participant.connect(new AccessClient(b).relayUri(topic, session(topic, "booking-page")))) {
      browser.driver.get("http://127.0.0.1:" + a.accessPort + "/ui/");
      browser.driver.findElement(By.id("token")).sendKeys(Tokens.admin("relay:stats"));
      browser.driver.findElement(By.id("connect")).click();
      browser.await("the page lists the client's connection under node b", WAIT, d ->
          d.findElements(By.cssSelector("div.node[data-node='" + b.address() + "'] tr[data-topic='" + topic + "']")).size() == 1);
      browser.await("the page lists both members", WAIT, d -> d.findElements(By.cssSelector("#members tbody tr")).size() == 2);
      browser.screenshot("cluster-page.png");

      long exp = Instant.now().plusSeconds(600).getEpochSecond();
      assertEquals(204, new AccessClient(a).post("/bids/deny?bid=booking-page&exp=" + exp, Tokens.admin("relay:admin")).status());
      assertEquals(4003, client.awaitClose(Duration.ofSeconds(5)));
      browser.await("the page shows the deny", WAIT, d ->
          d.findElements(By.xpath("//table[@id='events']//tr[@data-kind='deny'][td[contains(., 'booking-page')]]")).size() > 0);
      browser.await("the denied connection is gone from the page", WAIT, d ->
          d.findElements(By.cssSelector("tr[data-topic='" + topic + "']")).isEmpty());
      browser.screenshot("cluster-page-after-deny.png");
    }
  }

  @Test
  void theParticipantPageExchangesFramesAndReconnectsAfterAnEviction() {
    String topic = "page/chat";
    browser.driver.get("http://127.0.0.1:" + a.accessPort + "/ui/participant.html");
    browser.driver.findElement(By.id("topic")).sendKeys(topic);
    browser.driver.findElement(By.id("token")).sendKeys(session(topic, "booking-chat"));
    browser.driver.findElement(By.id("connect")).click();
    browser.await("the page is connected", WAIT, d -> d.findElement(By.id("state")).getText().equals("connected"));

    try (Participant client = Participant.connect(new AccessClient(a).relayUri(topic, session(topic, "booking-chat")))) {
      client.sendText("hello page");
      client.sendBinary(new byte[] {1, 2, 3, (byte) 255});
      browser.await("the page shows the text frame", WAIT, d -> framesText(d).contains("hello page"));
      browser.await("the page shows the binary frame as size and hex", WAIT, d -> framesText(d).contains("binary 4 bytes: 01 02 03 ff"));
      WebElement message = browser.driver.findElement(By.id("message"));
      message.sendKeys("hello client");
      browser.driver.findElement(By.id("send")).click();
      assertEquals("hello client", client.next().asText(), "the client receives what the page sent");
      browser.screenshot("participant-page.png");

      try (Participant elsewhere = Participant.connect(new AccessClient(b).relayUri(topic, session(topic, "booking-other")))) {
        assertEquals(4001, client.awaitClose(Duration.ofSeconds(5)), "node a gave the topic to node b");
        browser.await("the page saw the eviction", WAIT, d -> d.findElement(By.id("log")).getText().contains("closed 4001"));
        browser.await("the page reconnected with a new code", WAIT, d -> d.findElement(By.id("state")).getText().equals("connected")
            && d.findElement(By.id("log")).getText().indexOf("connected to") < d.findElement(By.id("log")).getText().indexOf("closed 4001"));
        browser.screenshot("participant-page-reconnected.png");
      }
    }
  }

  private static String framesText(org.openqa.selenium.WebDriver driver) {
    return driver.findElement(By.id("frames")).getText();
  }
}
