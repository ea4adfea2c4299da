package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBufUtil;
import org.junit.jupiter.api.Test;

/** RFC 6455 sections 5.5.1 and 7.1: the server's side of the closing handshake. */
class CloseHandshakeTest {
  @Test
  void aPeersCloseIsAnsweredWithItsOwnCode() {
    WsFrames.Frame answer = new CloseHandshake().onPeerClose(new CloseFrame(4321, "done"));
    assertArrayEquals(new byte[] {0x10, (byte) 0xE1}, ByteBufUtil.getBytes(answer.payload()), "the code is echoed");
  }

  @Test
  void aPeersCloseWithoutACodeIsAnsweredWithNormal() {
    WsFrames.Frame answer = new CloseHandshake().onPeerClose(new CloseFrame(CloseFrame.NO_CODE, ""));
    assertArrayEquals(new byte[] {0x03, (byte) 0xE8}, ByteBufUtil.getBytes(answer.payload()), "1000");
  }

  @Test
  void afterTheServersCloseThePeersCloseEndsTheConnectionAtOnce() {
    CloseHandshake handshake = new CloseHandshake();
    assertFalse(handshake.onServerCloseSent(), "a server close waits for the peer's");
    assertNull(handshake.onPeerClose(new CloseFrame(1000, "")), "no answer to the answer");
  }

  @Test
  void failingTheConnectionSendsOneCloseAndDoesNotWaitForThePeer() {
    CloseHandshake handshake = new CloseHandshake();
    assertTrue(handshake.onFailure(), "the failure's close is to be sent");
    assertTrue(handshake.onServerCloseSent(), "the connection ends once it is written");
    assertTrue(handshake.isClosing());
  }

  @Test
  void failingAfterTheServersCloseEndsAtOnce() {
    CloseHandshake handshake = new CloseHandshake();
    handshake.onServerCloseSent();
    assertFalse(handshake.onFailure(), "no second close");
  }
}
