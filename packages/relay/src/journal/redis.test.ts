import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, reachRedis } from '../../../core/test/servers.ts';
import { describeJournal, entry } from '../../test/journal-suite.js';
import { RedisJournal } from './redis.js';

const reachable = await reachRedis();
const client = reachable ? new Redis(REDIS_URL) : undefined;
const prefixes: string[] = [];
let current = '';

afterAll(async () => {
  if (!client) return;
  for (const prefix of prefixes) {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(...keys);
  }
  client.disconnect();
});

function nextPrefix(): string {
  current = `{payhook-relay-t${process.pid}-${prefixes.length}}:`;
  prefixes.push(current);
  return current;
}

describe.skipIf(!reachable)('RedisJournal', () => {
  describeJournal('RedisJournal', {
    open: async (setup) => new RedisJournal({ client: client!, prefix: nextPrefix(), ...setup }),
    reopen: async (setup) => new RedisJournal({ client: client!, prefix: current, ...setup }),
  });

  it('keeps the stream trimmed to maxEvents as it appends', async () => {
    const prefix = nextPrefix();
    const journal = new RedisJournal({ client: client!, prefix, retention: { maxEvents: 3 } });
    await journal.createChannel({ name: 'alice', tokenHash: 'h', createdAt: 1 });
    for (let n = 1; n <= 10; n++) await journal.append('alice', entry(n));
    expect(await client!.xlen(`${prefix}ch:alice:events`)).toBe(3);
  });

  it('refuses an append to a channel never created', async () => {
    const journal = new RedisJournal({ client: client!, prefix: nextPrefix() });
    await expect(journal.append('nobody', entry(1))).rejects.toThrow(/no channel/);
  });
});
