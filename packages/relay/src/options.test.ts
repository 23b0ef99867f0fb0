import { describe, expect, it } from 'vitest';
import { ADMIN, channel, deliver, delivery, relayOver, SIGNING_SECRET } from '../test/kit.js';
import { MemoryJournal } from './journal/memory.js';
import { createRelay } from './relay.js';

function refused(options: Record<string, unknown>): string {
  try {
    createRelay({ journal: new MemoryJournal(), signingSecret: SIGNING_SECRET, ...options } as never);
  } catch (error) {
    expect(error).toBeInstanceOf(TypeError);
    return (error as Error).message;
  }
  throw new Error('no TypeError');
}

describe('createRelay options', () => {
  it('refuses each bad option when the relay is built, naming it', () => {
    expect(refused({ journal: undefined })).toMatch(/journal is required/);
    expect(refused({ signingSecret: 'short' })).toMatch(
      /signingSecret must be a string of at least 32 characters/,
    );
    expect(refused({ adminToken: 'short' })).toMatch(/adminToken must be a string of at least 16 characters/);
    expect(refused({ publicUrl: 'ftp://relay' })).toMatch(/publicUrl must be an http\(s\) URL/);
    expect(refused({ basePath: 'relay' })).toMatch(/basePath must start with '\/'/);
    expect(refused({ maxBodyBytes: 0 })).toMatch(/maxBodyBytes must be a positive integer, not 0/);
    expect(refused({ heartbeatMs: 1.5 })).toMatch(/heartbeatMs must be a positive integer/);
    expect(() => new MemoryJournal({ retention: { maxEvents: 0 } })).toThrow(/retention.maxEvents/);
    expect(() => new MemoryJournal({ retention: { maxAgeMs: -1 } })).toThrow(/retention.maxAgeMs/);
  });

  it('serves under basePath, and nothing outside it', async () => {
    const relay = relayOver(new MemoryJournal(), { basePath: '/relay/' });
    const created = await relay.fetch(
      new Request('http://relay.test/relay/channels', {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}` },
        body: JSON.stringify({ name: 'alice' }),
      }),
    );
    expect(created.status).toBe(201);
    expect(((await created.json()) as { serverUrl: string }).serverUrl).toBe(
      'http://relay.test/relay/in/alice',
    );
    const answer = await relay.fetch(
      new Request('http://relay.test/relay/in/alice', { method: 'POST', body: delivery(1) }),
    );
    expect(answer.status).toBe(200);
    expect((await relay.fetch(new Request('http://relay.test/in/alice', { method: 'POST' }))).status).toBe(
      404,
    );
    expect((await relay.fetch(new Request('http://relay.test/relay/health'))).status).toBe(200);
  });

  it('answers 404 route.not_found to a path it does not serve, and logs a failed write without its details', async () => {
    const lines: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (line: string) => void lines.push(line) };
    const journal = new MemoryJournal();
    journal.append = () =>
      Promise.reject(Object.assign(new Error('token phr_secret leaked'), { code: 'EIO' }));
    const relay = relayOver(journal, { logger });
    await channel(relay, 'alice');
    expect((await relay.fetch(new Request('http://relay.test/out/alice/other'))).status).toBe(404);
    expect((await deliver(relay, 'alice', delivery(1))).status).toBe(503);
    expect(lines).toEqual(['[@payhook/relay] journal.unavailable: Error EIO']);
  });
});
