package io.relay.http.server;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which request targets the client ports take as origin form (RFC 9112 section 3.2.1). */
class RequestsTest {
  @Test
  void aPathAndQueryOfRfc3986sCharactersWithWholeEscapesIsOriginForm() {
    for (String target : new String[] {"/", "/session/lab%2Fa?code=Ab-_~", "/a%2f%2F?x=[1]&y=@!$'()*+,;=:"}) {
      assertTrue(Requests.isOriginForm(target), target);
    }
  }

  @Test
  void anythingElseIsNot() {
    for (String target : new String[] {"", "session/a", "http://host/a", "/a b", "/a%", "/a%2", "/a%zz", "/a%\u0663\u0663", "/\u00e9", "/a\"b"}) {
      assertFalse(Requests.isOriginForm(target), target);
    }
  }
}
