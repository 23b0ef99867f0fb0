import { describe, expect, it } from 'vitest';
import { FORM_HEADERS, formBody, post, purchase, setup } from '../test/fixtures.js';
import { RELAY_KEY, relayHeader } from '../test/relay.js';
import { createCapture } from './diagnostics/capture.js';
import type { WebhookRequest } from './http/request.js';
import { SERVICE_SENDER_ADDRESSES } from './http/sender.js';
import type { RelayForward } from './verify/relay-header.js';

// The `relay` option: a delivery forwarded by @payhook/relay is checked by allowedSenders and recorded by capture
// with the original sender its X-Payhook-Relay header names, once the header is signed with the channel's key and
// names the SHA-256 of the bytes received. The header is signed here with node:crypto, apart from core's Web Crypto.

const KEY = RELAY_KEY;
const SERVICE = SERVICE_SENDER_ADDRESSES[0]!;

function header(body: string, overrides: Partial<RelayForward> = {}, key = KEY): string {
  return relayHeader(body, SERVICE, overrides, key);
}

/** A forward as the relay's client posts it: from loopback, with the header. */
function forwarded(body: string, relayHeader: string): WebhookRequest {
  return post(body, { ...FORM_HEADERS, 'x-payhook-relay': relayHeader });
}

function codeOf(result: { body: string }): string | undefined {
  return (JSON.parse(result.body) as { error?: { code: string } }).error?.code;
}

