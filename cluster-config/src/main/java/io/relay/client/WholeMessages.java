package io.relay.client;

import java.io.ByteArrayOutputStream;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletionStage;

/**
 * A JDK WebSocket listener that hands on whole messages: it joins the parts the JDK client
 * delivers (text as UTF-8 bytes) and asks for the next part after each one.
 */
public abstract class WholeMessages implements WebSocket.Listener {
  private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

  /** One whole message, text (UTF-8) or binary. */
  protected abstract void onMessage(boolean text, byte[] data);

  /** Drops a message cut off by the end of its connection. */
  protected void dropPartial() {
    partial.reset();
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    return collect(webSocket, data.toString().getBytes(StandardCharsets.UTF_8), last, true);
  }

  @Override
  public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    return collect(webSocket, bytes, last, false);
  }

  private CompletionStage<?> collect(WebSocket webSocket, byte[] bytes, boolean last, boolean text) {
    partial.writeBytes(bytes);
    if (last) {
      byte[] message = partial.toByteArray();
      partial.reset();
      onMessage(text, message);
    }
    webSocket.request(1);
    return null;
  }
}
