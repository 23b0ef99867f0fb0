import { describe, expect, it } from 'vitest';
import { ADMIN, channel, deliver, delivery, digest, ORIGIN, poll, relayOver } from '../test/kit.js';
import { MemoryJournal } from './journal/memory.js';
import type { RelayEvent } from './wire.js';

function create(relay: ReturnType<typeof relayOver>, body: unknown, token: string | null = ADMIN) {
  return relay.fetch(
    new Request(`${ORIGIN}/channels`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

async function codeOf(response: Response): Promise<[number, string]> {
  return [response.status, ((await response.json()) as { error: { code: string } }).error.code];
}

describe('POST /channels', () => {
  it("answers 201 with the token, the key and the URLs, and the journal keeps only the token's SHA-256", async () => {
    const journal = new MemoryJournal();
    const relay = relayOver(journal, { publicUrl: 'https://relay.example.com/' });
    const response = await create(relay, { name: 'alice' });
    expect(response.status).toBe(201);
    const created = (await response.json()) as Record<string, string>;
    expect(created).toMatchObject({
      channel: 'alice',
      serverUrl: 'https://relay.example.com/in/alice',
      connectUrl: 'https://relay.example.com/out/alice',
    });
    expect(created.token).toMatch(/^phr_[A-Za-z0-9_-]{43}$/);
    const record = await journal.findChannel('alice');
    expect(record?.tokenHash).toBe(digest(created.token!));
    expect(JSON.stringify(record)).not.toContain(created.token);
  });

  it('refuses without the admin token (401), with a wrong one (401), and when the relay has none (403)', async () => {
    const relay = relayOver(new MemoryJournal());
    expect(await codeOf(await create(relay, { name: 'alice' }, null))).toEqual([401, 'admin.token_invalid']);
    expect(await codeOf(await create(relay, { name: 'alice' }, `${ADMIN}x`))).toEqual([
      401,
      'admin.token_invalid',
    ]);
    const closed = relayOver(new MemoryJournal(), { adminToken: undefined });
    expect(await codeOf(await create(closed, { name: 'alice' }))).toEqual([403, 'admin.disabled']);
  });

  it('answers 409 for a name taken, 400 for a bad name or body', async () => {
    const relay = relayOver(new MemoryJournal());
    await channel(relay, 'alice');
    expect(await codeOf(await create(relay, { name: 'alice' }))).toEqual([409, 'channel.exists']);
    expect(await codeOf(await create(relay, { name: '../etc' }))).toEqual([400, 'channel.name_invalid']);
    expect(await codeOf(await create(relay, { name: 'Alice' }))).toEqual([400, 'channel.name_invalid']);
    expect(await codeOf(await create(relay, '{'))).toEqual([400, 'request.malformed']);
  });
});

describe('reading a channel', () => {
  it('answers 401 without a token or with an unknown one, 403 with the token of another channel', async () => {
    const relay = relayOver(new MemoryJournal());
    const alice = await channel(relay, 'alice');
    await channel(relay, 'bob');
    expect(await codeOf(await poll(relay, 'bob', undefined))).toEqual([401, 'token.missing']);
    expect(await codeOf(await poll(relay, 'bob', 'phr_nothing'))).toEqual([401, 'token.invalid']);
    expect(await codeOf(await poll(relay, 'bob', alice.token))).toEqual([403, 'token.forbidden']);
    expect(await codeOf(await poll(relay, 'carol', alice.token))).toEqual([403, 'token.forbidden']);
    const stream = await relay.fetch(
      new Request(`${ORIGIN}/out/bob`, { headers: { authorization: `Bearer ${alice.token}` } }),
    );
    expect(stream.status).toBe(403);
    const status = await relay.fetch(new Request(`${ORIGIN}/out/bob/status`));
    expect(status.status).toBe(401);
  });

  it('keeps two channels apart: each reads its own deliveries only, with its own sequences', async () => {
    const relay = relayOver(new MemoryJournal());
    const alice = await channel(relay, 'alice');
    const bob = await channel(relay, 'bob');
    await deliver(relay, 'alice', delivery(1));
    await deliver(relay, 'bob', delivery(2));
    await deliver(relay, 'alice', delivery(3));
    const read = async (name: string, token: string) =>
      ((await (await poll(relay, name, token)).json()) as { events: RelayEvent[] }).events.map((e) => [
        e.sequence,
        e.sha256,
      ]);
    expect(await read('alice', alice.token)).toEqual([
      [1, digest(delivery(1))],
      [2, digest(delivery(3))],
    ]);
    expect(await read('bob', bob.token)).toEqual([[1, digest(delivery(2))]]);
  });
});
