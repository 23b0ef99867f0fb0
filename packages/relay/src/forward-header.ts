import { WebhookError } from '@payhook/core';
import {
  type RelayForward,
  relayHeaderValue,
  relaySignedText,
  verifyRelayForward,
} from '@payhook/core/adapter';
import { hmac } from './crypto.js';
import { RelayError, type RelayErrorCode } from './errors.js';

// The header's text and its check live in @payhook/core (its `relay` option reads the header too): the relay signs
// what core verifies, and `verifyRelayHeader` is core's check with the relay's error codes.

/** The header every forwarded delivery carries: what the relay saw, signed with the channel's key. */
export { RELAY_HEADER } from '@payhook/core/adapter';
export type { RelayForward };

const VERSION = 'payhook-relay/v1';

/**
 * The key a channel's forwards are signed with: HMAC-SHA256 of the channel's name under the relay's signing
 * secret. The relay keeps only the secret; each application gets its own channel's key, which signs nothing
 * for another channel.
 *
 * @example
 * const key = await channelKey(process.env.PAYHOOK_RELAY_SIGNING_SECRET!, 'alice');
 */
export function channelKey(signingSecret: string, channel: string): Promise<string> {
  return hmac(signingSecret, `${VERSION}/channel/${channel}`);
}

/** The header's value for one forward, signed with the channel's key (text, or imported once with `hmacKey`). */
export async function signRelayHeader(forward: RelayForward, key: string | CryptoKey): Promise<string> {
  return relayHeaderValue(forward, await hmac(key, relaySignedText(forward)));
}

/** Core's codes for a refused header, as the relay's. */
const CODES: Readonly<Record<string, RelayErrorCode>> = {
  'relay.header_invalid': 'forward.header_invalid',
  'relay.signature_invalid': 'forward.signature_invalid',
  'relay.body_mismatch': 'forward.body_mismatch',
};

/**
 * Checks the `X-Payhook-Relay` header of a forwarded delivery against the body received and the channel's key
 * (or several, during a rotation) and returns what the relay saw: the original sender, the sequence. Trust the
 * sender only from a forward that passed this check; the body's SHA-256 must match, so a signed header cannot be
 * moved onto another body. Core's handler does the same with its `relay` option.
 *
 * @throws {RelayError} `forward.header_invalid` (absent or malformed), `forward.signature_invalid` (no key
 *   signed it), `forward.body_mismatch` (the body is not the one the relay journaled).
 * @example
 * const body = new Uint8Array(await request.arrayBuffer());
 * const forward = await verifyRelayHeader(request.headers.get('x-payhook-relay'), body, process.env.RELAY_KEY!);
 * if (!SERVICE_SENDER_ADDRESSES.includes(forward.sender)) return new Response(null, { status: 403 });
 */
export async function verifyRelayHeader(
  header: string | null | undefined,
  body: Uint8Array | string,
  keys: string | readonly string[],
): Promise<RelayForward> {
  try {
    return await verifyRelayForward(header, body, keys);
  } catch (error) {
    if (!(error instanceof WebhookError) || CODES[error.code] === undefined) throw error;
    throw new RelayError(CODES[error.code]!, error.message.replace('[@payhook/core] ', ''), { cause: error });
  }
}
