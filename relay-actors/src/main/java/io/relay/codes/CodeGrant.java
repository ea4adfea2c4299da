package io.relay.codes;

import io.relay.CborSerializable;
import java.util.List;

/**
 * What a one-time code grants. It crosses nodes inside a {@link CodeShard} (replicated until the
 * second sweep after it expires) and a {@link CodeStore.Redeemed}, both written by their serializers
 * ({@code CodeEntry.encode}), not on its own.
 *
 * @param topic the topic the code is for
 * @param scopes the token's scopes
 * @param bookingId the token's booking id, or empty
 * @param tokenExpiresAt the token's {@code exp}, epoch seconds: the connection closes with 4000
 *     then, and {@code relay.token-leeway} after it
 * @param codeExpiresAt when the code itself lapses, epoch milliseconds
 */
public record CodeGrant(
    String topic, List<String> scopes, String bookingId, long tokenExpiresAt, long codeExpiresAt)
    implements CborSerializable {
  /** The most scopes a grant carries: its wire form counts them in one byte. */
  public static final int MAX_SCOPES = 255;
}