describe('the relay option', () => {
  it('checks allowedSenders with the original sender a valid header names, not the client’s address', async () => {
    const { handler, seen } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: KEY } });
    const body = formBody(purchase());
    const result = await handler(forwarded(body, header(body)), undefined);
    expect(result.status).toBe(200);
    expect(result.outcome).toBe('handled');
    expect(result.sender).toBe(SERVICE);
    expect(seen).toHaveLength(1);
  });

  it('reads an IPv4-mapped original sender as IPv4, as it reads a socket’s address', async () => {
    const { handler } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: KEY } });
    const body = formBody(purchase());
    const result = await handler(forwarded(body, header(body, { sender: `::ffff:${SERVICE}` })), undefined);
    expect([result.status, result.sender]).toEqual([200, SERVICE]);
  });

  it('refuses 403 sender.forbidden when the original sender is outside allowedSenders, though the client is in it', async () => {
    const { handler, seen } = setup({ allowedSenders: ['127.0.0.1'], relay: { key: KEY } });
    const body = formBody(purchase());
    const result = await handler(forwarded(body, header(body, { sender: '203.0.113.9' })), undefined);
    expect(result.status).toBe(403);
    expect(codeOf(result)).toBe('sender.forbidden');
    expect(result.sender).toBeUndefined();
    expect(seen).toHaveLength(0);
  });

  it('refuses 401 relay.signature_invalid for a header signed with another key or changed after signing', async () => {
    const { handler, seen } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: KEY } });
    const body = formBody(purchase());
    const other = await handler(forwarded(body, header(body, {}, 'bob-key')), undefined);
    expect(other.status).toBe(401);
    expect(codeOf(other)).toBe('relay.signature_invalid');
    const moved = header(body, { sender: '203.0.113.9' }).replace('sender=203.0.113.9', `sender=${SERVICE}`);
    expect(codeOf(await handler(forwarded(body, moved), undefined))).toBe('relay.signature_invalid');
    expect(seen).toHaveLength(0);
  });

  it('refuses 401 relay.body_mismatch when the body is not the one the header names', async () => {
    const { handler, seen } = setup({ relay: { key: KEY } });
    const body = formBody(purchase());
    const otherBody = formBody(purchase({ order_id: 'another' }));
    const result = await handler(forwarded(otherBody, header(body)), undefined);
    expect(result.status).toBe(401);
    expect(JSON.parse(result.body)).toEqual({
      ok: false,
      error: {
        code: 'relay.body_mismatch',
        message: expect.stringMatching(/^\[@payhook\/core\] the body is not the one the relay journaled/),
      },
    });
    expect(seen).toHaveLength(0);
  });

  it('refuses 401 relay.header_invalid for a malformed header, and relay.header_stale past maxAgeMs only', async () => {
    const body = formBody(purchase());
    const { handler } = setup({ relay: { key: KEY, maxAgeMs: 60_000 } });
    for (const bad of ['', 'v=2', header(body).replace(/seq=\d+/, 'seq=0'), `${header(body)};v=1`]) {
      const result = await handler(forwarded(body, bad), undefined);
      expect([result.status, codeOf(result)]).toEqual([401, 'relay.header_invalid']);
    }
    const old = header(body, { receivedAt: new Date(Date.now() - 3_600_000) });
    const stale = await handler(forwarded(body, old), undefined);
    expect([stale.status, codeOf(stale)]).toEqual([401, 'relay.header_stale']);
    // Without maxAgeMs, a replay of an old delivery is taken (the store answers its copies `duplicate`).
    const replayed = await setup({ relay: { key: KEY } }).handler(forwarded(body, old), undefined);
    expect(replayed.status).toBe(200);
  });

  it('takes a delivery without the header as a direct one: the socket’s address is checked', async () => {
    const { handler } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: KEY } });
    const body = formBody(purchase());
    const loopback = await handler(post(body), undefined);
    expect([loopback.status, codeOf(loopback)]).toEqual([403, 'sender.forbidden']);
    const direct = await handler({ ...post(body), remoteAddress: `::ffff:${SERVICE}` }, undefined);
    expect([direct.status, direct.sender]).toEqual([200, SERVICE]);
  });

  it('ignores the header without the option: a valid one does not lift the sender check, a forged one is not read', async () => {
    const { handler } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES });
    const body = formBody(purchase());
    const result = await handler(forwarded(body, header(body)), undefined);
    expect([result.status, codeOf(result)]).toEqual([403, 'sender.forbidden']);
    const open = await setup().handler(forwarded(body, 'v=1;sig=forged'), undefined);
    expect(open.status).toBe(200);
  });

  it('reads the header’s body from a stream (fetch) and accepts a key of a rotation', async () => {
    const webhook = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: ['new-key', KEY] } });
    const body = formBody(purchase());
    const response = await webhook.handler.fetch(
      new Request('http://app.test/webhooks', {
        method: 'POST',
        headers: { ...FORM_HEADERS, 'x-payhook-relay': header(body) },
        body,
      }),
      undefined,
      '127.0.0.1',
    );
    expect(response.status).toBe(200);
    expect(webhook.seen).toHaveLength(1);
  });

  it('keeps maxBodyBytes, and refuses 500 relay.body_unavailable when a body parser kept only an object', async () => {
    const { handler } = setup({ relay: { key: KEY }, maxBodyBytes: 100 });
    const body = formBody(purchase());
    const large = await handler(forwarded(body, header(body)), undefined);
    expect([large.status, codeOf(large)]).toEqual([413, 'payload.too_large']);
    const parsed = Object.fromEntries(new URLSearchParams(body));
    const result = await setup({ relay: { key: KEY } }).handler(
      forwarded(parsed as never, header(body)),
      undefined,
    );
    expect([result.status, codeOf(result)]).toEqual([500, 'relay.body_unavailable']);
  });

  it('has capture record the original sender of a delivery through the relay', async () => {
    const lines: string[] = [];
    const capture = createCapture({ write: (line) => void lines.push(line) });
    const { handler } = setup({ allowedSenders: SERVICE_SENDER_ADDRESSES, relay: { key: KEY }, capture });
    const body = formBody(purchase());
    await handler(forwarded(body, header(body)), undefined);
    await handler(forwarded(body, header(body, { sender: '203.0.113.9' })), undefined);
    await capture.flush();
    expect(lines.map((line) => JSON.parse(line) as { sender?: string; status: number })).toMatchObject([
      { status: 200, sender: SERVICE },
      { status: 403 },
    ]);
    expect((JSON.parse(lines[1]!) as { sender?: string }).sender).toBeUndefined();
  });

  it('refuses a relay option without a key when the handler is built, never showing the key', () => {
    expect(() => setup({ relay: {} as never })).toThrow(
      "[@payhook/core] relay.key must be the channel's key (a non-empty string, or several), not undefined.",
    );
    expect(() => setup({ relay: { key: [''] } })).toThrow(/relay\.key must be/);
    expect(() => setup({ relay: { key: KEY, maxAgeMs: -1 } })).toThrow(/relay\.maxAgeMs must be/);
  });
});
