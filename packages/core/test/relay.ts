import { createHash, createHmac } from 'node:crypto';
import { type RelayForward, relayHeaderValue, relaySignedText } from '../src/verify/relay-header.js';

/** The key of the relay channel the tests' headers are signed with. */
export const RELAY_KEY = 'channel-key-of-alice';

/**
 * An `X-Payhook-Relay` header for `body`, as @payhook/relay's client sends it, signed with node:crypto apart from
 * core's Web Crypto; `overrides` change what it says, `key` what it is signed with.
 */
export function relayHeader(
  body: string,
  sender: string,
  overrides: Partial<RelayForward> = {},
  key = RELAY_KEY,
): string {
  const forward: RelayForward = {
    channel: 'alice',
    sequence: 7,
    receivedAt: new Date(),
    sender,
    sha256: createHash('sha256').update(body).digest('base64url'),
    ...overrides,
  };
  return relayHeaderValue(
    forward,
    createHmac('sha256', key).update(relaySignedText(forward)).digest('base64url'),
  );
}
