import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { digest } from '../test/kit.js';
import { RelayError } from './errors.js';
import { channelKey, type RelayForward, signRelayHeader, verifyRelayHeader } from './forward-header.js';

const BODY = 'data=eyJhIjoxfQ%3D%3D&signature=abc';
const forward: RelayForward = {
  channel: 'alice',
  sequence: 42,
  receivedAt: new Date('2026-11-22T10:15:03.120Z'),
  sender: '2001:db8::1',
  sha256: digest(BODY),
};

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RelayError);
  return (error as RelayError).code;
}

describe('the X-Payhook-Relay header', () => {
  it('derives a channel key as HMAC-SHA256 of the channel under the signing secret (checked by node:crypto)', async () => {
    const expected = createHmac('sha256', 'secret')
      .update('payhook-relay/v1/channel/alice')
      .digest('base64url');
    expect(await channelKey('secret', 'alice')).toBe(expected);
    expect(await channelKey('secret', 'bob')).not.toBe(expected);
  });

  it('round-trips: what is signed with the key verifies against the same body', async () => {
    const key = await channelKey('secret', 'alice');
    const header = await signRelayHeader(forward, key);
    expect(header).toMatch(
      /^v=1;channel=alice;seq=42;at=\d+;sender=2001%3Adb8%3A%3A1;sha256=[\w-]{43};sig=[\w-]{43}$/,
    );
    expect(await verifyRelayHeader(header, BODY, key)).toEqual(forward);
    expect(await verifyRelayHeader(header, new TextEncoder().encode(BODY), ['old', key])).toEqual(forward);
  });

  it('refuses another body (forward.body_mismatch), another key (forward.signature_invalid)', async () => {
    const key = await channelKey('secret', 'alice');
    const header = await signRelayHeader(forward, key);
    expect(await refusal(verifyRelayHeader(header, `${BODY}x`, key))).toBe('forward.body_mismatch');
    expect(await refusal(verifyRelayHeader(header, BODY, await channelKey('secret', 'bob')))).toBe(
      'forward.signature_invalid',
    );
  });

  it('refuses any field changed after signing: the sender, the sequence, the channel', async () => {
    const key = await channelKey('secret', 'alice');
    const header = await signRelayHeader(forward, key);
    for (const changed of [
      header.replace('sender=2001%3Adb8%3A%3A1', 'sender=35.187.74.148'),
      header.replace('seq=42', 'seq=43'),
      header.replace('channel=alice', 'channel=bob'),
    ]) {
      expect(await refusal(verifyRelayHeader(changed, BODY, key))).toBe('forward.signature_invalid');
    }
  });

  it('refuses an absent or malformed header with forward.header_invalid', async () => {
    for (const header of [
      undefined,
      null,
      '',
      'v=2;seq=1',
      'v=1;seq=0;at=1;channel=a;sender=;sha256=x;sig=y',
      'v=1;v=1',
    ]) {
      expect(await refusal(verifyRelayHeader(header, BODY, 'key'))).toBe('forward.header_invalid');
    }
  });
});
