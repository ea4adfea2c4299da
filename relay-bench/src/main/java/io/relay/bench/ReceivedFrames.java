package io.relay.bench;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The frames a load-generator connection receives (RFC 6455 section 5.2), parsed as they arrive
 * whatever the read boundaries, without copying payloads: of a data message only its first {@link
 * WsClient#HEAD} bytes (the benchmark header) are kept, and its length counted. Control frames are
 * kept whole for the connection to answer.
 */
final class ReceivedFrames {
  /** What arrived. */
  interface Handler {
    void onPing(byte[] payload);

    /** A close, with its code (1005 when it carries none). */
    void onClose(int code);

    /**
     * The end of a message of {@code bytes} bytes, {@code opcode} its first frame's; {@code head}
     * holds its first {@code headLength} bytes, at most {@link WsClient#HEAD}.
     */
    void onMessage(int opcode, byte[] head, int headLength, long bytes, long now);
  }

  private final byte[] header = new byte[14];
  private int headerLen;
  private int headerNeed = 2;
  private long payloadLeft = -1;
  private int opcode;
  private boolean fin;
  private int messageOpcode;
  private final byte[] head = new byte[WsClient.HEAD];
  private int headLen;
  private long messageBytes;
  private final byte[] control = new byte[125];
  private int controlLen;

  /** Parses what {@code buf} holds, received at {@code now} (System.nanoTime). */
  void parse(ByteBuffer buf, long now, Handler handler) {
    while (buf.hasRemaining()) {
      if (payloadLeft < 0) {
        header[headerLen++] = buf.get();
        if (headerLen == 2) {
          int len7 = header[1] & 0x7F;
          headerNeed = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((header[1] & 0x80) != 0 ? 4 : 0);
        }
        if (headerLen >= 2 && headerLen == headerNeed) {
          startFrame();
          if (payloadLeft == 0) {
            endFrame(now, handler);
          }
        }
        continue;
      }
      int n = (int) Math.min(buf.remaining(), payloadLeft);
      int pos = buf.position();
      if (opcode >= 0x8) {
        buf.get(control, controlLen, n);
        controlLen += n;
      } else {
        if (headLen < WsClient.HEAD) {
          int take = Math.min(n, WsClient.HEAD - headLen);
          buf.get(head, headLen, take);
          headLen += take;
        }
        messageBytes += n;
        buf.position(pos + n);
      }
      payloadLeft -= n;
      if (payloadLeft == 0) {
        endFrame(now, handler);
      }
    }
  }

  private void startFrame() {
    opcode = header[0] & 0x0F;
    fin = (header[0] & 0x80) != 0;
    int len7 = header[1] & 0x7F;
    long len = len7;
    if (len7 == 126) {
      len = ((header[2] & 0xFF) << 8) | (header[3] & 0xFF);
    } else if (len7 == 127) {
      len = 0;
      for (int i = 2; i < 10; i++) {
        len = (len << 8) | (header[i] & 0xFF);
      }
    }
    payloadLeft = len;
    headerLen = 0;
    headerNeed = 2;
    if (opcode >= 0x8) {
      controlLen = 0;
    } else if (opcode != 0) {
      messageOpcode = opcode;
      headLen = 0;
      messageBytes = 0;
    }
  }

  private void endFrame(long now, Handler handler) {
    payloadLeft = -1;
    if (opcode == 0x9) {
      handler.onPing(Arrays.copyOf(control, controlLen));
    } else if (opcode == 0x8) {
      handler.onClose(controlLen >= 2 ? ((control[0] & 0xFF) << 8) | (control[1] & 0xFF) : 1005);
    } else if (opcode < 0x8 && fin) {
      handler.onMessage(messageOpcode, head, headLen, messageBytes, now);
    }
  }
}
